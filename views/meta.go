// Package views holds the admin web app's templ components and the view
// models they render. Components receive structs shaped for their screen,
// never database handles or lazily loaded records.
package views

import "strings"

// Roles as the views compare them (they mirror models.Role*; views never
// import models so the screens stay independent of persistence).
const (
	RoleAdmin  = "admin"
	RoleEditor = "editor"
	RoleViewer = "viewer"
)

// Nav keys name the sidebar entry a page belongs to.
const (
	NavDashboard  = "dashboard"
	NavEvents     = "events"
	NavSources    = "sources"
	NavAudit      = "audit"
	NavWorkspaces = "workspaces"
	NavTokens     = "tokens"
	NavUsers      = "users"
	NavAccount    = "account"
	NavContacts   = "contacts"
	NavDeadLetter = "dead-letters"
	NavStages     = "stages"
	NavSales      = "sales"
	NavQueues     = "queues"
	NavDest       = "destinations"
	NavGuards     = "guards"
)

// Assets are the content-hashed URLs of the embedded static files.
type Assets struct {
	CSS  string
	HTMX string
	App  string // leadgate's own script (select-all boxes); "" in view tests
}

// UserRef is the signed-in user as the chrome shows it.
type UserRef struct {
	ID    int64
	Email string
}

// WorkspaceRef names a workspace in links and the switcher.
type WorkspaceRef struct {
	Slug     string
	Name     string
	Archived bool
}

// Path returns the workspace's URL prefix, e.g. /w/default.
func (w WorkspaceRef) Path() string { return "/w/" + w.Slug }

// Flash is a one-time message shown at the top of the next page.
type Flash struct {
	Kind    string // "ok" | "error"
	Message string
}

// PageMeta is what every page of the signed-in app needs besides its own data.
type PageMeta struct {
	Title      string
	User       UserRef
	Role       string
	Workspace  WorkspaceRef // zero outside workspace pages
	Workspaces []WorkspaceRef
	CSRFToken  string
	Flash      *Flash
	Nav        string
	Assets     Assets
	// InstanceAdmin is the global admin role: users, tokens, queues and
	// workspace management. Role is the role in the current workspace.
	InstanceAdmin bool
	// Alarms are the workspace's alarms firing now; the dashboard shows all
	// of them as banners, every other page those that concern it.
	Alarms []AlarmBanner
	// DeadLettersOpen counts the workspace's open dead letters (nav badge).
	DeadLettersOpen int64
}

// AlarmBanner is one firing alarm as a banner shows it.
type AlarmBanner struct {
	Kind    string // signature_refused | silence | health | destination_paused | deadman
	Message string
	Action  string // what to do, in a sentence
	Href    string // the page that explains it
	Page    string // the Nav key of that page
	Since   string // "for 12 min"
}

// PageAlarms are the banners the chrome shows: those that concern the page.
// Pipeline health shows every alarm inside its refreshing panel instead.
func (m PageMeta) PageAlarms() []AlarmBanner {
	if m.Nav == NavDashboard {
		return nil
	}
	var out []AlarmBanner
	for _, a := range m.Alarms {
		if a.Page == m.Nav {
			out = append(out, a)
		}
	}
	return out
}

// CanEdit reports whether the role may change sources and configuration.
func (m PageMeta) CanEdit() bool { return m.Role == RoleAdmin || m.Role == RoleEditor }

// IsAdmin reports whether the role may manage users, tokens and workspaces.
func (m PageMeta) IsAdmin() bool { return m.Role == RoleAdmin }

// HasWorkspace reports whether the page belongs to a workspace.
func (m PageMeta) HasWorkspace() bool { return m.Workspace.Slug != "" }

// WorkspaceHome is where the logo and workspace links lead.
func (m PageMeta) WorkspaceHome() string {
	if m.Workspace.Slug != "" {
		return m.Workspace.Path() + "/"
	}
	return "/"
}

// FieldErrors maps a form field name to its message.
type FieldErrors map[string]string

// Has reports whether field has an error.
func (f FieldErrors) Has(field string) bool { return f[field] != "" }

// Any reports whether any field has an error.
func (f FieldErrors) Any() bool { return len(f) > 0 }

// initials returns up to two letters for the user avatar.
func initials(email string) string {
	name, _, _ := strings.Cut(email, "@")
	parts := strings.FieldsFunc(name, func(r rune) bool { return r == '.' || r == '_' || r == '-' || r == '+' })
	out := ""
	for _, p := range parts {
		if p != "" {
			out += strings.ToUpper(p[:1])
		}
		if len(out) == 2 {
			break
		}
	}
	if out == "" {
		return "?"
	}
	return out
}

// Package ui serves the admin web app's pages: sign-in and sessions, the login throttle, and every
// page under / and /w/{ws}. Operator actions go through package actions, as the API's do.
package ui

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"net/http"
	"time"

	"github.com/a-h/templ"
	"github.com/go-chi/chi/v5"
	"github.com/go-chi/chi/v5/middleware"
	"github.com/gorilla/csrf"
	"github.com/redis/go-redis/v9"

	"github.com/leadgate/leadgate/actions"
	"github.com/leadgate/leadgate/handlers"
	"github.com/leadgate/leadgate/ingest"
	"github.com/leadgate/leadgate/internal/principal"
	"github.com/leadgate/leadgate/internal/secretbox"
	"github.com/leadgate/leadgate/lifecycle/apply"
	"github.com/leadgate/leadgate/models"
	"github.com/leadgate/leadgate/views"
)

// Sessions is what the web app's handlers need from the session store;
// web.Sessions implements it over a signed, encrypted cookie.
type Sessions interface {
	// Login starts a fresh session for u, replacing whatever the cookie held.
	Login(w http.ResponseWriter, r *http.Request, u models.User) error
	// Logout ends the session, on the server too: a copy of the cookie is refused afterwards.
	Logout(w http.ResponseWriter, r *http.Request) error
	// EndOtherSessions ends every other sign-in of userID (reason: models.SessionEnded*) and says how many.
	EndOtherSessions(r *http.Request, userID int64, reason string) (int64, error)
	// Workspace is the slug of the workspace the user last opened ("" if none).
	Workspace(r *http.Request) string
	// SetWorkspace remembers the workspace the user opened.
	SetWorkspace(w http.ResponseWriter, r *http.Request, slug string) error
	// SetFlash queues a message for the next page.
	SetFlash(w http.ResponseWriter, r *http.Request, f views.Flash) error
	// TakeFlash returns and clears the queued message, or nil.
	TakeFlash(w http.ResponseWriter, r *http.Request) *views.Flash
}

// UI serves the admin web app's pages. Authentication, CSRF and role checks
// run before it (web/ui_auth.go); every handler here may assume a signed-in
// principal except the sign-in pages.
type UI struct {
	Store     *models.Store
	Box       *secretbox.Box
	Sources   *ingest.SourceCache // forgotten on edits so changes apply at once
	Sessions  Sessions
	Limiter   *LoginLimiter
	Assets    views.Assets
	PublicURL string
	Log       *slog.Logger
	Now       func() time.Time
	// Applier carries out the operator actions (replay, corrections, stage
	// changes, merges) exactly as the API does, auditing inside its transactions.
	Applier *apply.Applier
	// Redis is the asynq queues' Redis, read and repaired by the queues page
	// (nil: the page says the inspector is unavailable).
	Redis redis.UniversalClient
	// Guards carries out the guard settings' actions, as the API does (nil: the guard pages are not offered).
	Guards *actions.Guards
	// Destinations carries out the CRM sync's settings, as the API does (nil: the pages say the sync is
	// not configured).
	Destinations *actions.Destinations
	// EraseHooks erase a contact from tables owned by other packages, as the API's do.
	EraseHooks []func(ctx context.Context, st *models.Store, c models.Contact) error
}

func (u *UI) now() time.Time {
	if u.Now != nil {
		return u.Now()
	}
	return time.Now()
}

// LoadWorkspace resolves {ws} for the routes below it, gives the principal
// its role in that workspace (handlers/workspace_access.go), remembers it as the
// user's current workspace, and answers 404 itself for unknown or archived
// ones and 403 for a workspace the user is restricted from.
func (u *UI) LoadWorkspace(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ws, err := u.Store.WorkspaceBySlug(r.Context(), chi.URLParam(r, "ws"))
		if errors.Is(err, models.ErrNotFound) || (err == nil && ws.ArchivedAt != nil) {
			// A restricted user sees the same page for a slug that does not exist as for one it may
			// not open, so it cannot probe which workspaces exist.
			if restricted, rerr := handlers.IsRestricted(r, u.Store); rerr == nil && restricted {
				u.WorkspaceForbidden(w, r)
				return
			}
			u.NotFound(w, r)
			return
		}
		if err != nil {
			u.serverError(w, r, err)
			return
		}
		ctx, allowed, err := handlers.EnterWorkspace(r.Context(), u.Store, ws)
		if err != nil {
			u.serverError(w, r, err)
			return
		}
		if !allowed {
			u.WorkspaceForbidden(w, r)
			return
		}
		r = r.WithContext(ctx)
		if u.Sessions.Workspace(r) != ws.Slug {
			if err := u.Sessions.SetWorkspace(w, r, ws.Slug); err != nil {
				u.Log.Warn("remember workspace", "err", err)
			}
		}
		next.ServeHTTP(w, r.WithContext(handlers.WithWorkspace(r.Context(), ws)))
	})
}

// meta builds the chrome every signed-in page needs.
func (u *UI) meta(w http.ResponseWriter, r *http.Request, nav, title string) (views.PageMeta, error) {
	p, _ := principal.From(r.Context())
	m := views.PageMeta{
		Title: title, Nav: nav, Role: p.Role, InstanceAdmin: handlers.IsGlobalAdmin(r), Assets: u.Assets,
		User:      views.UserRef{ID: p.ID, Email: p.Name},
		CSRFToken: csrf.Token(r),
	}
	if ws := handlers.WorkspaceFrom(r); ws.ID != 0 {
		m.Workspace = wsRef(ws)
		if err := u.loadAlarmChrome(r, ws, &m); err != nil {
			return m, err
		}
	} else if slug := u.Sessions.Workspace(r); slug != "" {
		// Instance pages keep the sidebar pointing at the last workspace.
		if ws, err := u.Store.WorkspaceBySlug(r.Context(), slug); err == nil && ws.ArchivedAt == nil {
			if _, ok, err := handlers.EnterWorkspace(r.Context(), u.Store, ws); err == nil && ok {
				m.Workspace = wsRef(ws)
			}
		}
	}
	// The switcher lists only the workspaces this user may open.
	list, err := u.Store.WorkspaceList(r.Context(), false)
	if err == nil {
		list, err = handlers.AllowedWorkspaces(r.Context(), u.Store, list)
	}
	if err != nil {
		return m, err
	}
	for _, ws := range list {
		m.Workspaces = append(m.Workspaces, wsRef(ws))
	}
	m.Flash = u.Sessions.TakeFlash(w, r)
	return m, nil
}

func wsRef(ws models.Workspace) views.WorkspaceRef {
	return views.WorkspaceRef{Slug: ws.Slug, Name: ws.Name, Archived: ws.ArchivedAt != nil}
}

// page renders a full page built from meta; a failure to build the chrome is a 500.
func (u *UI) page(w http.ResponseWriter, r *http.Request, status int, nav, title string, body func(views.PageMeta) templ.Component) {
	m, err := u.meta(w, r, nav, title)
	if err != nil {
		u.serverError(w, r, err)
		return
	}
	u.render(w, r, status, body(m))
}

// render writes c buffered, so a failed render becomes a clean 500 instead
// of half a page. UI responses carry CSRF tokens and one-time secrets: never cache.
func (u *UI) render(w http.ResponseWriter, r *http.Request, status int, c templ.Component) {
	var buf bytes.Buffer
	if err := c.Render(r.Context(), &buf); err != nil {
		u.Log.Error("render", "path", r.URL.Path, "request_id", middleware.GetReqID(r.Context()), "err", err)
		http.Error(w, "internal error", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	_, _ = w.Write(buf.Bytes())
}

// redirect answers 303 for plain forms and HX-Redirect for htmx requests.
func redirect(w http.ResponseWriter, r *http.Request, url string) {
	if r.Header.Get("HX-Request") == "true" {
		w.Header().Set("HX-Redirect", url)
		w.WriteHeader(http.StatusNoContent)
		return
	}
	http.Redirect(w, r, url, http.StatusSeeOther)
}

// flashRedirect queues a message and redirects.
func (u *UI) flashRedirect(w http.ResponseWriter, r *http.Request, url, kind, msg string) {
	if err := u.Sessions.SetFlash(w, r, views.Flash{Kind: kind, Message: msg}); err != nil {
		u.Log.Warn("flash", "err", err)
	}
	redirect(w, r, url)
}

// isHTMX reports whether htmx asked for a fragment.
func isHTMX(r *http.Request) bool {
	return r.Header.Get("HX-Request") == "true" && r.Header.Get("HX-Boosted") != "true"
}

// Forbidden answers the 403 page: the role may not do this.
func (u *UI) Forbidden(w http.ResponseWriter, r *http.Request) {
	u.errorPage(w, r, views.ErrorView{Status: http.StatusForbidden, Title: "You can't do that",
		Message: "Your role does not allow this action. Ask an admin if you need it."})
}

// WorkspaceForbidden answers the 403 page for a workspace the user's
// memberships do not include (it is not 404: the user may ask for access).
func (u *UI) WorkspaceForbidden(w http.ResponseWriter, r *http.Request) {
	u.errorPage(w, r, views.ErrorView{Status: http.StatusForbidden, Title: "No access to this workspace",
		Message: "Your account is limited to some workspaces and this is not one of them. Pick one of yours from the workspace switcher, or ask an admin for access."})
}

// NotFound answers the 404 page.
func (u *UI) NotFound(w http.ResponseWriter, r *http.Request) {
	u.errorPage(w, r, views.ErrorView{Status: http.StatusNotFound, Title: "Not found",
		Message: "This page does not exist, or what it showed was deleted or archived."})
}

// CSRFFailed answers a state-changing request whose CSRF token or origin did
// not check out. It runs before authentication, so it uses the bare layout.
func (u *UI) CSRFFailed(w http.ResponseWriter, r *http.Request) {
	u.Log.Info("csrf rejected", "path", r.URL.Path, "reason", csrf.FailureReason(r), "request_id", middleware.GetReqID(r.Context()))
	u.render(w, r, http.StatusForbidden, views.BareErrorPage(u.Assets, views.ErrorView{Status: http.StatusForbidden,
		Title: "This form has expired", Message: "For your safety the request was not carried out. Go back, reload the page and try again."}))
}

func (u *UI) errorPage(w http.ResponseWriter, r *http.Request, v views.ErrorView) {
	if _, ok := principal.From(r.Context()); !ok {
		u.render(w, r, v.Status, views.BareErrorPage(u.Assets, v))
		return
	}
	m, err := u.meta(w, r, "", v.Title)
	if err != nil {
		u.render(w, r, v.Status, views.BareErrorPage(u.Assets, v))
		return
	}
	u.render(w, r, v.Status, views.ErrorPage(m, v))
}

// serverError logs err once and shows a generic page with the request id.
func (u *UI) serverError(w http.ResponseWriter, r *http.Request, err error) {
	id := middleware.GetReqID(r.Context())
	if !errors.Is(err, context.Canceled) {
		u.Log.Error("ui request failed", "method", r.Method, "path", r.URL.Path, "request_id", id, "err", err)
	}
	u.render(w, r, http.StatusInternalServerError, views.BareErrorPage(u.Assets, views.ErrorView{Status: http.StatusInternalServerError,
		Title: "Something went wrong", Message: "The error was logged (request " + id + "). Try again in a moment."}))
}

// audit records a UI action inside tx; actor is the signed-in user.
func auditUI(ctx context.Context, tx *models.Store, r *http.Request, wsID int64, action, subjectType, subjectID string, before, after any) error {
	return tx.AuditRecord(ctx, models.Audit{WorkspaceID: wsID, Actor: handlers.Actor(r), Action: action,
		SubjectType: subjectType, SubjectID: subjectID, Before: before, After: after})
}

// ServerErrorPage answers the generic 500 page (middleware failures).
func (u *UI) ServerErrorPage(w http.ResponseWriter, r *http.Request) {
	u.serverError(w, r, errors.New("ui: middleware failure"))
}

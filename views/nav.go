package views

import (
	"encoding/json"
)

// htmxConfig keeps htmx inside the strict CSP: no injected <style> for
// indicators, no eval for hx-on or js: expressions, no inline <script> execution.
// favicon is the brand mark as an inline SVG (img-src allows data: URLs), so
// browsers stop asking for /favicon.ico.
const favicon = "data:image/svg+xml,%3Csvg xmlns='http://www.w3.org/2000/svg' viewBox='0 0 32 32'%3E%3Cdefs%3E%3ClinearGradient id='g' x1='0' y1='0' x2='1' y2='1'%3E%3Cstop offset='0' stop-color='%236366f1'/%3E%3Cstop offset='1' stop-color='%2322d3ee'/%3E%3C/linearGradient%3E%3C/defs%3E%3Crect width='32' height='32' rx='8' fill='url(%23g)'/%3E%3Ctext x='16' y='21' font-family='Arial' font-size='14' font-weight='800' fill='white' text-anchor='middle'%3Elg%3C/text%3E%3C/svg%3E"

const htmxConfig = `{"includeIndicatorStyles":false,"allowEval":false,"allowScriptTags":false}`

// csrfHeaders is the hx-headers JSON that makes every htmx request carry the token.
func csrfHeaders(token string) string {
	b, _ := json.Marshal(map[string]string{"X-CSRF-Token": token})
	return string(b)
}

type navItem struct {
	Key, Label, Href string
	// Count is shown as a badge beside the label when above zero; CountLabel reads it out.
	Count      int64
	CountLabel string
}

type navGroup struct {
	Label string
	Items []navItem
}

// navGroups lists the sidebar entries the role may open.
func navGroups(m PageMeta) []navGroup {
	var groups []navGroup
	if m.HasWorkspace() {
		p := m.Workspace.Path()
		groups = append(groups, navGroup{Items: []navItem{
			{Key: NavDashboard, Label: "Pipeline health", Href: p + "/", Count: int64(len(m.Alarms)), CountLabel: "alarms firing"},
			{Key: NavSales, Label: "Sales", Href: p + "/sales"},
			{Key: NavContacts, Label: "Contacts", Href: p + "/contacts"},
			{Key: NavEvents, Label: "Events", Href: p + "/events"},
			{Key: NavDeadLetter, Label: "Dead letters", Href: p + "/dead-letters", Count: m.DeadLettersOpen, CountLabel: "open"},
		}}, navGroup{Label: "Configuration", Items: []navItem{
			{Key: NavSources, Label: "Sources", Href: p + "/sources"},
			{Key: NavStages, Label: "Stage rules", Href: p + "/stages"},
			{Key: NavDest, Label: "Destinations", Href: p + "/destinations"},
			{Key: NavGuards, Label: "Guards & alerts", Href: p + "/guards"},
			{Key: NavAudit, Label: "Audit history", Href: p + "/audit"},
		}})
	}
	admin := []navItem{{Key: NavWorkspaces, Label: "Workspaces", Href: "/workspaces"}}
	if m.InstanceAdmin {
		admin = append(admin, navItem{Key: NavUsers, Label: "Users", Href: "/users"}, navItem{Key: NavTokens, Label: "API tokens", Href: "/tokens"},
			navItem{Key: NavQueues, Label: "Queues", Href: "/queues"})
	}
	return append(groups, navGroup{Label: "Settings", Items: admin})
}

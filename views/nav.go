package views

import (
	"encoding/json"
)

// htmxConfig keeps htmx inside the strict CSP: no injected <style> for
// indicators, no eval for hx-on or js: expressions, no inline <script> execution.
const htmxConfig = `{"includeIndicatorStyles":false,"allowEval":false,"allowScriptTags":false}`

// csrfHeaders is the hx-headers JSON that makes every htmx request carry the token.
func csrfHeaders(token string) string {
	b, _ := json.Marshal(map[string]string{"X-CSRF-Token": token})
	return string(b)
}

type navItem struct {
	Key, Label, Href string
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
			{NavDashboard, "Pipeline health", p + "/"},
			{NavSales, "Sales", p + "/sales"},
			{NavContacts, "Contacts", p + "/contacts"},
			{NavEvents, "Events", p + "/events"},
			{NavDeadLetter, "Dead letters", p + "/dead-letters"},
		}}, navGroup{Label: "Configuration", Items: []navItem{
			{NavSources, "Sources", p + "/sources"},
			{NavStages, "Stage rules", p + "/stages"},
			{NavDest, "Destinations", p + "/destinations"},
			{NavGuards, "Guards & alerts", p + "/guards"},
			{NavAudit, "Audit history", p + "/audit"},
		}})
	}
	admin := []navItem{{NavWorkspaces, "Workspaces", "/workspaces"}}
	if m.IsAdmin() {
		admin = append(admin, navItem{NavUsers, "Users", "/users"}, navItem{NavTokens, "API tokens", "/tokens"}, navItem{NavQueues, "Queues", "/queues"})
	}
	return append(groups, navGroup{Label: "Settings", Items: admin})
}

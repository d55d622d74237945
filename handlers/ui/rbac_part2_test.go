package ui_test

import (
	"context"
	"net/http"
	"net/url"
	"strconv"
	"testing"

	"github.com/leadgate/leadgate/handlers/handlerstest"
	"github.com/leadgate/leadgate/models"
)

// pipelineMutations lists the actions of the contacts, dead-letter, rules and
// queue pages with the least role each needs.
func pipelineMutations(contact string, dl int64, src int64) []uiMutation {
	cp := "/w/default/contacts/" + contact
	dp := "/w/default/dead-letters/" + strconv.FormatInt(dl, 10)
	return []uiMutation{
		{"POST", cp + "/correct", url.Values{"field": {"company"}, "value": {"X"}}, models.RoleEditor},
		{"POST", cp + "/stage", url.Values{"stage": {"Closed"}, "reason": {"r"}}, models.RoleEditor},
		{"POST", cp + "/merge", url.Values{"merge_with": {"x@example.com"}}, models.RoleEditor},
		{"GET", cp + "/export", nil, models.RoleEditor},
		{"POST", cp + "/erase", url.Values{"confirm": {"erase"}}, models.RoleAdmin},
		{"POST", dp + "/replay", url.Values{"mode": {"apply_as_is"}}, models.RoleEditor},
		{"POST", dp + "/discard", nil, models.RoleEditor},
		{"POST", "/w/default/dead-letters/bulk", url.Values{"action": {"discard"}, "id": {strconv.FormatInt(dl, 10)}}, models.RoleEditor},
		{"POST", "/w/default/stages", defaultRulesForm(), models.RoleEditor},
		{"POST", "/w/default/stages/draft", with(defaultRulesForm(), "op", "up:1"), models.RoleEditor},
		{"POST", "/w/default/stages/dry-run", defaultRulesForm(), models.RoleEditor},
		{"POST", "/w/default/stages/sources/" + strconv.FormatInt(src, 10), url.Values{"stage_event": {"a"}, "stage_name": {"SQL"}}, models.RoleEditor},
		{"POST", "/w/default/destinations", url.Values{"name": {"S"}, "kind": {"sandbox"}}, models.RoleEditor},
		{"POST", "/w/default/destinations/1", url.Values{"name": {"S"}}, models.RoleEditor},
		{"POST", "/w/default/destinations/1/paused", url.Values{"paused": {"true"}}, models.RoleEditor},
		{"POST", "/w/default/destinations/1/test", nil, models.RoleEditor},
		{"POST", "/w/default/guards/loop", url.Values{"breaker_max": {"3"}}, models.RoleEditor},
		{"POST", "/w/default/guards/breakers/" + contact + "/reset", nil, models.RoleEditor},
		{"POST", "/w/default/guards/filters/" + strconv.FormatInt(src, 10), url.Values{"rule_expr": {"true"}}, models.RoleEditor},
		{"POST", "/w/default/guards/silence", url.Values{"metric": {"apply"}}, models.RoleEditor},
		{"POST", "/w/default/guards/silence/1/delete", nil, models.RoleEditor},
		{"POST", "/w/default/guards/channels", url.Values{"name": {"x"}, "kind": {"webhook"}}, models.RoleEditor},
		{"POST", "/w/default/guards/channels/1/test", nil, models.RoleEditor},
		{"POST", "/w/default/guards/channels/1/delete", nil, models.RoleEditor},
		{"GET", "/queues", nil, models.RoleAdmin},
		{"POST", "/queues/maintenance/archived/x/run", nil, models.RoleAdmin},
		{"POST", "/queues/maintenance/archived/x/delete", nil, models.RoleAdmin},
		{"POST", "/queues/maintenance/archived/run-all", nil, models.RoleAdmin},
		{"POST", "/queues/maintenance/archived/delete-all", nil, models.RoleAdmin},
	}
}

func TestUIPipelineRolesCSRFAndSignIn(t *testing.T) {
	t.Parallel()
	e := handlerstest.NewEnv(t)
	ctx := context.Background()
	src := e.SeedSource("Web form")
	d := e.Conflict(src, "ann@example.com")
	contact := e.ContactByEmail("ann@example.com")
	muts := pipelineMutations(contact.ID, d.ID, src.ID)
	before := len(e.AuditActions())

	for _, role := range []string{models.RoleViewer, models.RoleEditor} {
		c := e.SignedIn(role)
		c.Get("/w/default/")
		for _, m := range muts {
			if models.RoleAtLeast(role, m.need) {
				continue
			}
			var res handlerstest.Response
			if m.method == "GET" {
				res = c.Get(m.path)
			} else {
				res = c.Post(m.path, m.form)
			}
			handlerstest.ExpectStatus(t, role+" "+m.method+" "+m.path, res, http.StatusForbidden)
			handlerstest.ExpectBody(t, role+" "+m.method+" "+m.path, res, "Your role does not allow this action")
		}
	}
	if after := len(e.AuditActions()); after != before {
		t.Fatalf("forbidden requests changed something: audit grew from %d to %d entries", before, after)
	}
	if got, _ := e.Store.DeadLetterGet(ctx, e.WS.ID, d.ID); got.Status != models.DeadLetterOpen {
		t.Fatalf("forbidden requests resolved the dead letter: %+v", got)
	}

	// Every page a viewer may read opens for a viewer.
	viewer := e.SignedIn(models.RoleViewer)
	reads := []string{"/w/default/contacts", "/w/default/contacts/" + contact.ID, "/w/default/dead-letters",
		"/w/default/dead-letters/" + strconv.FormatInt(d.ID, 10), "/w/default/stages", "/w/default/sales",
		"/w/default/sales/export.csv?what=conversion", "/w/default/destinations", "/w/default/guards"}
	for _, p := range reads {
		handlerstest.ExpectStatus(t, "viewer "+p, viewer.Get(p), http.StatusOK)
	}
	// The viewer's rules editor is read-only.
	handlerstest.ExpectBody(t, "viewer editor", viewer.Get("/w/default/stages"), "You can read the rules", `<fieldset class="bare" disabled>`)

	// Anonymous visitors go to the sign-in page, htmx requests included.
	anon := e.Client()
	for _, p := range append(reads, "/queues") {
		handlerstest.ExpectRedirect(t, "anonymous "+p, anon.Get(p), "/login")
	}
	if res := anon.Get("/w/default/dead-letters", "HX-Request", "true"); res.Header.Get("HX-Redirect") != "/login" {
		t.Fatalf("anonymous htmx request: %d %v", res.Status, res.Header)
	}

	// Without the CSRF token even an admin's mutation is refused.
	before = len(e.AuditActions()) // the viewer's CSV export was audited
	admin := e.SignedIn(models.RoleAdmin)
	admin.Get("/w/default/")
	for _, m := range muts {
		if m.method != "POST" {
			continue
		}
		res := admin.PostRaw(m.path, m.form)
		handlerstest.ExpectStatus(t, "no csrf "+m.path, res, http.StatusForbidden)
		handlerstest.ExpectBody(t, "no csrf "+m.path, res, "This form has expired")
	}
	if after := len(e.AuditActions()); after != before {
		t.Fatalf("requests without a CSRF token changed something: audit grew by %d", after-before)
	}
}

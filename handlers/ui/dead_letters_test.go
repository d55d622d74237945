package ui_test

import (
	"context"
	"html"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"

	"github.com/leadgate/leadgate/handlers/handlerstest"
	"github.com/leadgate/leadgate/models"
)

func TestUIDeadLetterListAndFilters(t *testing.T) {
	t.Parallel()
	e := handlerstest.NewEnv(t)
	src := e.SeedSource("Web form")
	other := e.SeedSource("Voice agent")
	c := e.SignedIn(models.RoleViewer)
	handlerstest.ExpectBody(t, "empty queue", c.Get("/w/default/dead-letters"), `data-testid="empty-state"`, "No open dead letters")

	d := e.Conflict(src, "ann@example.com")
	e.Conflict(other, "bo@example.com")
	list := c.Get("/w/default/dead-letters")
	handlerstest.ExpectBody(t, "list", list, `data-testid="dead-letters-table"`, "state_conflict", "Web form", "Voice agent")
	if strings.Contains(list.Body, `name="action" value="replay"`) {
		t.Fatal("viewer sees the bulk actions")
	}
	bySource := c.Get("/w/default/dead-letters?source=" + strconv.FormatInt(src.ID, 10))
	handlerstest.ExpectBody(t, "by source", bySource, "Web form")
	if strings.Contains(bySource.Body, "<td>Voice agent</td>") {
		t.Fatal("source filter shows the other source's dead letter")
	}
	handlerstest.ExpectBody(t, "by kind", c.Get("/w/default/dead-letters?kind=missing_field"), "Nothing matches")
	handlerstest.ExpectBody(t, "by age", c.Get("/w/default/dead-letters?age=7d"), "Nothing matches")
	handlerstest.ExpectBody(t, "resolved", c.Get("/w/default/dead-letters?status=replayed"), "Nothing matches")

	page := c.Get("/w/default/dead-letters/" + strconv.FormatInt(d.ID, 10))
	handlerstest.ExpectStatus(t, "detail", page, http.StatusOK)
	handlerstest.ExpectBody(t, "detail", page, `data-testid="dead-letter-payload"`, "&#34;target_stage&#34;: &#34;Discovered&#34;", html.EscapeString(d.Reason),
		"Open the contact's timeline")
	if strings.Contains(page.Body, `data-testid="replay-form"`) {
		t.Fatal("viewer sees the replay form")
	}
	handlerstest.ExpectStatus(t, "unknown", c.Get("/w/default/dead-letters/999999"), http.StatusNotFound)
}

func TestUIDeadLetterReplayChoices(t *testing.T) {
	t.Parallel()
	e := handlerstest.NewEnv(t)
	ctx := context.Background()
	src := e.SeedSource("Web form")
	c := e.SignedIn(models.RoleEditor)

	d := e.Conflict(src, "ann@example.com")
	path := "/w/default/dead-letters/" + strconv.FormatInt(d.ID, 10)
	handlerstest.ExpectBody(t, "editor detail", c.Get(path), `data-testid="replay-form"`, `value="force_stage"`, `data-testid="discard-form"`)

	before := len(e.AuditActions())
	res := c.Post(path+"/replay", url.Values{"mode": {"force_stage"}})
	handlerstest.ExpectStatus(t, "force without a stage", res, http.StatusUnprocessableEntity)
	handlerstest.ExpectBody(t, "force without a stage", res, `id="err-stage"`, "Pick the stage to force")
	res = c.Post(path+"/replay", url.Values{"mode": {"force_stage"}, "stage": {"Mars"}})
	handlerstest.ExpectStatus(t, "force an unknown stage", res, http.StatusUnprocessableEntity)
	handlerstest.ExpectBody(t, "force an unknown stage", res, `id="err-stage"`, "unknown stage")
	handlerstest.ExpectStatus(t, "unknown mode", c.Post(path+"/replay", url.Values{"mode": {"yolo"}}), http.StatusUnprocessableEntity)
	if n := len(e.AuditActions()); n != before {
		t.Fatalf("rejected replays wrote %d audit entries", n-before)
	}

	res = c.Post(path+"/replay", url.Values{"mode": {"force_stage"}, "stage": {"Closed"}})
	handlerstest.ExpectRedirect(t, "force Closed", res, path)
	handlerstest.RequireAudit(t, e, "dead_letter.replay")
	if got := e.ContactByEmail("ann@example.com"); got.Stage != "Closed" {
		t.Fatalf("stage after a forced replay: %q", got.Stage)
	}
	handlerstest.ExpectBody(t, "resolved detail", c.Get(path), "status-replayed", "force_stage")
	res = c.Post(path+"/replay", url.Values{"mode": {"apply_as_is"}})
	handlerstest.ExpectRedirect(t, "replay twice", res, path)
	handlerstest.ExpectBody(t, "replay twice", c.Get(path), "already resolved")

	keep := e.Conflict(src, "kim@example.com")
	kp := "/w/default/dead-letters/" + strconv.FormatInt(keep.ID, 10)
	handlerstest.ExpectRedirect(t, "fields only", c.Post(kp+"/replay", url.Values{"mode": {"apply_fields_keep_stage"}}), kp)
	handlerstest.RequireAudit(t, e, "dead_letter.replay")
	if got := e.ContactByEmail("kim@example.com"); got.Stage != "SQL" {
		t.Fatalf("fields-only replay moved the stage to %q", got.Stage)
	}

	gone := e.Conflict(src, "lou@example.com")
	gp := "/w/default/dead-letters/" + strconv.FormatInt(gone.ID, 10)
	handlerstest.ExpectRedirect(t, "discard", c.Post(gp+"/discard", url.Values{"note": {"test lead"}}), "/w/default/dead-letters")
	handlerstest.RequireAudit(t, e, "dead_letter.discard")
	if got, _ := e.Store.DeadLetterGet(ctx, e.WS.ID, gone.ID); got.Status != models.DeadLetterDiscarded || got.Resolution == nil || *got.Resolution != "test lead" {
		t.Fatalf("discarded dead letter: %+v", got)
	}
}

func TestUIDeadLetterBulkActions(t *testing.T) {
	t.Parallel()
	e := handlerstest.NewEnv(t)
	ctx := context.Background()
	src := e.SeedSource("Web form")
	c := e.SignedIn(models.RoleEditor)
	a, b, d := e.Conflict(src, "a@example.com"), e.Conflict(src, "b@example.com"), e.Conflict(src, "d@example.com")
	handlerstest.ExpectBody(t, "bulk bar", c.Get("/w/default/dead-letters"), `name="action" value="replay"`, `name="id" value="`+strconv.FormatInt(a.ID, 10)+`"`)

	handlerstest.ExpectRedirect(t, "nothing selected", c.Post("/w/default/dead-letters/bulk", url.Values{"action": {"discard"}}), "/w/default/dead-letters")
	handlerstest.ExpectBody(t, "nothing selected", c.Get("/w/default/dead-letters"), "Select at least one dead letter first")

	id := func(d models.DeadLetter) string { return strconv.FormatInt(d.ID, 10) }
	res := c.Post("/w/default/dead-letters/bulk", url.Values{"action": {"discard"}, "id": {id(a), id(b)}})
	handlerstest.ExpectRedirect(t, "bulk discard", res, "/w/default/dead-letters")
	handlerstest.ExpectBody(t, "bulk discard flash", c.Get("/w/default/dead-letters"), "Discarded 2 dead letter(s).")
	actions := e.AuditActions()
	if actions[0] != "dead_letter.discard" || actions[1] != "dead_letter.discard" {
		t.Fatalf("bulk discard audit: %v", actions[:3])
	}

	// Replaying as-is under unchanged rules quarantines the event again: the
	// old dead letter closes and a new one opens, and the flash says so.
	res = c.Post("/w/default/dead-letters/bulk", url.Values{"action": {"replay"}, "id": {id(d), id(a)}})
	handlerstest.ExpectRedirect(t, "bulk replay", res, "/w/default/dead-letters")
	flash := c.Get("/w/default/dead-letters")
	handlerstest.ExpectBody(t, "bulk replay flash", flash, "Replayed 1 dead letter(s).", "#"+id(a)+": already resolved")
	handlerstest.RequireAudit(t, e, "dead_letter.replay")
	if got, _ := e.Store.DeadLetterGet(ctx, e.WS.ID, d.ID); got.Status != models.DeadLetterReplayed {
		t.Fatalf("bulk-replayed dead letter: %+v", got)
	}
}

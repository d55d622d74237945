package handlers_test

import (
	"context"
	"html"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"

	"github.com/leadgate/leadgate/models"
)

func TestUIDeadLetterListAndFilters(t *testing.T) {
	t.Parallel()
	e := newUIEnv(t)
	src := e.seedSource("Web form")
	other := e.seedSource("Voice agent")
	c := e.signedIn(models.RoleViewer)
	expectBody(t, "empty queue", c.get("/w/default/dead-letters"), `data-testid="empty-state"`, "No open dead letters")

	d := e.conflict(src, "ann@example.com")
	e.conflict(other, "bo@example.com")
	list := c.get("/w/default/dead-letters")
	expectBody(t, "list", list, `data-testid="dead-letters-table"`, "state_conflict", "Web form", "Voice agent")
	if strings.Contains(list.body, `name="action" value="replay"`) {
		t.Fatal("viewer sees the bulk actions")
	}
	bySource := c.get("/w/default/dead-letters?source=" + strconv.FormatInt(src.ID, 10))
	expectBody(t, "by source", bySource, "Web form")
	if strings.Contains(bySource.body, "<td>Voice agent</td>") {
		t.Fatal("source filter shows the other source's dead letter")
	}
	expectBody(t, "by kind", c.get("/w/default/dead-letters?kind=missing_field"), "Nothing matches")
	expectBody(t, "by age", c.get("/w/default/dead-letters?age=7d"), "Nothing matches")
	expectBody(t, "resolved", c.get("/w/default/dead-letters?status=replayed"), "Nothing matches")

	page := c.get("/w/default/dead-letters/" + strconv.FormatInt(d.ID, 10))
	expectStatus(t, "detail", page, http.StatusOK)
	expectBody(t, "detail", page, `data-testid="dead-letter-payload"`, "&#34;target_stage&#34;: &#34;Discovered&#34;", html.EscapeString(d.Reason),
		"Open the contact's timeline")
	if strings.Contains(page.body, `data-testid="replay-form"`) {
		t.Fatal("viewer sees the replay form")
	}
	expectStatus(t, "unknown", c.get("/w/default/dead-letters/999999"), http.StatusNotFound)
}

func TestUIDeadLetterReplayChoices(t *testing.T) {
	t.Parallel()
	e := newUIEnv(t)
	ctx := context.Background()
	src := e.seedSource("Web form")
	c := e.signedIn(models.RoleEditor)

	d := e.conflict(src, "ann@example.com")
	path := "/w/default/dead-letters/" + strconv.FormatInt(d.ID, 10)
	expectBody(t, "editor detail", c.get(path), `data-testid="replay-form"`, `value="force_stage"`, `data-testid="discard-form"`)

	before := len(e.auditActions())
	res := c.post(path+"/replay", url.Values{"mode": {"force_stage"}})
	expectStatus(t, "force without a stage", res, http.StatusUnprocessableEntity)
	expectBody(t, "force without a stage", res, `id="err-stage"`, "Pick the stage to force")
	res = c.post(path+"/replay", url.Values{"mode": {"force_stage"}, "stage": {"Mars"}})
	expectStatus(t, "force an unknown stage", res, http.StatusUnprocessableEntity)
	expectBody(t, "force an unknown stage", res, `id="err-stage"`, "unknown stage")
	expectStatus(t, "unknown mode", c.post(path+"/replay", url.Values{"mode": {"yolo"}}), http.StatusUnprocessableEntity)
	if n := len(e.auditActions()); n != before {
		t.Fatalf("rejected replays wrote %d audit entries", n-before)
	}

	res = c.post(path+"/replay", url.Values{"mode": {"force_stage"}, "stage": {"Closed"}})
	expectRedirect(t, "force Closed", res, path)
	requireAudit(t, e, "dead_letter.replay")
	if got := e.contactByEmail("ann@example.com"); got.Stage != "Closed" {
		t.Fatalf("stage after a forced replay: %q", got.Stage)
	}
	expectBody(t, "resolved detail", c.get(path), "status-replayed", "force_stage")
	res = c.post(path+"/replay", url.Values{"mode": {"apply_as_is"}})
	expectRedirect(t, "replay twice", res, path)
	expectBody(t, "replay twice", c.get(path), "already resolved")

	keep := e.conflict(src, "kim@example.com")
	kp := "/w/default/dead-letters/" + strconv.FormatInt(keep.ID, 10)
	expectRedirect(t, "fields only", c.post(kp+"/replay", url.Values{"mode": {"apply_fields_keep_stage"}}), kp)
	requireAudit(t, e, "dead_letter.replay")
	if got := e.contactByEmail("kim@example.com"); got.Stage != "SQL" {
		t.Fatalf("fields-only replay moved the stage to %q", got.Stage)
	}

	gone := e.conflict(src, "lou@example.com")
	gp := "/w/default/dead-letters/" + strconv.FormatInt(gone.ID, 10)
	expectRedirect(t, "discard", c.post(gp+"/discard", url.Values{"note": {"test lead"}}), "/w/default/dead-letters")
	requireAudit(t, e, "dead_letter.discard")
	if got, _ := e.store.DeadLetterGet(ctx, e.ws.ID, gone.ID); got.Status != models.DeadLetterDiscarded || got.Resolution == nil || *got.Resolution != "test lead" {
		t.Fatalf("discarded dead letter: %+v", got)
	}
}

func TestUIDeadLetterBulkActions(t *testing.T) {
	t.Parallel()
	e := newUIEnv(t)
	ctx := context.Background()
	src := e.seedSource("Web form")
	c := e.signedIn(models.RoleEditor)
	a, b, d := e.conflict(src, "a@example.com"), e.conflict(src, "b@example.com"), e.conflict(src, "d@example.com")
	expectBody(t, "bulk bar", c.get("/w/default/dead-letters"), `name="action" value="replay"`, `name="id" value="`+strconv.FormatInt(a.ID, 10)+`"`)

	expectRedirect(t, "nothing selected", c.post("/w/default/dead-letters/bulk", url.Values{"action": {"discard"}}), "/w/default/dead-letters")
	expectBody(t, "nothing selected", c.get("/w/default/dead-letters"), "Select at least one dead letter first")

	id := func(d models.DeadLetter) string { return strconv.FormatInt(d.ID, 10) }
	res := c.post("/w/default/dead-letters/bulk", url.Values{"action": {"discard"}, "id": {id(a), id(b)}})
	expectRedirect(t, "bulk discard", res, "/w/default/dead-letters")
	expectBody(t, "bulk discard flash", c.get("/w/default/dead-letters"), "Discarded 2 dead letter(s).")
	actions := e.auditActions()
	if actions[0] != "dead_letter.discard" || actions[1] != "dead_letter.discard" {
		t.Fatalf("bulk discard audit: %v", actions[:3])
	}

	// Replaying as-is under unchanged rules quarantines the event again: the
	// old dead letter closes and a new one opens, and the flash says so.
	res = c.post("/w/default/dead-letters/bulk", url.Values{"action": {"replay"}, "id": {id(d), id(a)}})
	expectRedirect(t, "bulk replay", res, "/w/default/dead-letters")
	flash := c.get("/w/default/dead-letters")
	expectBody(t, "bulk replay flash", flash, "Replayed 1 dead letter(s).", "#"+id(a)+": already resolved")
	requireAudit(t, e, "dead_letter.replay")
	if got, _ := e.store.DeadLetterGet(ctx, e.ws.ID, d.ID); got.Status != models.DeadLetterReplayed {
		t.Fatalf("bulk-replayed dead letter: %+v", got)
	}
}

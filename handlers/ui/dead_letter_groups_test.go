package ui_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"

	"github.com/leadgate/leadgate/handlers/handlerstest"
	"github.com/leadgate/leadgate/models"
)

func TestUIDeadLetterLoopIsOneGroupedDeadLetterPerTrip(t *testing.T) {
	t.Parallel()
	e := handlerstest.NewEnv(t)
	src := e.SeedSource("Web form")
	contact := e.Loop(src, "loop@example.com", 2, 9)

	list, err := e.Store.DeadLetterList(context.Background(), models.DeadLetterFilter{WorkspaceID: e.WS.ID, Kind: models.KindLoopSuspected}, models.Page{Limit: 100})
	if err != nil {
		t.Fatal(err)
	}
	if len(list) != 1 {
		t.Fatalf("a looping contact left %d loop dead letters, want one for its breaker trip", len(list))
	}
	if d := list[0]; d.EventCount != 9 || len(d.HeldEvents()) != 9 || d.ContactID == nil || *d.ContactID != contact || d.BreakerTrip == nil || *d.BreakerTrip != 1 {
		t.Fatalf("loop dead letter: count %d, events %d, contact %v, trip %v; want 9 events of %s, trip 1",
			d.EventCount, len(d.HeldEvents()), d.ContactID, d.BreakerTrip, contact)
	}

	c := e.SignedIn(models.RoleEditor)
	page := c.Get("/w/default/dead-letters")
	handlerstest.ExpectBody(t, "groups", page, `data-testid="dead-letter-groups"`, `data-testid="group-events">9<`, `data-testid="group-dead-letters">1<`,
		"Reset the breaker, then replay", "Act on all 1 matching")
	status, groups := e.APICall(models.RoleViewer, http.MethodGet, "/dead-letters/groups?kind=loop_suspected", "")
	if gs, _ := groups["groups"].([]any); status != http.StatusOK || len(gs) != 1 || gs[0].(map[string]any)["events"] != float64(9) {
		t.Fatalf("API groups: %d %v", status, groups)
	}
	detail := c.Get("/w/default/dead-letters/" + strconv.FormatInt(list[0].ID, 10))
	handlerstest.ExpectBody(t, "detail", detail, `data-testid="dead-letter-held"`, "9 events", `&#34;first_name&#34;`, `&#34;payload&#34;`)
	if strings.Contains(detail.Body, "&#34;FirstName&#34;") || strings.Contains(detail.Body, "&#34;WorkspaceID&#34;") {
		t.Fatal("the payload shows Go struct names")
	}

	// Reset the breaker, then replay: every held event applies, one audit entry.
	before := e.AuditCount("dead_letter.bulk_replay")
	res := c.Post("/w/default/dead-letters/act-on-all", url.Values{"kind": {models.KindLoopSuspected}, "reason": {list[0].Reason},
		"contact": {contact}, "action": {"replay"}, "mode": {"apply_as_is"}, "reset_breaker": {"1"}})
	if res.Status != http.StatusSeeOther {
		t.Fatalf("reset and replay: status %d", res.Status)
	}
	handlerstest.ExpectBody(t, "flash", c.Get(res.Header.Get("Location")), "Circuit breaker reset.", "Replayed 1 of 1 matching dead letter(s), holding 9 event(s).")
	if got := e.AuditCount("dead_letter.bulk_replay") - before; got != 1 {
		t.Fatalf("reset and replay wrote %d bulk audit entries, want 1", got)
	}
	if b, err := e.Store.BreakerGet(context.Background(), e.WS.ID, contact); err != nil || b.Status != models.BreakerReset {
		t.Fatalf("breaker after reset and replay: %+v %v", b, err)
	}
	if got := e.ContactByEmail("loop@example.com"); got.FirstName == nil || *got.FirstName != "v11" {
		t.Fatalf("first name after replaying the held events: %v, want the last one, v11", got.FirstName)
	}
	for _, id := range list[0].HeldEvents() {
		ev, err := e.Store.EventByID(context.Background(), id)
		if err != nil || ev.Status == models.EventQuarantined {
			t.Fatalf("held event %s after the replay: %s %v", id, ev.Status, err)
		}
	}
}

func TestUIDeadLetterActOnAll500WritesOneAuditEntry(t *testing.T) {
	t.Parallel()
	e := handlerstest.NewEnv(t)
	ctx := context.Background()
	for i := range 500 {
		if _, err := e.Store.DeadLetterAdd(ctx, models.DeadLetter{WorkspaceID: e.WS.ID, Kind: "side_effect_failed", Reason: "webhook answered 500"}); err != nil {
			t.Fatalf("dead letter %d: %v", i, err)
		}
	}
	keep, err := e.Store.DeadLetterAdd(ctx, models.DeadLetter{WorkspaceID: e.WS.ID, Kind: "side_effect_failed", Reason: "another reason"})
	if err != nil {
		t.Fatal(err)
	}
	c := e.SignedIn(models.RoleEditor)
	filtered := "/w/default/dead-letters?kind=side_effect_failed&reason=" + url.QueryEscape("webhook answered 500")
	handlerstest.ExpectBody(t, "filtered list", c.Get(filtered), "Act on all 500 matching", `data-testid="group-dead-letters">500<`)

	res := c.Post("/w/default/dead-letters/act-on-all", url.Values{"kind": {"side_effect_failed"}, "reason": {"webhook answered 500"}, "action": {"discard"}})
	if res.Status != http.StatusSeeOther {
		t.Fatalf("act on all: status %d", res.Status)
	}
	handlerstest.ExpectBody(t, "flash", c.Get(res.Header.Get("Location")), "Discarded 500 of 500 matching dead letter(s)")
	if got := e.AuditCount("dead_letter.bulk_discard"); got != 1 {
		t.Fatalf("discarding 500 wrote %d bulk audit entries, want 1", got)
	}
	if got := e.AuditCount("dead_letter.discard"); got != 0 {
		t.Fatalf("discarding 500 wrote %d single audit entries", got)
	}
	entries, _ := e.Store.AuditList(ctx, e.WS.ID, models.Page{Limit: 1})
	raw, _ := json.Marshal(entries[0])
	for _, want := range []string{`"matched":500`, `"done":500`, `"reason":"webhook answered 500"`, `"kind":"side_effect_failed"`} {
		if !bytes.Contains(raw, []byte(want)) {
			t.Fatalf("bulk audit entry lacks %s: %s", want, raw)
		}
	}
	if n, _ := e.Store.DeadLetterCount(ctx, models.DeadLetterFilter{WorkspaceID: e.WS.ID}); n != 1 {
		t.Fatalf("%d dead letters open after discarding 500 of 501, want 1", n)
	}
	if d, _ := e.Store.DeadLetterGet(ctx, e.WS.ID, keep); d.Status != models.DeadLetterOpen {
		t.Fatalf("a dead letter outside the filter was %s", d.Status)
	}

	// The API runs the same action: replay with a forced stage, one audit entry.
	src := e.SeedSource("Web form")
	a, b := e.Conflict(src, "a@example.com"), e.Conflict(src, "b@example.com")
	status, out := e.APICall(models.RoleEditor, http.MethodPost, "/dead-letters/act-on-all",
		`{"filter":{"kind":"state_conflict"},"action":"replay","mode":"force_stage","stage":"Closed"}`)
	if status != http.StatusOK || out["done"] != float64(2) || out["matched"] != float64(2) {
		t.Fatalf("API act on all: %d %v", status, out)
	}
	for _, d := range []models.DeadLetter{a, b} {
		if got, _ := e.Store.DeadLetterGet(ctx, e.WS.ID, d.ID); got.Status != models.DeadLetterReplayed {
			t.Fatalf("dead letter %d after the API replay: %s", d.ID, got.Status)
		}
	}
	if got := e.ContactByEmail("a@example.com"); got.Stage != "Closed" {
		t.Fatalf("forced replay left the stage at %q", got.Stage)
	}
	if got := e.AuditCount("dead_letter.bulk_replay"); got != 1 {
		t.Fatalf("API act on all wrote %d bulk audit entries, want 1", got)
	}
	status, out = e.APICall(models.RoleEditor, http.MethodPost, "/dead-letters/act-on-all", `{"action":"replay","mode":"force_stage","stage":"Mars"}`)
	if status != http.StatusBadRequest || !strings.Contains(fmt.Sprint(out), "unknown stage") {
		t.Fatalf("unknown stage: %d %v", status, out)
	}
	if status, _ = e.APICall(models.RoleViewer, http.MethodPost, "/dead-letters/act-on-all", `{"action":"discard"}`); status != http.StatusForbidden {
		t.Fatalf("a viewer acted on all: %d", status)
	}
}

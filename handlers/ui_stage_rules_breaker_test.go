package handlers_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/leadgate/leadgate/models"
)

func TestUIStageRulesDryRunHonoursTheLoopBreaker(t *testing.T) {
	t.Parallel()
	e := newUIEnv(t)
	ctx := context.Background()
	src := e.seedSource("Web form")
	now := time.Now().UTC()
	annFirst := e.apply(src, lead{email: "ann@example.com", stage: "Discovered", at: now.Add(-2 * time.Hour)})
	annNext := e.apply(src, lead{email: "ann@example.com", stage: "Engaged", typ: "call_connected", at: now.Add(-time.Hour)})
	bo := e.apply(src, lead{email: "bo@example.com", stage: "Discovered", at: now.Add(-time.Hour)})
	ev, err := e.store.EventGet(ctx, e.ws.ID, annNext)
	if err != nil || ev.ContactID == nil {
		t.Fatalf("ann's event has no contact: %v %+v", err, ev)
	}
	if _, _, err := e.store.BreakerTrip(ctx, e.ws.ID, *ev.ContactID, "loop suspected: test trip"); err != nil {
		t.Fatal(err)
	}
	c := e.signedIn(models.RoleEditor)
	c.get("/w/default/stages")

	res := c.postHTMX("/w/default/stages/dry-run", defaultRulesForm())
	expectStatus(t, "preview with a tripped breaker", res, 200)
	expectBody(t, "preview with a tripped breaker", res, `data-testid="dry-run-report"`,
		"/events/"+annFirst, "/events/"+annNext,
		"Form submitted would start a new contact in Discovered, but the contact&#39;s loop breaker is tripped, so the loop breaker stops it and it goes to dead letters")
	if strings.Contains(res.body, "/events/"+bo) {
		t.Errorf("bo's breaker is not tripped, but the preview holds bo's event")
	}
	if strings.Count(res.body, "loop breaker is tripped") != 2 {
		t.Errorf("want both of ann's events held by the loop breaker; got %d", strings.Count(res.body, "loop breaker is tripped"))
	}

	// Once an operator resets the breaker, the preview applies ann's events again.
	if _, err := e.store.BreakerResetRow(ctx, e.ws.ID, *ev.ContactID, "test"); err != nil {
		t.Fatal(err)
	}
	after := c.postHTMX("/w/default/stages/dry-run", defaultRulesForm())
	expectBody(t, "preview after the reset", after, `data-testid="dry-run-report"`)
	if strings.Contains(after.body, "loop breaker") || strings.Contains(after.body, "/events/"+annFirst) {
		t.Errorf("after the reset the preview still holds ann's events")
	}
}

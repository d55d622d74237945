package ui_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/leadgate/leadgate/handlers/handlerstest"
	"github.com/leadgate/leadgate/models"
)

func TestUIStageRulesDryRunHonoursTheLoopBreaker(t *testing.T) {
	t.Parallel()
	e := handlerstest.NewEnv(t)
	ctx := context.Background()
	src := e.SeedSource("Web form")
	now := time.Now().UTC()
	annFirst := e.Apply(src, handlerstest.Lead{Email: "ann@example.com", Stage: "Discovered", At: now.Add(-2 * time.Hour)})
	annNext := e.Apply(src, handlerstest.Lead{Email: "ann@example.com", Stage: "Engaged", Type: "call_connected", At: now.Add(-time.Hour)})
	bo := e.Apply(src, handlerstest.Lead{Email: "bo@example.com", Stage: "Discovered", At: now.Add(-time.Hour)})
	ev, err := e.Store.EventGet(ctx, e.WS.ID, annNext)
	if err != nil || ev.ContactID == nil {
		t.Fatalf("ann's event has no contact: %v %+v", err, ev)
	}
	if _, _, err := e.Store.BreakerTrip(ctx, e.WS.ID, *ev.ContactID, "loop suspected: test trip"); err != nil {
		t.Fatal(err)
	}
	c := e.SignedIn(models.RoleEditor)
	c.Get("/w/default/stages")

	res := c.PostHTMX("/w/default/stages/dry-run", defaultRulesForm())
	handlerstest.ExpectStatus(t, "preview with a tripped breaker", res, 200)
	handlerstest.ExpectBody(t, "preview with a tripped breaker", res, `data-testid="dry-run-report"`,
		"/events/"+annFirst, "/events/"+annNext,
		"Form submitted would start a new contact in Discovered, but the contact&#39;s loop breaker is tripped, so the loop breaker stops it and it goes to dead letters")
	if strings.Contains(res.Body, "/events/"+bo) {
		t.Errorf("bo's breaker is not tripped, but the preview holds bo's event")
	}
	if strings.Count(res.Body, "loop breaker is tripped") != 2 {
		t.Errorf("want both of ann's events held by the loop breaker; got %d", strings.Count(res.Body, "loop breaker is tripped"))
	}

	// Once an operator resets the breaker, the preview applies ann's events again.
	if _, err := e.Store.BreakerResetRow(ctx, e.WS.ID, *ev.ContactID, "test"); err != nil {
		t.Fatal(err)
	}
	after := c.PostHTMX("/w/default/stages/dry-run", defaultRulesForm())
	handlerstest.ExpectBody(t, "preview after the reset", after, `data-testid="dry-run-report"`)
	if strings.Contains(after.Body, "loop breaker") || strings.Contains(after.Body, "/events/"+annFirst) {
		t.Errorf("after the reset the preview still holds ann's events")
	}
}

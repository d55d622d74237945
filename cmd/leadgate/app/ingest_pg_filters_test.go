package app_test

import (
	"context"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/leadgate/leadgate/internal/testkit"
)

// A source's drop filter keeps dropping while Postgres is away, also once its cached rule set is older
// than the loader's refresh interval: the last set loaded serves until Postgres answers again, so a
// spooled event is stored as dropped, not kept because the rules could not be re-read.
func TestASourcesDropFilterKeepsDroppingWhilePostgresIsAway(t *testing.T) {
	t.Parallel()
	h := newHarness(t, opts{pgProxy: true, spool: true})
	src := h.createSource(map[string]any{"kind": "standard-webhooks"})
	if r := h.api(http.MethodPut, fmt.Sprintf("/sources/%d/filters", src.ID),
		map[string]any{"rules": []map[string]any{{"name": "internal", "expr": `email_domain == "acme.com"`, "action": "drop"}}}); r.Status != http.StatusOK {
		t.Fatalf("save filters: %s", r)
	}
	h.accept(h.swDelivery(src, "warm", `{"email":"warm@example.com"}`), "queued") // caches the source and its rules

	h.pg.Cut()
	h.accept(h.swDelivery(src, "first", `{"email":"first@example.com"}`), "queued") // finds Postgres away
	time.Sleep(5500 * time.Millisecond)                                             // past the rule set's 5 s refresh
	dropped := h.accept(h.swDelivery(src, "internal", `{"email":"bob@acme.com"}`), "queued")
	kept := h.accept(h.swDelivery(src, "outside", `{"email":"ann@example.com"}`), "queued")

	h.pg.Restore()
	testkit.Eventually(t, 10*time.Second, "ingest sees Postgres back", func() bool { return !h.app.Ingest.Postgres.Down() })
	if _, err := h.app.Ingest.ReplaySpool(context.Background()); err != nil {
		t.Fatal(err)
	}
	for id, want := range map[string]string{dropped: "dropped", kept: "pending"} {
		if got := h.api(http.MethodGet, "/events/"+id, nil).str("status"); got != want {
			t.Errorf("spooled event %s is %q, want %q", id, got, want)
		}
	}
}

//go:build proof

package app_test

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/leadgate/leadgate/internal/testkit"
)

// readyz returns /readyz's status and where it says deliveries are written.
func (h *harness) readyz() (code int, status, writes string) {
	h.t.Helper()
	r := h.get("/readyz")
	return r.Status, r.str("status"), r.str("writes")
}

// With a multi-host LEADGATE_DATABASE_URL (target_session_attrs=read-write), while no server takes
// writes (the primary is down, the standby not yet promoted) deliveries are spooled and answered 200, and
// /readyz says so; once the standby is promoted, the same pool reaches it, the spool is replayed into it
// and new deliveries are stored there directly. Every delivery acknowledged before the failover is on
// the promoted standby (the primary committed synchronously).
func TestIngestSpoolsWhileNoPrimaryAnswersThenWritesToThePromotedStandby(t *testing.T) {
	pair := testkit.PostgresPair(t)
	h := newHarness(t, opts{dbURL: pair.URL("leadgate"), spool: true})
	src := h.createSource(map[string]any{"kind": "standard-webhooks"})
	before := h.accept(h.swDelivery(src, "before", `{"email":"before@example.com"}`), "queued")
	if code, status, writes := h.readyz(); code != http.StatusOK || status != "ready" || writes != "postgres" {
		t.Fatalf("readyz before the failover: %d %s writes=%s", code, status, writes)
	}

	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if err := pair.Primary.Crash(ctx); err != nil {
		t.Fatal(err)
	}
	during := h.accept(h.swDelivery(src, "during", `{"email":"during@example.com"}`), "queued")
	if n := h.app.Spool.Pending(); n != 1 {
		t.Fatalf("spool holds %d records while no primary answers, want 1", n)
	}
	if code, status, writes := h.readyz(); code != http.StatusOK || status != "degraded" || writes != "spool" {
		t.Fatalf("readyz while no primary answers: %d %s writes=%s, want 200 degraded writes=spool", code, status, writes)
	}

	if err := pair.Promote(ctx); err != nil {
		t.Fatal(err)
	}
	testkit.Eventually(t, 30*time.Second, "the pool reaches the promoted standby", func() bool {
		code, _, writes := h.readyz()
		return code == http.StatusOK && writes == "postgres"
	})
	if n, err := h.app.Ingest.ReplaySpool(ctx); err != nil || n != 1 {
		t.Fatalf("ReplaySpool = %d, %v; want 1 record", n, err)
	}
	after := h.accept(h.swDelivery(src, "after", `{"email":"after@example.com"}`), "queued")
	if n := h.app.Spool.Pending(); n != 0 {
		t.Fatalf("spool holds %d records after the promotion, want 0", n)
	}
	for _, id := range []string{before, during, after} {
		if n := h.rowsWithID(id); n != 1 {
			t.Errorf("event %s: %d rows on the promoted standby, want 1", id, n)
		}
	}
	if got := h.accept(h.swDelivery(src, "before", `{"email":"before@example.com"}`), "duplicate"); got != before {
		t.Fatalf("a retry of the first delivery answered %s, want the stored %s", got, before)
	}
}

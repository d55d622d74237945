package app_test

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/leadgate/leadgate/internal/testkit"
)

// TestSpooledRetryOfAStoredEventBecomesAnAlias: an event is stored, Redis then
// loses its keys and Postgres becomes unreachable; the sender's retry cannot
// be recognised, so it is spooled and acknowledged under a new id. When the
// replay finds the key already stored, that new id becomes an alias: the
// inbox holds the event once, and the id the sender was given still leads to it.
func TestSpooledRetryOfAStoredEventBecomesAnAlias(t *testing.T) {
	t.Parallel()
	h := newHarness(t, opts{pgProxy: true, spool: true})
	src := h.createSource(map[string]any{"kind": "standard-webhooks"})
	d := h.swDelivery(src, "stored-then-retried", `{"email":"alias@example.com"}`)
	original := h.accept(d, "queued")
	// The committed key reaches the fast gate off the answer path; Redis loses it only after that.
	testkit.Eventually(t, 5*time.Second, "the key is in the fast gate", func() bool {
		keys, err := h.rdb.Keys(context.Background(), "lg:idem:*").Result()
		return err == nil && len(keys) == 1
	})
	if err := h.rdb.FlushDB(context.Background()).Err(); err != nil {
		t.Fatal(err)
	}
	h.pg.Cut()
	spooled := h.accept(d, "queued") // nothing can tell it is a retry now
	if spooled == original {
		t.Fatal("setup: the retry was recognised without Redis or Postgres")
	}
	h.pg.Restore()
	if n, err := h.app.Ingest.ReplaySpool(context.Background()); err != nil || n != 1 {
		t.Fatalf("ReplaySpool = %d, %v; want 1", n, err)
	}
	if n := h.inboxCount(); n != 1 {
		t.Fatalf("inbox holds %d events, want 1", n)
	}
	e := h.api(http.MethodGet, "/events/"+spooled, nil)
	if e.Status != http.StatusOK || e.str("id") != original {
		t.Fatalf("GET the acknowledged spooled id: %s; want the stored event %s", e, original)
	}
}

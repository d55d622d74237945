package ingest

import (
	"context"
	"log/slog"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/leadgate/leadgate/models"
	"github.com/leadgate/leadgate/models/modelstest"
)

func deliveryLogStore(t *testing.T) (*models.Store, models.Source) {
	t.Helper()
	ctx := context.Background()
	st := modelstest.Store(t)
	src := models.Source{WorkspaceID: 1, Name: "Form", Kind: "hmac", Enabled: true}
	if err := st.SourceCreate(ctx, &src); err != nil {
		t.Fatal(err)
	}
	return st, src
}

func TestDeliveryLogCountsRefusalsAndLosesNoneOnClose(t *testing.T) {
	st, src := deliveryLogStore(t)
	ctx := context.Background()
	var seen [][]models.SourceDeliveries
	d := &DeliveryLog{Store: st, Log: slog.New(slog.DiscardHandler), Evaluate: func(_ context.Context, rows []models.SourceDeliveries) error {
		seen = append(seen, rows)
		return nil
	}}
	d.Record(1, src.ID, http.StatusOK, "queued", "")
	d.Record(1, src.ID, http.StatusOK, "empty", "") // neither accepted nor refused
	d.Record(1, src.ID, http.StatusServiceUnavailable, "unavailable", "")
	if err := d.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	got, _ := st.SourceDeliveriesGet(ctx, src.ID)
	if got.Recent != "a" || got.Refused() != 0 {
		t.Fatalf("after one accepted delivery: %+v", got)
	}
	// A clean source's accepted deliveries cost nothing more.
	d.Record(1, src.ID, http.StatusOK, "duplicate", "")
	if err := d.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	if len(seen) != 1 {
		t.Fatalf("%d flushes wrote rows; an accepted delivery to a clean source must not be written", len(seen))
	}
	d.Record(1, src.ID, http.StatusUnauthorized, "unauthorized", "signature mismatch")
	d.Record(1, src.ID, http.StatusOK, "queued", "") // recorded again: the window now holds a refusal
	d.Record(1, src.ID, http.StatusBadRequest, "malformed", "not JSON")
	d.Record(1, src.ID, http.StatusRequestEntityTooLarge, "", "body exceeds 10 bytes")
	d.Record(1, src.ID, http.StatusUnsupportedMediaType, "unsupported_type", "text/plain")
	d.Close() // no Flush: Close writes what is left
	got, _ = st.SourceDeliveriesGet(ctx, src.ID)
	if got.Recent != "asamlu" || got.RefusedSignature != 1 || got.RefusedMalformed != 1 || got.RefusedTooLarge != 1 || got.RefusedUnsupported != 1 {
		t.Fatalf("after Close: %+v, want recent asamlu and one refusal of each kind", got)
	}
	if got.LastRefusedReason != "unsupported content type: text/plain" || got.LastRefusedAt == nil {
		t.Fatalf("last refusal %q at %v", got.LastRefusedReason, got.LastRefusedAt)
	}
	stats, err := st.StatsGet(ctx, 1)
	if err != nil || stats.Events.Refused != 4 || stats.Events.Received != 4 {
		t.Fatalf("stats %+v (%v), want 4 refused, all received", stats.Events, err)
	}
}

// BenchmarkDeliveryLogRecord is what counting costs a delivery on the answer
// path: accepted (a clean source) and refused (a source being hammered with
// bad signatures), from all cores at once.
func BenchmarkDeliveryLogRecord(b *testing.B) {
	b.Run("baseline: a mutex and a map lookup", func(b *testing.B) {
		var mu sync.Mutex
		m := map[int64]time.Time{7: time.Now()}
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				mu.Lock()
				_ = m[7]
				mu.Unlock()
			}
		})
	})
	for _, c := range []struct {
		name   string
		status int
	}{{"accepted", http.StatusOK}, {"refused", http.StatusUnauthorized}} {
		b.Run(c.name, func(b *testing.B) {
			d := &DeliveryLog{Log: slog.New(slog.DiscardHandler), Interval: 1 << 62}
			d.Record(1, 7, http.StatusOK, "queued", "") // starts the flusher (which never ticks here)
			d.mu.Lock()
			d.pending = map[int64]*models.SourceDeliveryDelta{} // as a flush leaves it
			d.mu.Unlock()
			d.markClean([]models.SourceDeliveries{{SourceID: 7, Recent: "a"}}) // a healthy source
			b.ReportAllocs()
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					d.Record(1, 7, c.status, "queued", "signature mismatch")
				}
			})
		})
	}
}

package loop_test

import (
	"context"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/leadgate/leadgate/guards/loop"
	"github.com/leadgate/leadgate/models"
	"github.com/leadgate/leadgate/models/modelstest"
)

func TestBreaker(t *testing.T) {
	ctx := context.Background()
	store, rdb := modelstest.Store(t), newRedis(t)
	clock := time.Date(2026, 5, 4, 10, 0, 0, 0, time.UTC)
	b := &loop.Breaker{Redis: rdb, Store: store, Now: func() time.Time { return clock }}
	ws, _ := store.WorkspaceBySlug(ctx, "default")
	s := models.LoopSettings{} // defaults: 20 in 10 minutes
	contact := uuid.NewString()

	allow := func() loop.Decision {
		t.Helper()
		d, err := b.Allow(ctx, ws.ID, contact, s)
		if err != nil {
			t.Fatal(err)
		}
		return d
	}
	// 20 events spread over 10 minutes are fine; the window slides.
	for i := range 20 {
		if d := allow(); !d.Allowed || d.Count != i+1 {
			t.Fatalf("event %d: %+v", i+1, d)
		}
		clock = clock.Add(20 * time.Second)
	}
	clock = clock.Add(4 * time.Minute) // the first events leave the window
	if d := allow(); !d.Allowed {
		t.Fatalf("sliding window: %+v", d)
	}
	// A burst trips it once.
	tripped := 0
	for range 25 {
		d := allow()
		if d.Tripped {
			tripped++
		}
	}
	if tripped != 1 {
		t.Fatalf("tripped %d times, want once", tripped)
	}
	if d := allow(); d.Allowed || d.Reason == "" {
		t.Fatalf("held contact allowed: %+v", d)
	}
	rows, _ := store.AlertRows(ctx, ws.ID, 10)
	if len(rows) != 1 || rows[0].ContactID == nil || *rows[0].ContactID != contact {
		t.Fatalf("alert rows %+v, want one for the contact", rows)
	}
	// Another contact is unaffected.
	if d, _ := b.Allow(ctx, ws.ID, uuid.NewString(), s); !d.Allowed {
		t.Fatal("breaker leaked to another contact")
	}
	// Reset: the contact flows again; a new trip is a new alert.
	if _, err := store.BreakerResetRow(ctx, ws.ID, contact, "test"); err != nil {
		t.Fatal(err)
	}
	if err := b.Clear(ctx, ws.ID, contact); err != nil {
		t.Fatal(err)
	}
	if d := allow(); !d.Allowed || d.Count != 1 {
		t.Fatalf("after reset: %+v", d)
	}
	for range 21 {
		allow()
	}
	rows, _ = store.AlertRows(ctx, ws.ID, 10)
	br, _ := store.BreakerGet(ctx, ws.ID, contact)
	if len(rows) != 2 || br.Trips != 2 || br.Status != models.BreakerTripped {
		t.Fatalf("second trip: %d alerts, breaker %+v", len(rows), br)
	}
	// Disabled: always allowed.
	if d, _ := b.Allow(ctx, ws.ID, contact, models.LoopSettings{BreakerDisabled: true}); !d.Allowed {
		t.Fatal("disabled breaker held an event")
	}
}

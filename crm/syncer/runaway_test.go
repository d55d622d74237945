package syncer_test

import (
	"testing"
	"time"

	"github.com/leadgate/leadgate/crm/crmfake"
	"github.com/leadgate/leadgate/crm/syncer"
	"github.com/leadgate/leadgate/models"
)

// TestRunawayGuardPausesAboveTheHourlyCeiling: a destination that passes its
// hourly write ceiling is paused once, with one alert; the rest of its work is
// held, not dropped, and drains after an operator resumes it.
func TestRunawayGuardPausesAboveTheHourlyCeiling(t *testing.T) {
	t.Parallel()
	e := newSyncEnv(t)
	e.relay.Runaway = &syncer.Runaway{Redis: e.rdb}
	// Each sender finishes the batch it has in flight when the guard trips: the overshoot is at most one
	// batch (here one contact) per sender.
	e.relay.Senders = 4
	fake := crmfake.NewActiveCampaign(crmfake.ACOptions{Options: crmfake.Options{Token: "ac-token"}, Fields: acFields})
	defer fake.Close()
	d := e.addDestination(models.Destination{Kind: "activecampaign", BaseURL: fake.URL, RateLimitRPS: 100, BatchSize: 5,
		Config: models.DestinationConfig{StageField: "3", MaxWritesPerHour: 10}}, "ac-token")
	const n = 30
	for i := range n {
		e.contact(emailN(i), "Discovered")
	}
	for range 3 {
		if _, err := e.relay.FanOut(e.ctx); err != nil {
			t.Fatal(err)
		}
		if _, err := e.relay.Drain(e.ctx, d.ID); err != nil {
			t.Fatal(err)
		}
	}
	got, _ := e.store.DestinationByID(e.ctx, d.ID)
	if !got.Paused {
		t.Fatal("destination not paused above its ceiling")
	}
	synced := len(fake.Contacts())
	if synced < 10 || synced > 10+e.relay.Senders {
		t.Fatalf("%d contacts written before the pause; want the ceiling (10) plus at most one batch per sender", synced)
	}
	if a := e.count(`SELECT count(*) FROM outbox WHERE workspace_id = ? AND kind = 'alert' AND action = 'crm_runaway'`, e.ws.ID); a != 1 {
		t.Fatalf("runaway alerts = %d, want 1", a)
	}
	if p := e.pending(d); p != int64(n-synced) {
		t.Fatalf("held work = %d, want %d (nothing dropped)", p, n-synced)
	}
	// The operator raises the ceiling and resumes: the held work drains.
	e.store.DB().Exec(`UPDATE destinations SET config = jsonb_set(config, '{max_writes_per_hour}', '0') WHERE id = ?`, d.ID)
	if err := e.store.DestinationResume(e.ctx, d.ID); err != nil {
		t.Fatal(err)
	}
	e.drainAll(d, 20*time.Second)
	if len(fake.Contacts()) != n || fake.DuplicateEmails() != 0 {
		t.Fatalf("fake holds %d contacts (%d duplicate emails), want %d", len(fake.Contacts()), fake.DuplicateEmails(), n)
	}
}

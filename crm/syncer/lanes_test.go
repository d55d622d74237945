package syncer_test

import (
	"bytes"
	"context"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/leadgate/leadgate/crm/crmfake"
	"github.com/leadgate/leadgate/models"
)

// resyncBacklog puts n contacts in the workspace (set-based: no outbox rows, nothing queued yet).
func (e *syncEnv) resyncBacklog(n int) {
	e.t.Helper()
	if err := e.store.DB().Exec(`INSERT INTO contacts (id, workspace_id, email, stage, first_seen_at, last_activity_at)
		SELECT gen_random_uuid(), ?, 'resync' || g || '@example.com', 'Discovered', now(), now() FROM generate_series(1, ?) g`,
		e.ws.ID, n).Error; err != nil {
		e.t.Fatal(err)
	}
}

// firstWrite is when the fake first received a contact write carrying email (zero: not yet).
func firstWrite(fake *crmfake.ActiveCampaign, email string) time.Time {
	for _, r := range fake.Requests() {
		if r.Method == http.MethodPost && (r.Path == "/api/3/contact/sync" || r.Path == "/api/3/contacts") && r.Status < 300 &&
			bytes.Contains(r.Body, []byte(email)) {
			return r.Time
		}
	}
	return time.Time{}
}

// A new live lead's write overtakes a 5,000-contact resync at ActiveCampaign's 5 req/s: queued after the
// resync is under way, it reaches the CRM while the resync backlog is still almost whole, through the
// per-contact path and alongside the bulk importer. The latency from its fan-out to its arrival is
// reported (a figure, not an assertion: the assertion is that it arrived before the backlog was done).
func TestLiveLeadOvertakesResyncBacklog(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("load test")
	}
	const backlog = 5000
	for _, tc := range []struct {
		name string
		bulk bool // the resync is marked for the bulk importer, as the API's whole-destination resync does
	}{{"per-contact resync", false}, {"bulk-import resync", true}} {
		t.Run(tc.name, func(t *testing.T) {
			e := newSyncEnv(t)
			fake := crmfake.NewActiveCampaign(crmfake.ACOptions{Options: crmfake.Options{Token: "ac-token", RateLimit: 5,
				Latency: 20 * time.Millisecond, LatencyMax: 150 * time.Millisecond}, Fields: acFields})
			defer fake.Close()
			d := e.acDestination(fake, 5)
			e.resyncBacklog(backlog)
			if tc.bulk {
				e.resync(d)
			} else if _, err := e.store.SyncRequeueAll(e.ctx, d.ID); err != nil {
				t.Fatal(err)
			}
			if lane := e.count(`SELECT count(*) FROM sync_queue WHERE destination_id = ? AND lane = ?`, d.ID, models.LaneBackfill); lane != backlog {
				t.Fatalf("%d resync items in the backfill lane, want %d", lane, backlog)
			}

			ctx, cancel := context.WithCancel(e.ctx)
			var wg sync.WaitGroup
			wg.Add(1)
			go func() { // the worker: drain passes back to back, as the tick schedules them
				defer wg.Done()
				for ctx.Err() == nil {
					_, _ = e.relay.Drain(ctx, d.ID)
					time.Sleep(20 * time.Millisecond)
				}
			}()
			defer func() { cancel(); wg.Wait() }()

			// Let the resync get under way: every sender busy with backfill work.
			for len(fake.Requests()) < 10 {
				time.Sleep(20 * time.Millisecond)
			}
			live := e.contact("live-lead@example.com", "Engaged")
			queued := time.Now()
			if _, err := e.relay.FanOut(e.ctx); err != nil { // apply's kick runs the fan-out at once
				t.Fatal(err)
			}
			var arrived time.Time
			for wait := time.Now().Add(2 * time.Minute); arrived.IsZero() && time.Now().Before(wait); {
				time.Sleep(20 * time.Millisecond)
				arrived = firstWrite(fake, *live.Email)
			}
			left := e.count(`SELECT count(*) FROM sync_queue WHERE destination_id = ? AND lane = ?`, d.ID, models.LaneBackfill)
			requests := len(fake.Requests())
			cancel()
			wg.Wait()
			if arrived.IsZero() {
				t.Fatalf("the live lead's write did not reach the CRM within 2 minutes (%d resync items left)", left)
			}
			if left < backlog/2 {
				t.Errorf("the live write arrived after %d of %d resync items were done, want it ahead of the backlog", backlog-left, backlog)
			}
			got, _ := fake.Contact(*live.Email)
			if got.Fields["3"] != "Engaged" {
				t.Errorf("the live lead is at stage %q in the CRM, want Engaged", got.Fields["3"])
			}
			t.Logf("%s: live lead written %s after its fan-out; %d of %d resync items still queued; %d requests so far, %d bulk imports",
				tc.name, arrived.Sub(queued).Round(time.Millisecond), left, backlog, requests, len(fake.BulkImports()))
		})
	}
}

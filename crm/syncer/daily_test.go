package syncer_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/leadgate/leadgate/crm/crmfake"
	"github.com/leadgate/leadgate/models"
)

// A GoHighLevel resync under a daily quota is paced to spread over the rest of the day, far below the
// burst limit the destination allows, while a live lead queued during it goes out unpaced. The daily
// limit is set so that the pace is 2 requests a second until midnight UTC (the real 200,000 a day gives
// about 2.3 a second to a backlog started at midnight); the same resync without a daily limit is the
// comparison.
func TestDailyQuotaPacesResyncButNotLiveLeads(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("load test")
	}
	const watch = 8 * time.Second
	run := func(t *testing.T, daily bool) (requests int, liveSeen bool, left int64) {
		e := newSyncEnv(t)
		fake := crmfake.NewGoHighLevel(crmfake.GHLOptions{Options: crmfake.Options{Token: "ghl-token", RateLimit: 100, RateWindow: 10 * time.Second,
			Latency: 20 * time.Millisecond, LatencyMax: 150 * time.Millisecond}, LocationID: "loc-9",
			Fields: []crmfake.GHLField{
				{ID: "cfLoop", Name: "last_automation_source", FieldKey: "contact.last_automation_source"},
				{ID: "cfSync", Name: "sync_timestamp", FieldKey: "contact.sync_timestamp"},
				{ID: "cfStage", Name: "Lifecycle stage", FieldKey: "contact.lifecycle_stage"},
			}})
		defer fake.Close()
		cfg := models.DestinationConfig{LocationID: "loc-9", StageField: "contact.lifecycle_stage"}
		if daily {
			now := time.Now().UTC()
			left := time.Date(now.Year(), now.Month(), now.Day()+1, 0, 0, 0, 0, time.UTC).Sub(now)
			// 2 a second for the rest of the day, plus the tenth kept for live leads.
			cfg.DailyLimit = int(2*left.Seconds()/0.9) + 1
		} else {
			cfg.DailyLimit = -1 // none
		}
		d := e.addDestination(models.Destination{Kind: "gohighlevel", BaseURL: fake.URL, RateLimitRPS: 10, Config: cfg}, "ghl-token")
		e.resyncBacklog(200)
		if _, err := e.store.SyncRequeueAll(e.ctx, d.ID); err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(e.ctx)
		var wg sync.WaitGroup
		wg.Add(1)
		go func() {
			defer wg.Done()
			for ctx.Err() == nil {
				_, _ = e.relay.Drain(ctx, d.ID)
				time.Sleep(50 * time.Millisecond)
			}
		}()
		for len(fake.Requests()) == 0 {
			time.Sleep(20 * time.Millisecond)
		}
		start := fake.Requests()[0].Time
		time.Sleep(watch / 2)
		live := e.contact("live-lead@example.com", "Engaged")
		if _, err := e.relay.FanOut(e.ctx); err != nil {
			t.Fatal(err)
		}
		time.Sleep(time.Until(start.Add(watch)))
		for _, r := range fake.Requests() {
			if r.Time.Before(start.Add(watch)) {
				requests++
			}
		}
		_, liveSeen = fake.Contact(*live.Email)
		left = e.count(`SELECT count(*) FROM sync_queue WHERE destination_id = ? AND lane = ?`, d.ID, models.LaneBackfill)
		cancel()
		wg.Wait()
		return requests, liveSeen, left
	}
	paced, live, left := run(t, true)
	unpaced, _, _ := run(t, false)
	// Pace 2/s over 8 s, the pacer's burst of 10 and the requests of batches admitted at its edge.
	if most := int(2*watch.Seconds()) + 10 + 6; paced > most {
		t.Errorf("%d requests in the first %s under the daily pace of 2/s, want at most %d", paced, watch, most)
	}
	if !live {
		t.Errorf("the live lead queued during the paced resync did not reach the CRM (%d resync items left)", left)
	}
	if left == 0 {
		t.Error("the paced resync finished within the watch, so the live lead's passing proves nothing")
	}
	t.Logf("first %s of a 200-contact resync: %d requests paced by a daily quota of 2/s for the rest of the day, %d without it (burst 100 per 10 s); live lead written: %v; %d resync items left",
		watch, paced, unpaced, live, left)
}

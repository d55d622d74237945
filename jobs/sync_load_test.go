package jobs_test

import (
	"context"
	"math/rand/v2"
	"net/http"
	"os"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/leadgate/leadgate/crm/crmfake"
	"github.com/leadgate/leadgate/jobs"
	"github.com/leadgate/leadgate/models"
)

// loadSize reads LEADGATE_SYNC_LOAD_CONTACTS / _CHANGES (defaults keep the test around half a minute).
func loadSize(name string, def int) int {
	if n, err := strconv.Atoi(os.Getenv(name)); err == nil && n > 0 {
		return n
	}
	return def
}

// changeLoad writes `changes` changes spread at random over `contacts` contacts while a relay drains
// concurrently, and returns each contact's final state.
func changeLoad(t *testing.T, e *syncEnv, d models.Destination, contacts, changes int, stages []string, drainConcurrently bool) []models.Contact {
	t.Helper()
	cs := make([]models.Contact, contacts)
	for i := range cs {
		cs[i] = e.contact(emailN(i), stages[0])
	}
	ctx, cancel := context.WithCancel(e.ctx)
	var wg sync.WaitGroup
	if drainConcurrently {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for ctx.Err() == nil {
				_, _ = e.relay.FanOut(ctx)
				_, _ = e.relay.Drain(ctx, d.ID)
				time.Sleep(20 * time.Millisecond)
			}
		}()
	}
	rng := rand.New(rand.NewPCG(7, 7))
	for i := contacts; i < changes; i++ {
		c := &cs[rng.IntN(contacts)]
		e.change(c, func(c *models.Contact) {
			c.Fields["budget"] = strconv.Itoa(i)
			if r := stageRank(stages, c.Stage); r+1 < len(stages) && rng.IntN(3) == 0 {
				c.Stage = stages[r+1]
			}
		})
		if drainConcurrently && i%20 == 0 {
			time.Sleep(100 * time.Millisecond) // changes keep arriving while the relay works
		}
	}
	cancel()
	wg.Wait()
	return cs
}

func stageRank(stages []string, s string) int {
	for i, x := range stages {
		if x == s {
			return i
		}
	}
	return 0
}

// The load test, scaled for CI: a fake ActiveCampaign allowing 5 req/s that fails 20 % of requests
// with 503. Every contact ends up in the fake exactly once with its final state (after the transient dead
// letters are retried), no 1 s window ever holds more than 5 requests, and no request was refused for the
// rate. Calls per change are reported.
func TestLoadActiveCampaign5RPSWith503s(t *testing.T) {
	if testing.Short() {
		t.Skip("load test")
	}
	const rps = 5
	contacts, changes := loadSize("LEADGATE_SYNC_LOAD_CONTACTS", 40), loadSize("LEADGATE_SYNC_LOAD_CHANGES", 300)
	e := newSyncEnv(t)
	fake := crmfake.NewActiveCampaign(crmfake.ACOptions{Options: crmfake.Options{Token: "ac-token", RateLimit: rps, FailRate: 0.2, Seed: 42},
		Fields: acFields})
	defer fake.Close()
	d := e.acDestination(fake, rps)
	e.relay.InlineAttempts = 3 // a few dead letters at 20 % failures, so the scheduler path is exercised too
	start := time.Now()
	final := changeLoad(t, e, d, contacts, changes, []string{"Discovered", "Engaged", "SQL"}, true)
	t.Logf("changes written after %s", time.Since(start).Round(time.Millisecond))
	e.drainAll(d, 3*time.Minute)
	t.Logf("first drain done after %s", time.Since(start).Round(time.Millisecond))

	dead := e.count(`SELECT count(*) FROM dead_letters WHERE workspace_id = ? AND kind = 'transient' AND status = 'open' AND reason <> ''`, e.ws.ID)
	t.Logf("transient dead letters (with a reason) after the first drain: %d", dead)
	// The scheduler's retry, brought forward: every dead letter is retried to success.
	for round := 0; round < 5; round++ {
		e.store.DB().Exec(`UPDATE dead_letters SET next_retry_at = now() WHERE status = 'open' AND next_retry_at IS NOT NULL`)
		if _, err := e.store.SyncRetryDueDeadLetters(e.ctx); err != nil {
			t.Fatal(err)
		}
		e.drainAll(d, time.Minute)
		if e.count(`SELECT count(*) FROM sync_queue WHERE destination_id = ?`, d.ID) == 0 {
			break
		}
	}
	elapsed := time.Since(start)

	if n := len(fake.Contacts()); n != contacts || fake.DuplicateEmails() != 0 {
		t.Fatalf("fake holds %d contacts (%d duplicate emails), want %d", n, fake.DuplicateEmails(), contacts)
	}
	for _, c := range final {
		got, _ := fake.Contact(*c.Email)
		if got.Fields["3"] != c.Stage || got.Fields["4"] != c.Fields["budget"] {
			t.Errorf("%s: fake has stage %q budget %q, want %q %q", *c.Email, got.Fields["3"], got.Fields["4"], c.Stage, c.Fields["budget"])
		}
	}
	if open := e.count(`SELECT count(*) FROM dead_letters WHERE workspace_id = ? AND status = 'open'`, e.ws.ID); open != 0 {
		t.Errorf("open dead letters after retries = %d, want 0", open)
	}
	if m := fake.MaxRequestsInWindow(time.Second); m > rps {
		t.Errorf("max requests in a 1 s window = %d, limit %d", m, rps)
	}
	refused, failed := 0, 0
	for _, r := range fake.Requests() {
		switch r.Status {
		case http.StatusTooManyRequests:
			refused++
		case http.StatusServiceUnavailable:
			failed++
		}
	}
	if refused != 0 {
		t.Errorf("the fake refused %d requests for the rate", refused)
	}
	calls := len(fake.Requests())
	t.Logf("ActiveCampaign @%d req/s, 20%% 503: %d changes over %d contacts in %s; %d requests (%d were 503), %.3f calls/change, %.2f calls/contact, max %d in any 1 s",
		rps, changes, contacts, elapsed.Round(time.Second), calls, failed, float64(calls)/float64(changes), float64(calls)/float64(contacts), fake.MaxRequestsInWindow(time.Second))
}

// HubSpot's batch upsert: with changes queued faster than they drain, calls per change stay at or below 1/15.
func TestLoadHubSpotBatchesCallsPerChange(t *testing.T) {
	contacts, changes := 150, 300
	e := newSyncEnv(t)
	fake := crmfake.NewHubSpot(crmfake.HSOptions{Options: crmfake.Options{Token: "hs-token", RateLimit: 100, RateWindow: 10 * time.Second},
		Properties: []string{"last_automation_source", "sync_timestamp", "budget"}})
	defer fake.Close()
	d := e.addDestination(models.Destination{Kind: "hubspot", BaseURL: fake.URL, RateLimitRPS: 10, BatchSize: 100,
		Config: models.DestinationConfig{FieldMap: map[string]string{"budget": "budget"},
			StageMap: map[string]string{"Discovered": "lead", "Engaged": "marketingqualifiedlead", "SQL": "salesqualifiedlead"}}}, "hs-token")
	final := changeLoad(t, e, d, contacts, changes, []string{"Discovered", "Engaged", "SQL"}, false)
	e.drainAll(d, time.Minute)

	if n := len(fake.Contacts()); n != contacts || fake.DuplicateEmails() != 0 {
		t.Fatalf("fake holds %d contacts (%d duplicates), want %d", n, fake.DuplicateEmails(), contacts)
	}
	stage := map[string]string{"Discovered": "lead", "Engaged": "marketingqualifiedlead", "SQL": "salesqualifiedlead"}
	for _, c := range final {
		got, _ := fake.Contact(*c.Email)
		if got.Properties["lifecyclestage"] != stage[c.Stage] || got.Properties["budget"] != c.Fields["budget"] {
			t.Errorf("%s: fake has %v, want stage %s budget %s", *c.Email, got.Properties, stage[c.Stage], c.Fields["budget"])
		}
	}
	calls := len(fake.Requests())
	perChange := float64(calls) / float64(changes)
	t.Logf("HubSpot batch 100: %d changes over %d contacts, %d requests, %.4f calls/change", changes, contacts, calls, perChange)
	if perChange > 1.0/15 {
		t.Errorf("calls per change = %.4f, want ≤ %.4f", perChange, 1.0/15)
	}
}

// A worker killed while a batch is on the wire (its context cancelled, its lease never released, the CRM
// having processed the request) loses nothing and duplicates nothing: after the lease expires another
// relay finds the contacts by email and records them.
func TestCrashDuringBatchSendLosesAndDuplicatesNothing(t *testing.T) {
	e := newSyncEnv(t)
	fake := crmfake.NewHubSpot(crmfake.HSOptions{Options: crmfake.Options{Token: "hs-token", Latency: 400 * time.Millisecond},
		Properties: []string{"last_automation_source", "sync_timestamp"}})
	defer fake.Close()
	d := e.addDestination(models.Destination{Kind: "hubspot", BaseURL: fake.URL, RateLimitRPS: 10, BatchSize: 50,
		Config: models.DestinationConfig{StageMap: map[string]string{"Discovered": "lead"}}}, "hs-token")
	const n = 25
	for i := range n {
		e.contact(emailN(i), "Discovered")
	}
	if _, err := e.relay.FanOut(e.ctx); err != nil {
		t.Fatal(err)
	}
	e.relay.Lease = time.Second
	e.relay.KeepLeasesOnCancel = true // a killed process releases nothing
	ctx, kill := context.WithCancel(e.ctx)
	go func() {
		// Kill once the batch upsert is on the wire.
		for ctx.Err() == nil {
			for _, r := range fake.Requests() {
				if r.Path == "/crm/v3/objects/contacts/batch/upsert" {
					kill()
					return
				}
			}
			time.Sleep(5 * time.Millisecond)
		}
	}()
	if _, err := e.relay.Drain(ctx, d.ID); err == nil {
		t.Fatal("the killed drain reported success")
	}
	kill()
	time.Sleep(600 * time.Millisecond) // the fake finishes the request the dead worker sent
	if got := e.count(`SELECT count(*) FROM sync_state WHERE destination_id = ?`, d.ID); got != 0 {
		t.Fatalf("the killed worker recorded %d deliveries", got)
	}
	if got := len(fake.Contacts()); got != n {
		t.Fatalf("the CRM created %d contacts from the killed worker's batch, want %d (the case under test)", got, n)
	}

	// "Restart": a fresh relay process (new connector, new adapter cache) after the lease expired.
	e.conn = &jobs.Connector{Store: e.store, Box: e.box, Redis: e.rdb}
	e.relay.Connector = e.conn
	time.Sleep(time.Second)
	e.drainAll(d, 20*time.Second)

	if len(fake.Contacts()) != n || fake.DuplicateEmails() != 0 {
		t.Fatalf("fake holds %d contacts (%d duplicate emails), want %d", len(fake.Contacts()), fake.DuplicateEmails(), n)
	}
	if got := e.count(`SELECT count(*) FROM sync_state WHERE destination_id = ? AND remote_id <> ''`, d.ID); got != n {
		t.Errorf("synced contacts = %d, want %d", got, n)
	}
}

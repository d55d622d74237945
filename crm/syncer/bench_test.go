package syncer_test

import (
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/leadgate/leadgate/crm/crmfake"
	"github.com/leadgate/leadgate/models"
)

// Benchmarks for docs/crm-sync.md. Run them with a fixed count, e.g.
//
//	go test ./crm/syncer -run '^$' -bench 'Sync' -benchtime 1x
//
// They report changes synced per second (sandbox, no rate limit) and CRM requests per 1,000 changes per
// kind (1,000 changes over 250 contacts, queued before the relay runs, fakes without limits or faults).

// BenchmarkSyncSandboxUnlimited: b.N contacts with one change each, drained to the sandbox with no limit.
func BenchmarkSyncSandboxUnlimited(b *testing.B) {
	e := newSyncEnv(b)
	d := e.addDestination(models.Destination{Kind: "sandbox", BatchSize: 100}, "")
	n := max(b.N, 1000)
	for i := range n {
		e.contact(emailN(i), "Discovered")
	}
	b.ResetTimer()
	e.drainAll(d, 10*time.Minute)
	b.StopTimer()
	b.ReportMetric(float64(n)/b.Elapsed().Seconds(), "changes/s")
	if got := e.count(`SELECT count(*) FROM sandbox_contacts WHERE destination_id = ?`, d.ID); got != int64(n) {
		b.Fatalf("sandbox holds %d contacts, want %d", got, n)
	}
}

// callsPer1000 writes 1,000 changes over 250 contacts, drains them and reports requests per 1,000 changes.
func callsPer1000(b *testing.B, e *syncEnv, d models.Destination, requests func() int) {
	const contacts, changes = 250, 1000
	changeLoadB(b, e, contacts, changes)
	b.ResetTimer()
	e.drainAll(d, 10*time.Minute)
	b.StopTimer()
	b.ReportMetric(float64(requests())*1000/changes, "calls/1000changes")
	b.ReportMetric(float64(changes)/b.Elapsed().Seconds(), "changes/s")
}

func changeLoadB(b *testing.B, e *syncEnv, contacts, changes int) {
	cs := make([]models.Contact, contacts)
	for i := range cs {
		cs[i] = e.contact(emailN(i), "Discovered")
	}
	stages := []string{"Discovered", "Engaged", "SQL"}
	for i := contacts; i < changes; i++ {
		c := &cs[i%contacts]
		e.change(c, func(c *models.Contact) {
			c.Fields["budget"] = itoa(i)
			c.Stage = stages[min(stageRank(stages, c.Stage)+1, 2)]
		})
	}
}

func BenchmarkSyncCallsPer1000Changes(b *testing.B) {
	b.Run("activecampaign", func(b *testing.B) {
		e := newSyncEnv(b)
		fake := crmfake.NewActiveCampaign(crmfake.ACOptions{Options: crmfake.Options{Token: "ac-token"}, Fields: acFields})
		defer fake.Close()
		d := e.acDestination(fake, 1000)
		callsPer1000(b, e, d, func() int { return len(fake.Requests()) })
	})
	b.Run("hubspot", func(b *testing.B) {
		e := newSyncEnv(b)
		fake := crmfake.NewHubSpot(crmfake.HSOptions{Options: crmfake.Options{Token: "hs-token"},
			Properties: []string{"last_automation_source", "sync_timestamp", "budget"}})
		defer fake.Close()
		d := e.addDestination(models.Destination{Kind: "hubspot", BaseURL: fake.URL, RateLimitRPS: 1000, BatchSize: 100,
			Config: models.DestinationConfig{FieldMap: map[string]string{"budget": "budget"},
				StageMap: map[string]string{"Discovered": "lead", "Engaged": "marketingqualifiedlead", "SQL": "salesqualifiedlead"}}}, "hs-token")
		callsPer1000(b, e, d, func() int { return len(fake.Requests()) })
	})
	b.Run("gohighlevel", func(b *testing.B) {
		e := newSyncEnv(b)
		fake := crmfake.NewGoHighLevel(crmfake.GHLOptions{Options: crmfake.Options{Token: "ghl-token"}, LocationID: "loc-9",
			Fields: []crmfake.GHLField{
				{ID: "cfLoop", Name: "last_automation_source", FieldKey: "contact.last_automation_source"},
				{ID: "cfSync", Name: "sync_timestamp", FieldKey: "contact.sync_timestamp"},
				{ID: "cfStage", Name: "Lifecycle stage", FieldKey: "contact.lifecycle_stage"},
				{ID: "cfBudget", Name: "Budget", FieldKey: "contact.budget"},
			}})
		defer fake.Close()
		d := e.addDestination(models.Destination{Kind: "gohighlevel", BaseURL: fake.URL, RateLimitRPS: 1000,
			Config: models.DestinationConfig{LocationID: "loc-9", StageField: "contact.lifecycle_stage", FieldMap: map[string]string{"budget": "cfBudget"}}}, "ghl-token")
		callsPer1000(b, e, d, func() int { return len(fake.Requests()) })
	})
	// A whole-destination resync of 1,000 contacts already in ActiveCampaign (and in step with it): through
	// the bulk importer, 250 a request, followed to completion. Requests per 1,000 contacts resynced.
	b.Run("activecampaign-resync-bulk", func(b *testing.B) {
		e := newSyncEnv(b)
		fake := crmfake.NewActiveCampaign(crmfake.ACOptions{Options: crmfake.Options{Token: "ac-token"}, Fields: acFields})
		defer fake.Close()
		d := e.acDestination(fake, 1000)
		const contacts = 1000
		for i := range contacts {
			e.contact(emailN(i), "Discovered")
		}
		e.drainAll(d, 10*time.Minute)
		before, importsBefore := len(fake.Requests()), len(fake.BulkImports()) // the first sync of new contacts is bulk too
		b.ResetTimer()
		e.resync(d)
		e.drainAll(d, 10*time.Minute)
		b.StopTimer()
		if imports := len(fake.BulkImports()) - importsBefore; imports != 4 {
			b.Fatalf("%d bulk imports for 1,000 contacts, want 4", imports)
		}
		b.ReportMetric(float64(len(fake.Requests())-before)*1000/contacts, "calls/1000contacts")
		b.ReportMetric(float64(contacts)/b.Elapsed().Seconds(), "contacts/s")
	})
	b.Run("sandbox", func(b *testing.B) {
		e := newSyncEnv(b)
		d := e.addDestination(models.Destination{Kind: "sandbox", BatchSize: 100}, "")
		callsPer1000(b, e, d, func() int {
			got, _ := e.store.DestinationByID(e.ctx, d.ID)
			return int(got.CallsTotal)
		})
	})
}

// BenchmarkSyncBatchBuilding times the relay's batch building alone: coalescing pending crm_upsert intents
// per contact (the newest version wins, older ones superseded) into the destination's queue, from which
// micro-batches are claimed. 1,000 changes over 250 contacts per iteration; nothing is sent.
func BenchmarkSyncBatchBuilding(b *testing.B) {
	e := newSyncEnv(b)
	d := e.addDestination(models.Destination{Kind: "sandbox", BatchSize: 100}, "")
	for b.Loop() {
		b.StopTimer()
		if err := e.store.DB().Exec(`DELETE FROM sync_queue WHERE destination_id = ?`, d.ID).Error; err != nil {
			b.Fatal(err)
		}
		if err := e.store.DB().Exec(`DELETE FROM outbox`).Error; err != nil {
			b.Fatal(err)
		}
		if err := e.store.DB().Exec(`DELETE FROM contacts`).Error; err != nil {
			b.Fatal(err)
		}
		changeLoadB(b, e, 250, 1000)
		b.StartTimer()
		for {
			n, err := e.relay.FanOut(e.ctx)
			if err != nil {
				b.Fatal(err)
			}
			if n == 0 {
				break
			}
		}
	}
	b.StopTimer()
	if q := e.count(`SELECT count(*) FROM sync_queue WHERE destination_id = ?`, d.ID); q != 250 {
		b.Fatalf("queue holds %d rows after coalescing, want one per contact (250)", q)
	}
	b.ReportMetric(1000*float64(b.N)/b.Elapsed().Seconds(), "changes/s")
}

// backlogFigures are the request rates a backlog drain reached, as the fake CRM saw them arrive.
type backlogFigures struct {
	requests       int
	elapsed        time.Duration // first request to last: while the backlog lasted
	peak1s, peak10 int           // most requests in any 1 s / 10 s window
}

func measureBacklog(reqs []crmfake.Request) backlogFigures {
	if len(reqs) == 0 {
		return backlogFigures{}
	}
	times := make([]time.Time, len(reqs))
	for i, r := range reqs {
		times[i] = r.Time
	}
	return backlogFigures{requests: len(reqs), elapsed: times[len(times)-1].Sub(times[0]),
		peak1s: crmfake.MaxInWindow(times, time.Second), peak10: crmfake.MaxInWindow(times, 10*time.Second)}
}

func (f backlogFigures) average() float64 {
	if f.elapsed <= 0 {
		return 0
	}
	return float64(f.requests) / f.elapsed.Seconds()
}

// backlogRun queues `contacts` new contacts before the relay runs, drains them with `senders` senders
// (0: the relay's default for the destination) and reports what the fake saw. Every contact must arrive
// once, and no window of the CRM's own length may hold more than its limit (the one figure asserted).
//
// With updates, the contacts are synced once first (untimed: new contacts to ActiveCampaign go through its
// bulk import in a handful of requests), then every one changes a field, and the figures are those of
// that second backlog: known records, each a conflict-checked write of its own.
func backlogRun(b *testing.B, e *syncEnv, d models.Destination, senders, contacts int, fake interface {
	Requests() []crmfake.Request
}, window time.Duration, limit int, stored func() int, updates bool) backlogFigures {
	cs := make([]models.Contact, contacts)
	for i := range contacts {
		cs[i] = e.contact(emailN(i), "Discovered")
	}
	if senders == 0 {
		senders = loadSize("LEADGATE_SYNC_SENDERS", 0) // 0: the relay's default
	}
	e.relay.Senders = senders
	var from time.Time
	if updates {
		if _, err := e.relay.FanOut(e.ctx); err != nil {
			b.Fatal(err)
		}
		e.drainAll(d, 10*time.Minute)
		from = time.Now()
		for i := range cs {
			e.change(&cs[i], func(c *models.Contact) { c.Fields["budget"] = strconv.Itoa(1000 + i) })
		}
	}
	if _, err := e.relay.FanOut(e.ctx); err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	e.drainAll(d, 10*time.Minute)
	b.StopTimer()
	if got := stored(); got != contacts {
		b.Fatalf("the fake holds %d contacts, want %d", got, contacts)
	}
	var reqs []crmfake.Request
	for _, r := range fake.Requests() {
		if !r.Time.Before(from) {
			reqs = append(reqs, r)
		}
	}
	times := make([]time.Time, len(reqs))
	for i, r := range reqs {
		times[i] = r.Time
		if r.Status == 429 {
			b.Errorf("request %d %s %s was refused for the rate", i, r.Method, r.Path)
		}
	}
	if most := crmfake.MaxInWindow(times, window); most > limit {
		b.Fatalf("%d requests in one %s window, the CRM allows %d", most, window, limit)
	}
	f := measureBacklog(reqs)
	if testing.Verbose() {
		b.Logf("requests per second: %v", perSecond(times))
	}
	b.ReportMetric(float64(f.peak1s), "peak_req/1s")
	b.ReportMetric(float64(f.peak10), "peak_req/10s")
	b.ReportMetric(f.average(), "avg_req/s")
	b.ReportMetric(float64(f.requests), "requests")
	b.ReportMetric(float64(contacts)/f.elapsed.Seconds(), "contacts/s")
	return f
}

// BenchmarkSyncBacklogRate drains a backlog of new contacts at each CRM's limit, with 20–150 ms of CRM
// latency, and reports the request rate the CRM saw: the peak in any 1 s (and 10 s) window and the
// average while the backlog lasted. "senders=1" is the relay sending one request at a time (the
// comparison); "senders=auto" is its default for the destination's rate. Run with
//
//	go test ./crm/syncer -run '^$' -bench 'SyncBacklogRate' -benchtime 1x -timeout 15m
//
// LEADGATE_SYNC_BACKLOG_CONTACTS sizes the ActiveCampaign run (default 300); HubSpot and GoHighLevel
// take a third of it (their budget is a fifth of ActiveCampaign's here).
func BenchmarkSyncBacklogRate(b *testing.B) {
	acContacts := loadSize("LEADGATE_SYNC_BACKLOG_CONTACTS", 300)
	latency := crmfake.Options{Latency: 20 * time.Millisecond, LatencyMax: 150 * time.Millisecond}
	for _, senders := range []int{1, 0} {
		name := "senders=auto"
		if senders == 1 {
			name = "senders=1"
		}
		// ActiveCampaign: the account allows 50 req/s (an elevated plan), the destination is set to 45. New
		// contacts go through its bulk import; a backlog of changes to known ones ("updates") is the rate run.
		for _, updates := range []bool{false, true} {
			run := "activecampaign-45rps/"
			if updates {
				run = "activecampaign-45rps-updates/"
			}
			b.Run(run+name, func(b *testing.B) {
				e := newSyncEnv(b)
				o := latency
				o.Token, o.RateLimit, o.RateWindow = "ac-token", 50, time.Second
				fake := crmfake.NewActiveCampaign(crmfake.ACOptions{Options: o, Fields: acFields})
				defer fake.Close()
				d := e.acDestination(fake, 45)
				backlogRun(b, e, d, senders, acContacts, fake, time.Second, 50, func() int { return len(fake.Contacts()) }, updates)
			})
		}
		// HubSpot free/starter tier: 100 per 10 s; one contact per batch here, so the rate is requests, not
		// batch size (a bigger batch only needs fewer of them).
		b.Run("hubspot-100per10s/"+name, func(b *testing.B) {
			e := newSyncEnv(b)
			o := latency
			o.Token = "hs-token"
			fake := crmfake.NewHubSpot(crmfake.HSOptions{Options: o, Tier: crmfake.HSTierFree,
				Properties: []string{"last_automation_source", "sync_timestamp", "budget"}})
			defer fake.Close()
			d := e.addDestination(models.Destination{Kind: "hubspot", BaseURL: fake.URL, RateLimitRPS: 10, BatchSize: 1,
				Config: models.DestinationConfig{FieldMap: map[string]string{"budget": "budget"},
					StageMap: map[string]string{"Discovered": "lead"}}}, "hs-token")
			backlogRun(b, e, d, senders, max(acContacts/3, 1), fake, 10*time.Second, 100, func() int { return len(fake.Contacts()) }, false)
		})
		// GoHighLevel: 100 per 10 s per location.
		b.Run("gohighlevel-100per10s/"+name, func(b *testing.B) {
			e := newSyncEnv(b)
			o := latency
			o.Token, o.RateLimit, o.RateWindow = "ghl-token", 100, 10*time.Second
			fake := crmfake.NewGoHighLevel(crmfake.GHLOptions{Options: o, LocationID: "loc-9",
				Fields: []crmfake.GHLField{
					{ID: "cfLoop", Name: "last_automation_source", FieldKey: "contact.last_automation_source"},
					{ID: "cfSync", Name: "sync_timestamp", FieldKey: "contact.sync_timestamp"},
					{ID: "cfStage", Name: "Lifecycle stage", FieldKey: "contact.lifecycle_stage"},
				}})
			defer fake.Close()
			d := e.addDestination(models.Destination{Kind: "gohighlevel", BaseURL: fake.URL, RateLimitRPS: 10,
				Config: models.DestinationConfig{LocationID: "loc-9", StageField: "contact.lifecycle_stage"}}, "ghl-token")
			backlogRun(b, e, d, senders, max(acContacts/3, 1), fake, 10*time.Second, 100, func() int { return len(fake.Contacts()) }, false)
		})
	}
}

// perSecond counts requests per whole second from the first one.
func perSecond(times []time.Time) []int {
	if len(times) == 0 {
		return nil
	}
	var out []int
	for _, t := range times {
		i := int(t.Sub(times[0]) / time.Second)
		for len(out) <= i {
			out = append(out, 0)
		}
		out[i]++
	}
	return out
}

// loadSize reads LEADGATE_SYNC_LOAD_CONTACTS / _CHANGES (defaults keep the test around half a minute).
func loadSize(name string, def int) int {
	if n, err := strconv.Atoi(os.Getenv(name)); err == nil && n > 0 {
		return n
	}
	return def
}

func stageRank(stages []string, s string) int {
	for i, x := range stages {
		if x == s {
			return i
		}
	}
	return 0
}

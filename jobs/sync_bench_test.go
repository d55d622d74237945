package jobs_test

import (
	"testing"
	"time"

	"github.com/leadgate/leadgate/crm/crmfake"
	"github.com/leadgate/leadgate/models"
)

// Benchmarks for docs/crm-sync.md. Run them with a fixed count, e.g.
//
//	go test ./jobs -run '^$' -bench 'Sync' -benchtime 1x
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

package crm_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/leadgate/leadgate/crm"
	"github.com/leadgate/leadgate/crm/crmfake"
)

// Benchmarks run against the fakes with no rate limit. They report calls per change, the number that
// matters against a CRM's request budget: updates of known contacts (the steady state) after one create.

// requestCounter is what every fake offers: its request log.
type requestCounter interface{ Requests() []crmfake.Request }

func benchUpsert(b *testing.B, fake requestCounter, d crm.Destination, batchSize int) {
	ctx := context.Background()
	contacts := make([]crm.Contact, batchSize)
	for i := range contacts {
		c := lead(i)
		c.Note = "created"
		r := d.Upsert(ctx, []crm.Contact{c})[0]
		if r.Err != nil {
			b.Fatal(r.Err)
		}
		c.RemoteID, c.Previous = r.RemoteID, r.Written
		contacts[i] = c
	}
	before := len(fake.Requests())
	b.ResetTimer()
	for n := range b.N {
		for i := range contacts {
			contacts[i].SubmissionCount = n + 2
			contacts[i].Note = fmt.Sprintf("submission %d", n)
		}
		for i, r := range d.Upsert(ctx, contacts) {
			if r.Err != nil || len(r.Conflicts) > 0 {
				b.Fatalf("%v %v", r.Err, r.Conflicts)
			}
			contacts[i].Previous = r.Written
		}
	}
	b.StopTimer()
	calls := len(fake.Requests()) - before
	b.ReportMetric(float64(calls)/float64(b.N*batchSize), "calls/change")
	b.ReportMetric(float64(b.N*batchSize)/b.Elapsed().Seconds(), "changes/s")
}

func BenchmarkActiveCampaignUpsert(b *testing.B) {
	fake, d := newAC(b, crmfake.ACOptions{})
	benchUpsert(b, fake, d, 1)
}

func BenchmarkHubSpotUpsert100(b *testing.B) {
	fake, d := newHS(b, crmfake.HSOptions{})
	benchUpsert(b, fake, d, 100)
}

func BenchmarkGoHighLevelUpsert(b *testing.B) {
	fake, d := newGHL(b, crmfake.GHLOptions{})
	benchUpsert(b, fake, d, 1)
}

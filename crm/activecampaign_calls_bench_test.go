package crm_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/leadgate/leadgate/crm"
	"github.com/leadgate/leadgate/crm/crmfake"
)

// liveLead is a typical live lead: email and phone, a stage, a mapped field and a first-touch source.
func liveLead(i int) crm.Contact {
	return crm.Contact{LeadgateID: fmt.Sprintf("lg-live-%d", i), Version: 1, Email: fmt.Sprintf("live%d@example.com", i),
		Phone: fmt.Sprintf("+1415555%04d", i%10000), FirstName: "Live", Stage: "Discovered",
		Fields: map[string]string{"budget": "10k"}, FirstTouch: map[string]string{"utm_source": "ads"}, SubmissionCount: 1}
}

// BenchmarkActiveCampaignCallsPerContact counts the requests one contact costs on the live path (Upsert),
// against the fake with no limit: a new lead, a lead ActiveCampaign already holds by email that leadgate
// has not linked yet (with and without a first-touch field to protect), and a change to a linked contact
// (remote id known). Reported as calls/contact.
//
//	go test -count=1 -run '^$' -bench BenchmarkActiveCampaignCallsPerContact -benchtime 200x ./crm/
func BenchmarkActiveCampaignCallsPerContact(b *testing.B) {
	ctx := context.Background()
	b.Run("new", func(b *testing.B) {
		fake, d := newAC(b, crmfake.ACOptions{})
		warm(b, d)
		before := len(fake.Requests())
		for n := range b.N {
			if r := d.Upsert(ctx, []crm.Contact{liveLead(n)})[0]; r.Err != nil || !r.Created {
				b.Fatalf("%v created=%v", r.Err, r.Created)
			}
		}
		b.ReportMetric(float64(len(fake.Requests())-before)/float64(b.N), "calls/contact")
	})
	b.Run("existing-by-email", func(b *testing.B) {
		fake, d := newAC(b, crmfake.ACOptions{})
		warm(b, d)
		for n := range b.N {
			fake.AddContact(crmfake.ACContact{Email: liveLead(n).Email, Fields: map[string]string{"4": "google"}})
		}
		before := len(fake.Requests())
		for n := range b.N {
			if r := d.Upsert(ctx, []crm.Contact{liveLead(n)})[0]; r.Err != nil || r.Created {
				b.Fatalf("%v created=%v", r.Err, r.Created)
			}
		}
		b.ReportMetric(float64(len(fake.Requests())-before)/float64(b.N), "calls/contact")
	})
	b.Run("existing-by-email-no-first-touch", func(b *testing.B) {
		fake, d := newAC(b, crmfake.ACOptions{})
		warm(b, d)
		for n := range b.N {
			fake.AddContact(crmfake.ACContact{Email: liveLead(n).Email})
		}
		before := len(fake.Requests())
		for n := range b.N {
			c := liveLead(n)
			c.FirstTouch = nil
			if r := d.Upsert(ctx, []crm.Contact{c})[0]; r.Err != nil || r.Created {
				b.Fatalf("%v created=%v", r.Err, r.Created)
			}
		}
		b.ReportMetric(float64(len(fake.Requests())-before)/float64(b.N), "calls/contact")
	})
	b.Run("linked-change", func(b *testing.B) {
		fake, d := newAC(b, crmfake.ACOptions{})
		warm(b, d)
		cs := make([]crm.Contact, b.N)
		for n := range b.N {
			cs[n] = liveLead(n)
			r := d.Upsert(ctx, []crm.Contact{cs[n]})[0]
			if r.Err != nil {
				b.Fatal(r.Err)
			}
			cs[n].RemoteID, cs[n].Previous, cs[n].Stage = r.RemoteID, r.Written, "Engaged"
		}
		before := len(fake.Requests())
		for n := range b.N {
			if r := d.Upsert(ctx, []crm.Contact{cs[n]})[0]; r.Err != nil {
				b.Fatal(r.Err)
			}
		}
		b.ReportMetric(float64(len(fake.Requests())-before)/float64(b.N), "calls/contact")
	})
}

// warm loads the adapter's field list once, as a running destination has.
func warm(b *testing.B, d crm.Destination) {
	b.Helper()
	c := liveLead(-1)
	c.Email, c.LeadgateID = "warm@example.com", "lg-warm"
	if r := d.Upsert(context.Background(), []crm.Contact{c})[0]; r.Err != nil {
		b.Fatal(r.Err)
	}
}

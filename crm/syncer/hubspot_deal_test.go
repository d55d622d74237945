package syncer_test

import (
	"testing"
	"time"

	"github.com/leadgate/leadgate/crm"
	"github.com/leadgate/leadgate/crm/crmfake"
	"github.com/leadgate/leadgate/models"
)

// A HubSpot destination in deal mode, driven by the relay: each contact gets one deal in the pipeline,
// stage changes move it, and a deal a person moved is left alone and recorded as a conflict.
func TestHubSpotDealModeThroughTheRelay(t *testing.T) {
	t.Parallel()
	e := newSyncEnv(t)
	fake := crmfake.NewHubSpot(crmfake.HSOptions{Options: crmfake.Options{Token: "hs-token"}, Properties: hsTestProps})
	defer fake.Close()
	d := e.addDestination(models.Destination{Kind: crm.KindHubSpot, BaseURL: fake.URL, RateLimitRPS: 50, BatchSize: 100,
		Config: models.DestinationConfig{StageMode: crm.StageModeDeal, Pipeline: "default",
			StageMap: map[string]string{"Discovered": "appointmentscheduled", "Engaged": "qualifiedtobuy", "SQL": "presentationscheduled"}}}, "hs-token")
	a := e.contact("a@example.com", "Discovered")
	b := e.contact("b@example.com", "Discovered")
	e.drainAll(d, 20*time.Second)
	if deals := fake.Deals(); len(deals) != 2 {
		t.Fatalf("deals after creation %+v, want 2", deals)
	}
	st, _ := e.store.SyncStateGet(e.ctx, d.ID, a.ID)
	dealA := st.Written[crm.PrevDealID]
	fake.HumanMoveDeal(dealA, "contractsent")
	e.change(&a, func(c *models.Contact) { c.Stage = "Engaged" })
	e.change(&b, func(c *models.Contact) { c.Stage = "Engaged" })
	e.drainAll(d, 20*time.Second)

	deals := fake.Deals()
	if len(deals) != 2 {
		t.Fatalf("deals after the stage change %+v, want still 2", deals)
	}
	for _, dl := range deals {
		want := "qualifiedtobuy"
		if dl.ID == dealA {
			want = "contractsent" // the person's move stays
		}
		if dl.Stage != want || dl.Pipeline != "default" || len(dl.ContactIDs) != 1 {
			t.Errorf("deal %+v, want stage %s in default with one contact", dl, want)
		}
	}
	if n := e.count(`SELECT count(*) FROM sync_conflicts WHERE destination_id = ? AND contact_id = ? AND field = 'deal.stage' AND remote = 'contractsent'`, d.ID, a.ID); n != 1 {
		t.Errorf("deal.stage conflicts for a = %d, want 1", n)
	}
	if n := len(fake.Contacts()); n != 2 {
		t.Errorf("contacts = %d, want 2", n)
	}
}

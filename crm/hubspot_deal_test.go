package crm_test

import (
	"context"
	"strings"
	"testing"

	"github.com/leadgate/leadgate/crm"
	"github.com/leadgate/leadgate/crm/crmfake"
)

// newHSDeal is a HubSpot destination in deal mode: leadgate stages map to dealstages of pipeline "default".
func newHSDeal(t testing.TB) (*crmfake.HubSpot, crm.Destination) {
	t.Helper()
	fake := crmfake.NewHubSpot(crmfake.HSOptions{Options: crmfake.Options{Token: "hs-token"}, Properties: hsProps})
	t.Cleanup(fake.Close)
	d, err := crm.New(crm.Config{Kind: crm.KindHubSpot, BaseURL: fake.URL, APIToken: "hs-token",
		StageMode: crm.StageModeDeal, Pipeline: "default",
		StageMap: map[string]string{"Discovered": "appointmentscheduled", "Engaged": "qualifiedtobuy", "SQL": "presentationscheduled"},
		FieldMap: map[string]string{"utm_source": "utm_source", "submission_count": "submission_count"}})
	if err != nil {
		t.Fatalf("crm.New: %v", err)
	}
	return fake, d
}

// next is the contact's following sync: its remote id and what leadgate last wrote, at stage.
func next(c crm.Contact, r crm.Result, stage string) crm.Contact {
	c.RemoteID, c.Previous, c.Stage = r.RemoteID, r.Written, stage
	c.Version++
	return c
}

func TestHubSpotDealModeCreatesMovesAndKeepsHumanMoves(t *testing.T) {
	t.Parallel()
	fake, d := newHSDeal(t)
	ctx := context.Background()

	// Creation: three new contacts cost a read, an upsert and one deal batch create (and, once per adapter,
	// the account details).
	batch := []crm.Contact{lead(1), lead(2), lead(3)}
	res := d.Upsert(ctx, batch)
	for _, r := range res {
		mustOK(t, r)
	}
	if got := len(fake.Requests()); got != 4 {
		t.Errorf("requests for 3 new contacts = %d, want 4 (account details, read, upsert, deal batch create)", got)
	}
	deals := fake.Deals()
	if len(deals) != 3 {
		t.Fatalf("deals = %+v, want 3", deals)
	}
	byContact := map[string]crmfake.HSDeal{}
	for _, dl := range deals {
		if dl.Pipeline != "default" || dl.Stage != "appointmentscheduled" || len(dl.ContactIDs) != 1 {
			t.Errorf("deal %+v: want pipeline default, stage appointmentscheduled, one contact", dl)
		}
		byContact[dl.ContactIDs[0]] = dl
	}
	for _, r := range res {
		dl, ok := byContact[r.RemoteID]
		if !ok || r.Written[crm.PrevDealID] != dl.ID || r.Written[crm.PrevDealStage] != "appointmentscheduled" {
			t.Errorf("%s: Written deal %q/%q, fake deal %+v", r.LeadgateID, r.Written[crm.PrevDealID], r.Written[crm.PrevDealStage], dl)
		}
		if c, _ := fake.Contact(batch[0].Email); c.Properties["lifecyclestage"] != "" {
			t.Errorf("deal mode wrote lifecyclestage %q on the contact", c.Properties["lifecyclestage"])
		}
	}

	// Advance: lead1 and lead2 move to Engaged; the same deals move (one batch update), none is created.
	adv := []crm.Contact{next(batch[0], res[0], "Engaged"), next(batch[1], res[1], "Engaged")}
	res2 := d.Upsert(ctx, adv)
	for _, r := range res2 {
		mustOK(t, r)
		if r.Written[crm.PrevDealStage] != "qualifiedtobuy" {
			t.Errorf("%s: Written stage %q, want qualifiedtobuy", r.LeadgateID, r.Written[crm.PrevDealStage])
		}
	}
	if n := len(fake.Deals()); n != 3 {
		t.Errorf("deals after advance = %d, want still 3", n)
	}
	for _, r := range res2 {
		if dl := dealOf(fake, r.RemoteID); dl.Stage != "qualifiedtobuy" {
			t.Errorf("deal of %s at %q, want qualifiedtobuy", r.LeadgateID, dl.Stage)
		}
	}

	// A person moves lead1's deal; leadgate's next move is a conflict and the human's stage stays.
	fake.HumanMoveDeal(res2[0].Written[crm.PrevDealID], "contractsent")
	res3 := d.Upsert(ctx, []crm.Contact{next(adv[0], res2[0], "SQL"), next(adv[1], res2[1], "SQL")})
	for _, r := range res3 {
		mustOK(t, r)
	}
	if dl := dealOf(fake, res3[0].RemoteID); dl.Stage != "contractsent" {
		t.Errorf("human-moved deal at %q, want contractsent kept", dl.Stage)
	}
	want := crm.FieldConflict{Field: "deal.stage", OurLast: "qualifiedtobuy", Remote: "contractsent"}
	if len(res3[0].Conflicts) != 1 || res3[0].Conflicts[0] != want {
		t.Errorf("conflicts %+v, want [%+v]", res3[0].Conflicts, want)
	}
	if res3[0].Written[crm.PrevDealStage] != "qualifiedtobuy" {
		t.Errorf("conflicted Written stage %q, want leadgate's last (qualifiedtobuy)", res3[0].Written[crm.PrevDealStage])
	}
	if dl := dealOf(fake, res3[1].RemoteID); dl.Stage != "presentationscheduled" || len(res3[1].Conflicts) != 0 {
		t.Errorf("lead2 deal at %q conflicts %+v, want presentationscheduled and none", dl.Stage, res3[1].Conflicts)
	}
}

// A contact leadgate never recorded a deal for (an imported one, or a deal created just before a crash) is
// matched to its existing deal in the pipeline through its associations, not given a second one.
func TestHubSpotDealModeFindsExistingDealThroughAssociations(t *testing.T) {
	t.Parallel()
	fake, d := newHSDeal(t)
	id := fake.AddContact(map[string]string{"email": "lead1@example.com"})
	other := fake.AddDeal(id, "other", "x") // another pipeline: ignored
	fake.HumanEdit(id, "firstname", "Lead")
	dealID := fake.AddDeal(id, "default", "appointmentscheduled")

	c := lead(1)
	c.Stage = "Engaged"
	r := upsertOne(t, d, c)
	mustOK(t, r)
	if n := len(fake.Deals()); n != 2 {
		t.Errorf("deals = %d, want the 2 existing ones only", n)
	}
	if r.Written[crm.PrevDealID] != dealID || dealOf(fake, id).Stage != "qualifiedtobuy" {
		t.Errorf("Written deal %q (other %s), fake %+v; want %s moved to qualifiedtobuy", r.Written[crm.PrevDealID], other, fake.Deals(), dealID)
	}
}

func TestHubSpotDealModeFailures(t *testing.T) {
	t.Parallel()
	t.Run("429 on the deal batch fails the batch as rate limited", func(t *testing.T) {
		fake, d := newHSDeal(t)
		fake.FailNext(crmfake.Response{Path: "/crm/v3/objects/0-3/batch/create", Status: 429, Header: map[string][]string{"Retry-After": {"2"}}})
		for _, r := range d.Upsert(context.Background(), []crm.Contact{lead(1), lead(2)}) {
			if crm.ClassOf(r.Err) != crm.RateLimited {
				t.Errorf("%s: Err = %v, want rate limited", r.LeadgateID, r.Err)
			}
		}
		// The retry finds the contacts by email and creates the deals once.
		for _, r := range d.Upsert(context.Background(), []crm.Contact{lead(1), lead(2)}) {
			mustOK(t, r)
		}
		if n := len(fake.Deals()); n != 2 || len(fake.Contacts()) != 2 {
			t.Errorf("deals %d contacts %d after retry, want 2 and 2", n, len(fake.Contacts()))
		}
	})
	t.Run("207 on the contact upsert fails only that contact, the others get deals", func(t *testing.T) {
		fake, d := newHSDeal(t)
		bad := lead(2)
		bad.Email = "not an email"
		res := d.Upsert(context.Background(), []crm.Contact{lead(1), bad})
		if res[0].Err != nil || crm.ClassOf(res[1].Err) != crm.Invalid {
			t.Fatalf("errs = %v / %v, want nil / invalid", res[0].Err, res[1].Err)
		}
		if deals := fake.Deals(); len(deals) != 1 || deals[0].ContactIDs[0] != res[0].RemoteID {
			t.Errorf("deals %+v, want one for lead1", deals)
		}
	})
	t.Run("a stage missing from the stage map is invalid", func(t *testing.T) {
		fake, d := newHSDeal(t)
		c := lead(1)
		c.Stage = "Customer"
		if r := upsertOne(t, d, c); crm.ClassOf(r.Err) != crm.Invalid {
			t.Errorf("Err = %v, want invalid", r.Err)
		}
		if n := len(fake.Contacts()); n != 0 {
			t.Errorf("contacts = %d, want none written", n)
		}
	})
	t.Run("a stage map naming a dealstage the pipeline lacks is a setup fault", func(t *testing.T) {
		fake := crmfake.NewHubSpot(crmfake.HSOptions{Options: crmfake.Options{Token: "hs-token"}, Properties: hsProps})
		t.Cleanup(fake.Close)
		d, err := crm.New(crm.Config{Kind: crm.KindHubSpot, BaseURL: fake.URL, APIToken: "hs-token", StageMode: crm.StageModeDeal,
			Pipeline: "default", StageMap: map[string]string{"Discovered": "stage-that-was-deleted"}})
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range d.Upsert(context.Background(), []crm.Contact{lead(1), lead(2)}) {
			if crm.ClassOf(r.Err) != crm.Setup || !strings.Contains(r.Err.Error(), "dealstage") {
				t.Errorf("%s: Err = %v, want Setup naming dealstage", r.LeadgateID, r.Err)
			}
		}
		if n := len(fake.Deals()); n != 0 {
			t.Errorf("deals = %d, want none", n)
		}
	})
	t.Run("deal mode needs a pipeline", func(t *testing.T) {
		_, err := crm.New(crm.Config{Kind: crm.KindHubSpot, APIToken: "x", StageMode: crm.StageModeDeal, StageMap: map[string]string{"SQL": "s"}})
		if err == nil {
			t.Error("crm.New accepted deal mode without a pipeline")
		}
	})
}

func dealOf(fake *crmfake.HubSpot, contactID string) crmfake.HSDeal {
	for _, d := range fake.Deals() {
		for _, c := range d.ContactIDs {
			if c == contactID && d.Pipeline == "default" {
				return d
			}
		}
	}
	return crmfake.HSDeal{}
}

package syncer_test

import (
	"testing"
	"time"

	"github.com/leadgate/leadgate/crm/crmfake"
	"github.com/leadgate/leadgate/models"
)

// HubSpot in deal mode: a contact's stage is its deal's dealstage in the pipeline (read through the stage
// map, via the v4 associations and a deal batch read), not its lifecyclestage; a deal in another pipeline
// does not count, and of several in the pipeline the oldest does (the one the adapter moves). After the
// import an event never moves the deal back and no second deal is opened.
func TestImportFromHubSpotDealModeReadsDealStage(t *testing.T) {
	t.Parallel()
	e := newSyncEnv(t)
	fake := crmfake.NewHubSpot(crmfake.HSOptions{Options: crmfake.Options{Token: "hs-token"},
		Pipelines: []crmfake.HSPipeline{
			{ID: "default", Label: "Sales", Stages: []string{"appointmentscheduled", "qualifiedtobuy", "presentationscheduled", "closedwon"}},
			{ID: "other", Label: "Renewals", Stages: []string{"r1", "r2"}}}})
	defer fake.Close()
	d := e.addDestination(models.Destination{Kind: "hubspot", BaseURL: fake.URL, RateLimitRPS: 100,
		Config: models.DestinationConfig{StageMode: "deal", Pipeline: "default",
			StageMap: map[string]string{"Discovered": "appointmentscheduled", "Engaged": "qualifiedtobuy", "SQL": "presentationscheduled"}}}, "hs-token")
	// lifecyclestage says otherwise on purpose: deal mode must not read it.
	sql := fake.AddContact(map[string]string{"email": "sql@example.com", "lifecyclestage": "subscriber"})
	sqlDeal := fake.AddDeal(sql, "default", "presentationscheduled")
	fake.AddDeal(sql, "default", "appointmentscheduled") // a later deal in the pipeline: not the contact's first
	eng := fake.AddContact(map[string]string{"email": "eng@example.com", "lifecyclestage": "customer"})
	fake.AddDeal(eng, "other", "r2")
	fake.AddDeal(eng, "default", "qualifiedtobuy")
	fake.AddContact(map[string]string{"email": "none@example.com", "lifecyclestage": "salesqualifiedlead"})
	other := fake.AddContact(map[string]string{"email": "other@example.com"})
	fake.AddDeal(other, "other", "r1")

	e.runImport(d, 4, 4, 0)

	for email, want := range map[string]string{"sql@example.com": "SQL", "eng@example.com": "Engaged", "none@example.com": "", "other@example.com": ""} {
		if c, err := e.store.ContactFindByEmail(e.ctx, e.ws.ID, email); err != nil || c.Stage != want {
			t.Errorf("%s imported at %q (%v), want %q", email, c.Stage, err, want)
		}
	}
	assocReads, dealReads := 0, 0
	for _, r := range fake.Requests() {
		switch r.Path {
		case "/crm/v4/associations/contacts/deals/batch/read":
			assocReads++
		case "/crm/v3/objects/0-3/batch/read":
			dealReads++
		}
	}
	if assocReads != 1 || dealReads != 1 {
		t.Errorf("association reads %d, deal reads %d; want one each for one page of contacts", assocReads, dealReads)
	}

	src := models.Source{WorkspaceID: e.ws.ID, Name: "Web form", Kind: "standard-webhooks", Channel: "web_form", Enabled: true}
	if err := e.store.SourceCreate(e.ctx, &src); err != nil {
		t.Fatal(err)
	}
	e.applyEvent(src, "sql@example.com", "Discovered", time.Now())
	e.drainAll(d, 30*time.Second)
	var deals []crmfake.HSDeal
	for _, dl := range fake.Deals() {
		for _, c := range dl.ContactIDs {
			if c == sql && dl.Pipeline == "default" {
				deals = append(deals, dl)
			}
		}
	}
	if len(deals) != 2 || deals[0].ID != sqlDeal || deals[0].Stage != "presentationscheduled" {
		t.Errorf("SQL contact's deals after a Discovered event: %+v; want its first deal still at presentationscheduled and no new one", deals)
	}
}

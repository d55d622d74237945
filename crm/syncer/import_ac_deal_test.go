package syncer_test

import (
	"testing"
	"time"

	"github.com/leadgate/leadgate/crm/crmfake"
	"github.com/leadgate/leadgate/models"
)

// ActiveCampaign in deal mode: the import reads each contact's stage from its deal in the configured
// pipeline (the oldest when it has several; deals in other pipelines and the stage field are ignored),
// records that deal, and a later event never moves it back or opens a second deal.
func TestImportFromActiveCampaignDealModeReadsDealStage(t *testing.T) {
	t.Parallel()
	e := newSyncEnv(t)
	fake := crmfake.NewActiveCampaign(crmfake.ACOptions{Options: crmfake.Options{Token: "ac-token"}, Fields: acFields,
		Pipelines: []crmfake.ACPipeline{
			{ID: "7", Title: "Leads", Stages: []crmfake.ACField{{ID: "71"}, {ID: "72"}, {ID: "73"}}},
			{ID: "8", Title: "Renewals", Stages: []crmfake.ACField{{ID: "81"}}}}})
	defer fake.Close()
	d := e.addDestination(models.Destination{Kind: "activecampaign", BaseURL: fake.URL, RateLimitRPS: 100,
		Config: models.DestinationConfig{StageMode: "deal", Pipeline: "7",
			StageMap: map[string]string{"Discovered": "71", "Engaged": "72", "SQL": "73"}}}, "ac-token")
	// The stage field says Discovered on purpose: deal mode must not read it.
	sql := fake.AddContact(crmfake.ACContact{Email: "sql@example.com", Fields: map[string]string{"3": "Discovered"}})
	sqlDeal := fake.AddDeal(crmfake.ACDeal{Title: "SQL lead", Contact: sql, Group: "7", Stage: "73"})
	fake.AddDeal(crmfake.ACDeal{Title: "Later deal", Contact: sql, Group: "7", Stage: "71"})
	eng := fake.AddContact(crmfake.ACContact{Email: "eng@example.com"})
	fake.AddDeal(crmfake.ACDeal{Title: "Engaged lead", Contact: eng, Group: "7", Stage: "72"})
	fake.AddDeal(crmfake.ACDeal{Title: "Renewal", Contact: eng, Group: "8", Stage: "81"})
	fake.AddContact(crmfake.ACContact{Email: "none@example.com"})

	e.runImport(d, 3, 3, 0)

	for email, want := range map[string]string{"sql@example.com": "SQL", "eng@example.com": "Engaged", "none@example.com": ""} {
		if c, err := e.store.ContactFindByEmail(e.ctx, e.ws.ID, email); err != nil || c.Stage != want {
			t.Errorf("%s imported at %q (%v), want %q", email, c.Stage, err, want)
		}
	}
	src := models.Source{WorkspaceID: e.ws.ID, Name: "Web form", Kind: "standard-webhooks", Channel: "web_form", Enabled: true}
	if err := e.store.SourceCreate(e.ctx, &src); err != nil {
		t.Fatal(err)
	}
	e.applyEvent(src, "sql@example.com", "Discovered", time.Now())
	e.drainAll(d, 30*time.Second)
	var deals []crmfake.ACDeal
	for _, dl := range fake.Deals() {
		if dl.Contact == sql && dl.Group == "7" {
			deals = append(deals, dl)
		}
	}
	if len(deals) != 2 {
		t.Fatalf("SQL contact has %d deals in the pipeline after a Discovered event, want its 2 (none created)", len(deals))
	}
	for _, dl := range deals {
		if dl.ID == sqlDeal && dl.Stage != "73" {
			t.Errorf("the imported deal moved to stage %s, want it kept at 73 (SQL)", dl.Stage)
		}
	}
}

package crm_test

import (
	"context"
	"testing"

	"github.com/leadgate/leadgate/crm"
	"github.com/leadgate/leadgate/crm/crmfake"
)

// In deal mode the HubSpot reader pages each contact's deal associations (a v4 batch read result carries
// paging.next.after when the contact has more deals than a page), so a deal in the pipeline beyond the
// first page still gives the contact its stage; the listing pages contacts by after and reads the
// properties asked for.
func TestHubSpotReaderFollowsPerInputAssociationPaging(t *testing.T) {
	fake := crmfake.NewHubSpot(crmfake.HSOptions{AssociationPageSize: 2, Pipelines: []crmfake.HSPipeline{
		{ID: "default", Label: "Sales", Stages: []string{"appointmentscheduled", "qualifiedtobuy"}}, {ID: "other", Label: "Other", Stages: []string{"r1"}}}})
	t.Cleanup(fake.Close)
	id := fake.AddContact(map[string]string{"email": "a@example.com", "firstname": "Ann", "lifecyclestage": "lead"})
	for range 4 {
		fake.AddDeal(id, "other", "r1")
	}
	deal := fake.AddDeal(id, "default", "qualifiedtobuy") // the fifth: third page
	r, err := crm.NewReader(crm.ReaderConfig{Kind: "hubspot", BaseURL: fake.URL, Token: "t", Pipeline: "default",
		Properties: []string{"lifecyclestage"}})
	if err != nil {
		t.Fatal(err)
	}
	page, next, err := r.List(context.Background(), "")
	if err != nil {
		t.Fatal(err)
	}
	if len(page) != 1 || next != "" {
		t.Fatalf("page %+v next %q, want the one contact and no next page", page, next)
	}
	c := page[0]
	if c.Values[crm.PrevDealID] != deal || c.Values[crm.PrevDealStage] != "qualifiedtobuy" {
		t.Errorf("deal %q at %q, want %s at qualifiedtobuy (found on the third association page)", c.Values[crm.PrevDealID], c.Values[crm.PrevDealStage], deal)
	}
	if c.FirstName != "Ann" || c.Values["lifecyclestage"] != "lead" {
		t.Errorf("contact %+v, want its properties read", c)
	}
}

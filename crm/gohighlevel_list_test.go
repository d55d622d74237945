package crm_test

import (
	"context"
	"testing"

	"github.com/leadgate/leadgate/crm"
	"github.com/leadgate/leadgate/crm/crmfake"
)

// GoHighLevel custom field values are keyed by field id and by every reference a destination may use
// (fieldKey with and without "contact.", name), in List and Get alike, so import and drift find them;
// in deal mode List carries the contact's oldest opportunity in the pipeline.
func TestGoHighLevelReaderKeysCustomFieldsByEveryReference(t *testing.T) {
	fake := crmfake.NewGoHighLevel(crmfake.GHLOptions{Options: crmfake.Options{Token: "t"}, LocationID: "loc-9",
		Fields:    []crmfake.GHLField{{ID: "cfStage", Name: "Lifecycle stage", FieldKey: "contact.lifecycle_stage"}},
		Pipelines: []crmfake.GHLPipeline{{ID: "p1", Stages: []string{"s1", "s2"}}}})
	defer fake.Close()
	id := fake.AddContact(crmfake.GHLContact{Email: "a@example.com", CustomFields: map[string]string{"cfStage": "SQL"}})
	fake.AddOpportunity(crmfake.GHLOpportunity{Name: "first", ContactID: id, PipelineID: "p1", PipelineStageID: "s2"})
	fake.AddOpportunity(crmfake.GHLOpportunity{Name: "later", ContactID: id, PipelineID: "p1", PipelineStageID: "s1"})
	r, err := crm.NewReader(crm.ReaderConfig{Kind: "gohighlevel", BaseURL: fake.URL, Token: "t", LocationID: "loc-9", Pipeline: "p1"})
	if err != nil {
		t.Fatal(err)
	}
	got, err := r.Get(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	page, next, err := r.List(context.Background(), "")
	if err != nil || next != "" || len(page) != 1 {
		t.Fatalf("List: %d contacts, next %q, %v", len(page), next, err)
	}
	for name, values := range map[string]map[string]string{"Get": got.Values, "List": page[0].Values} {
		for _, key := range []string{"cfStage", "contact.lifecycle_stage", "lifecycle_stage", "Lifecycle stage"} {
			if values[key] != "SQL" {
				t.Errorf("%s: Values[%q] = %q, want SQL", name, key, values[key])
			}
		}
	}
	if page[0].Values[crm.PrevDealStage] != "s2" || page[0].Values[crm.PrevDealID] == "" {
		t.Errorf("deal values %v, want the oldest opportunity at s2", page[0].Values)
	}
}

// The reader takes the location's contact fields only (model=contact), so an opportunity field with a
// contact field's name does not shadow it, and reads multi-select values as the adapter writes them:
// the options as a sorted set.
func TestGoHighLevelReaderReadsContactFieldsAndMultiValuesAsTheAdapterWrites(t *testing.T) {
	fake := crmfake.NewGoHighLevel(crmfake.GHLOptions{Options: crmfake.Options{Token: "t"}, LocationID: "loc-9",
		Fields: []crmfake.GHLField{
			{ID: "cfInt", Name: "Interests", FieldKey: "contact.interests", DataType: "MULTIPLE_OPTIONS"},
			{ID: "cfOpp", Name: "Interests", FieldKey: "opportunity.interests", Model: "opportunity"},
		}})
	defer fake.Close()
	id := fake.AddContact(crmfake.GHLContact{Email: "a@example.com", CustomArrays: map[string][]string{"cfInt": {"webinar", "demo"}}})
	r, err := crm.NewReader(crm.ReaderConfig{Kind: "gohighlevel", BaseURL: fake.URL, Token: "t", LocationID: "loc-9"})
	if err != nil {
		t.Fatal(err)
	}
	got, err := r.Get(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	for _, key := range []string{"cfInt", "Interests", "interests"} {
		if got.Values[key] != "demo;webinar" {
			t.Errorf("Values[%q] = %q, want demo;webinar", key, got.Values[key])
		}
	}
}

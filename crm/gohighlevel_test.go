package crm_test

import (
	"context"
	"net/http"
	"slices"
	"testing"
	"time"

	"github.com/leadgate/leadgate/crm"
	"github.com/leadgate/leadgate/crm/crmfake"
)

var ghlFields = []crmfake.GHLField{
	{ID: "cfLoop", Name: "last_automation_source", FieldKey: "contact.last_automation_source"},
	{ID: "cfSync", Name: "sync_timestamp", FieldKey: "contact.sync_timestamp"},
	{ID: "cfStage", Name: "Lifecycle stage", FieldKey: "contact.lifecycle_stage"},
	{ID: "cfUTM", Name: "UTM source", FieldKey: "contact.utm_source"},
}

func newGHL(t testing.TB, opts crmfake.GHLOptions, mutate ...func(*crm.Config)) (*crmfake.GoHighLevel, crm.Destination) {
	t.Helper()
	if opts.Fields == nil {
		opts.Fields = ghlFields
	}
	opts.Token, opts.LocationID = "ghl-token", "loc-9"
	fake := crmfake.NewGoHighLevel(opts)
	t.Cleanup(fake.Close)
	cfg := crm.Config{Kind: crm.KindGoHighLevel, BaseURL: fake.URL, APIToken: "ghl-token", LocationID: "loc-9",
		StageField: "contact.lifecycle_stage", FieldMap: map[string]string{"utm_source": "cfUTM"}}
	for _, m := range mutate {
		m(&cfg)
	}
	d, err := crm.New(cfg)
	if err != nil {
		t.Fatalf("crm.New: %v", err)
	}
	return fake, d
}

func TestGoHighLevelCreatesThroughUpsertWithTagsSeparately(t *testing.T) {
	t.Parallel()
	fake, d := newGHL(t, crmfake.GHLOptions{})
	r := upsertOne(t, d, jane())
	mustOK(t, r)
	c, ok := fake.Contact("jane@example.com")
	if !ok || !r.Created || r.RemoteID != c.ID {
		t.Fatalf("Created=%v RemoteID=%q contact %+v", r.Created, r.RemoteID, c)
	}
	if c.CustomFields["cfStage"] != "Discovered" || c.CustomFields["cfUTM"] != "ads" || c.CustomFields["cfLoop"] != crm.LoopValue {
		t.Errorf("custom fields %v", c.CustomFields)
	}
	if !slices.Equal(c.Tags, []string{"webinar"}) || len(c.Notes) != 1 {
		t.Errorf("tags %v notes %v", c.Tags, c.Notes)
	}
	for _, m := range fake.Mutations() {
		if m.SentTags {
			t.Errorf("%s sent tags (upsert/update overwrite every tag)", m.Path)
		}
		if m.CustomFields["cfLoop"] != crm.LoopValue || m.CustomFields["cfSync"] == "" {
			t.Errorf("%s lacks the loop-breaker: %v", m.Path, m.CustomFields)
		}
	}
}

func TestGoHighLevelUpdatesKeepsHumanTagsAndEdits(t *testing.T) {
	t.Parallel()
	fake, d := newGHL(t, crmfake.GHLOptions{})
	first := upsertOne(t, d, jane())
	mustOK(t, first)
	fake.HumanAddTag(first.RemoteID, "vip")
	fake.HumanEdit(first.RemoteID, "lastName", "Smith")
	before := len(fake.Requests())

	c := jane()
	c.RemoteID, c.Previous, c.Stage, c.Tags = first.RemoteID, first.Written, "SQL", []string{"demo"}
	r := upsertOne(t, d, c)
	mustOK(t, r)
	got, _ := fake.Contact("jane@example.com")
	slices.Sort(got.Tags)
	if !slices.Equal(got.Tags, []string{"demo", "vip"}) {
		t.Errorf("tags %v, want webinar (ours, dropped) removed, demo added, vip (human) kept", got.Tags)
	}
	if got.LastName != "Smith" || got.CustomFields["cfStage"] != "SQL" {
		t.Errorf("lastName %q stage %q", got.LastName, got.CustomFields["cfStage"])
	}
	if len(r.Conflicts) != 1 || r.Conflicts[0] != (crm.FieldConflict{Field: "lastName", OurLast: "Doe", Remote: "Smith"}) {
		t.Errorf("Conflicts = %v", r.Conflicts)
	}
	for _, req := range fake.Requests()[before:] {
		if req.Path == "/contacts/search/duplicate" || req.Path == "/contacts/upsert" {
			t.Errorf("contact with a remote id looked up or upserted: %s", req.Path)
		}
	}
}

// A record found by phone is the lead's when it has no email (or the lead has none): it is updated in
// place, first-touch fields kept. A phone-only lead holding +14155550134 finds the record a person typed
// as "(415) 555-0134" or "415.555.0134" (GHL compares phones as stored).
func TestGoHighLevelFindsByPhoneAndKeepsFirstTouch(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ name, stored, email string }{
		{"email lead, phone-only record", "+14155550134", "new@example.com"},
		{"phone-only lead, national format", "(415) 555-0134", ""},
		{"phone-only lead, dotted", "415.555.0134", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fake, d := newGHL(t, crmfake.GHLOptions{})
			id := fake.AddContact(crmfake.GHLContact{Phone: tc.stored, CustomFields: map[string]string{"cfUTM": "google"}})
			c := jane()
			c.Email = tc.email
			r := upsertOne(t, d, c)
			mustOK(t, r)
			got := fake.Contacts()
			if r.Created || r.RemoteID != id || len(got) != 1 || got[0].CustomFields["cfUTM"] != "google" || got[0].Email != tc.email ||
				got[0].FirstName != "Jane" {
				t.Errorf("Created=%v RemoteID=%q contacts %+v", r.Created, r.RemoteID, got)
			}
		})
	}
}

func TestGoHighLevelFailures(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name      string
		resp      crmfake.Response
		authFail  int
		wantClass crm.Class
	}{
		{name: "429", resp: crmfake.Response{Status: 429, Header: http.Header{"Retry-After": {"2"}}}, wantClass: crm.RateLimited},
		{name: "503", resp: crmfake.Response{Status: 503}, wantClass: crm.Transient},
		{name: "422", resp: crmfake.Response{Status: 422, Body: `{"statusCode":422,"message":["property x should not exist"],"error":"Unprocessable Entity"}`}, wantClass: crm.Invalid},
		{name: "401", authFail: 401, wantClass: crm.Auth},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			fake, d := newGHL(t, crmfake.GHLOptions{})
			if tc.authFail != 0 {
				fake.SetAuthFailure(tc.authFail)
			} else {
				fake.FailNext(tc.resp)
			}
			r := upsertOne(t, d, jane())
			if r.Err == nil || crm.ClassOf(r.Err) != tc.wantClass {
				t.Errorf("Err = %v, want %v", r.Err, tc.wantClass)
			}
		})
	}
}

// A record the lookups miss (GHL's search index lags writes) is named by create's duplicate refusal: it
// is read and updated there, keeping its first-touch fields, and no second record is made.
func TestGoHighLevelDuplicateRejectionUpdatesTheNamedContact(t *testing.T) {
	t.Parallel()
	fake, d := newGHL(t, crmfake.GHLOptions{})
	id := fake.AddContact(crmfake.GHLContact{Email: "jane@example.com", CustomFields: map[string]string{"cfUTM": "google"}})
	fake.HideFromSearch(id)
	r := upsertOne(t, d, jane())
	mustOK(t, r)
	got := fake.Contacts()
	if r.RemoteID != id || r.Created || len(got) != 1 || got[0].CustomFields["cfUTM"] != "google" || got[0].FirstName != "Jane" {
		t.Errorf("RemoteID=%q Created=%v contacts %+v", r.RemoteID, r.Created, got)
	}
}

func TestGoHighLevelOpportunityStage(t *testing.T) {
	t.Parallel()
	fake, d := newGHL(t, crmfake.GHLOptions{Pipelines: []crmfake.GHLPipeline{{ID: "p1", Name: "Leads", Stages: []string{"s1", "s2", "s3"}}}},
		func(c *crm.Config) {
			c.StageMode, c.Pipeline = crm.StageModeDeal, "p1"
			c.StageMap = map[string]string{"Discovered": "s1", "Engaged": "s2", "SQL": "s3"}
		})
	r := upsertOne(t, d, jane())
	mustOK(t, r)
	c := jane()
	c.RemoteID, c.Previous, c.Stage = r.RemoteID, r.Written, "SQL"
	mustOK(t, upsertOne(t, d, c))
	opps := fake.Opportunities()
	if len(opps) != 1 || opps[0].PipelineStageID != "s3" || opps[0].ContactID != r.RemoteID {
		t.Errorf("opportunities %+v, want one at s3", opps)
	}
	disc, err := d.Discover(context.Background())
	if err != nil || len(disc.Pipelines) != 1 || !disc.Loop.LoopFieldFound || !disc.Loop.SyncFieldFound {
		t.Errorf("Discover = %+v, %v", disc, err)
	}
}

// The contact's opportunity in deal mode is its oldest by createdAt, whatever its status: GHL's ids are
// not time-ordered and GET /opportunities/search answers open ones only unless status=all is asked.
func TestGoHighLevelDealModeMovesTheOldestOpportunityByCreatedAt(t *testing.T) {
	t.Parallel()
	fake, d := newGHL(t, crmfake.GHLOptions{Pipelines: []crmfake.GHLPipeline{{ID: "p1", Name: "Leads", Stages: []string{"s1", "s2", "s3"}}}},
		func(c *crm.Config) {
			c.StageMode, c.Pipeline = crm.StageModeDeal, "p1"
			c.StageMap = map[string]string{"Discovered": "s1", "Engaged": "s2", "SQL": "s3"}
		})
	id := fake.AddContact(crmfake.GHLContact{Email: "jane@example.com"})
	t0 := time.Now().Add(-time.Hour)
	var oldest string
	for i, st := range []string{"won", "open", "open"} {
		o := fake.AddOpportunity(crmfake.GHLOpportunity{Name: "o", ContactID: id, PipelineID: "p1", PipelineStageID: "s1",
			Status: st, CreatedAt: t0.Add(time.Duration(i) * time.Minute)})
		if i == 0 {
			oldest = o
		}
	}
	c := jane()
	c.RemoteID, c.Stage = id, "SQL"
	r := upsertOne(t, d, c)
	mustOK(t, r)
	for _, o := range fake.Opportunities() {
		if want := map[bool]string{true: "s3", false: "s1"}[o.ID == oldest]; o.PipelineStageID != want {
			t.Errorf("opportunity %s (%s, created %s) at %s, want %s", o.ID, o.Status, o.CreatedAt.Format(time.TimeOnly), o.PipelineStageID, want)
		}
	}
	if r.Written[crm.PrevDealID] != oldest {
		t.Errorf("Written deal id %q, want the oldest opportunity %q", r.Written[crm.PrevDealID], oldest)
	}
}

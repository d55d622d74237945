package crm_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/leadgate/leadgate/crm"
	"github.com/leadgate/leadgate/crm/crmfake"
)

// Tests of the adapter against what ActiveCampaign's v3 reference says; each failed on the adapter before
// it was brought in line.

// requestLog is a fake that records the requests it answered.
type requestLog interface{ Requests() []crmfake.Request }

// requestsTo returns the requests to method path, in order.
func requestsTo(fake requestLog, method, path string) []crmfake.Request {
	var out []crmfake.Request
	for _, r := range fake.Requests() {
		if r.Method == method && r.Path == path {
			out = append(out, r)
		}
	}
	return out
}

func phoneOnly(id, phone string) crm.Contact {
	return crm.Contact{LeadgateID: id, Version: 1, Phone: phone, FirstName: "Pat", Stage: "Discovered"}
}

// A phone-only lead at an account that cannot hold a contact without an email is a fact of the
// destination's setup (every such lead fails the same way), not a contact to dead-letter or retry.
func TestActiveCampaignPhoneOnlyLeadWithoutTheNullEmailOptionIsASetupFault(t *testing.T) {
	t.Parallel()
	fake, d := newAC(t, crmfake.ACOptions{})
	r := upsertOne(t, d, phoneOnly("lg-p", "+14155550134"))
	if crm.ClassOf(r.Err) != crm.Setup || r.Err == nil || !strings.Contains(r.Err.Error(), "allow_null_email") {
		t.Errorf("Err = %v, want Setup naming allow_null_email", r.Err)
	}
	if n := len(fake.Contacts()); n != 0 {
		t.Errorf("%d contacts created", n)
	}
	// The destination says the account allows it, the account does not: still a Setup fault.
	fake, d = newAC(t, crmfake.ACOptions{}, func(c *crm.Config) { c.AllowNullEmail = true })
	if r := upsertOne(t, d, phoneOnly("lg-p", "+14155550134")); crm.ClassOf(r.Err) != crm.Setup || r.Err == nil {
		t.Errorf("account refusing a phone-only contact: Err = %v, want Setup", r.Err)
	}
	if n := len(fake.Contacts()); n != 0 {
		t.Errorf("%d contacts created", n)
	}
}

// With the option, a phone-only contact is created with allowNullEmail, as the reference requires.
func TestActiveCampaignPhoneOnlyLeadIsCreatedWithAllowNullEmail(t *testing.T) {
	t.Parallel()
	fake, d := newAC(t, crmfake.ACOptions{AllowNullEmail: true}, func(c *crm.Config) { c.AllowNullEmail = true })
	r := upsertOne(t, d, phoneOnly("lg-p", "+14155550134"))
	mustOK(t, r)
	posts := requestsTo(fake, http.MethodPost, "/api/3/contacts")
	var body struct {
		Contact map[string]any `json:"contact"`
	}
	if len(posts) != 1 || json.Unmarshal(posts[0].Body, &body) != nil || body.Contact["allowNullEmail"] != true {
		t.Fatalf("POST /contacts bodies %v, want one with contact.allowNullEmail true", posts)
	}
	if cs := fake.Contacts(); len(cs) != 1 || cs[0].ID != r.RemoteID || cs[0].Email != "" {
		t.Errorf("contacts %+v", cs)
	}
}

// AC keeps a phone as typed and its phone filter is a prefix match on that string: a phone-only lead we
// hold as +14155550134 finds the contact stored as "(415) 555-0134" and the other usual forms.
func TestActiveCampaignPhoneOnlyLeadFindsThePhoneAsTyped(t *testing.T) {
	t.Parallel()
	for _, stored := range []string{"(415) 555-0134", "415-555-0134", "415.555.0134", "4155550134", "+1 (415) 555-0134",
		"+1 415-555-0134", "14155550134"} {
		t.Run(stored, func(t *testing.T) {
			fake, d := newAC(t, crmfake.ACOptions{})
			fake.AddContact(crmfake.ACContact{Email: "near@example.com", Phone: stored + "9"}) // a longer number: not ours
			id := fake.AddContact(crmfake.ACContact{Email: "pat@example.com", Phone: stored})
			r := upsertOne(t, d, phoneOnly("lg-p", "+14155550134"))
			mustOK(t, r)
			if r.Created || r.RemoteID != id || len(fake.Contacts()) != 2 {
				t.Errorf("Created=%v RemoteID=%q (want %s), %d contacts", r.Created, r.RemoteID, id, len(fake.Contacts()))
			}
		})
	}
}

// A new lead with an email costs one search and one write: at an account without phone-only contacts a
// phone match would carry another email (another person), so the phone is not looked up.
func TestActiveCampaignNewLeadCostsOneSearchAndOneWrite(t *testing.T) {
	t.Parallel()
	fake, d := newAC(t, crmfake.ACOptions{})
	mustOK(t, upsertOne(t, d, liveLead(0))) // loads the field list
	before := len(fake.Requests())
	r := upsertOne(t, d, liveLead(1))
	mustOK(t, r)
	reqs := fake.Requests()[before:]
	if len(reqs) != 2 || r.Calls != 2 || reqs[0].Path != "/api/3/contacts" || reqs[1].Path != "/api/3/contact/sync" {
		t.Errorf("requests %v (Calls %d), want GET /contacts?email= and POST /contact/sync", paths(reqs), r.Calls)
	}
	// A contact AC holds by email that leadgate has not linked: its field values are read, since it may be
	// leadgate's own write whose answer was lost (then the values already match and nothing is written).
	lead := liveLead(2)
	lead.FirstTouch = nil
	fake.AddContact(crmfake.ACContact{Email: lead.Email})
	before = len(fake.Requests())
	r = upsertOne(t, d, lead)
	mustOK(t, r)
	if reqs := fake.Requests()[before:]; len(reqs) != 3 || r.Created || reqs[1].Method != "GET" {
		t.Errorf("existing contact: requests %v, want search, read and update", paths(reqs))
	}
}

func paths(reqs []crmfake.Request) []string {
	var out []string
	for _, r := range reqs {
		out = append(out, r.Method+" "+r.Path+"?"+r.Query)
	}
	return out
}

// Deals: where the pipeline does not auto-assign, the deal names an owner (the configured one, else the
// API token's user); its currency is the pipeline's.
func TestActiveCampaignDealNamesAnOwnerWhereThePipelineDoesNotAutoAssign(t *testing.T) {
	t.Parallel()
	pipes := []crmfake.ACPipeline{{ID: "7", Title: "Leads", Currency: "eur", NoAutoAssign: true, Stages: []crmfake.ACField{{ID: "71"}, {ID: "72"}}}}
	users := []crmfake.ACUser{{ID: "1", Username: "api"}, {ID: "9", Username: "sales"}}
	for _, tc := range []struct{ owner, want string }{{"", "1"}, {"9", "9"}} {
		fake, d := newAC(t, crmfake.ACOptions{Pipelines: pipes, Users: users}, func(c *crm.Config) {
			c.StageMode, c.Pipeline, c.DealOwner = crm.StageModeDeal, "7", tc.owner
			c.StageMap = map[string]string{"Discovered": "71", "Engaged": "72", "SQL": "72"}
		})
		mustOK(t, upsertOne(t, d, jane()))
		if deals := fake.Deals(); len(deals) != 1 || deals[0].Owner != tc.want || deals[0].Currency != "eur" || deals[0].Stage != "71" {
			t.Errorf("DealOwner %q: deals %+v, want owner %s in eur", tc.owner, deals, tc.want)
		}
	}
}

// A mapped deal stage the pipeline lacks is a fault of the destination.
func TestActiveCampaignDealStageMissingFromThePipelineIsASetupFault(t *testing.T) {
	t.Parallel()
	pipes := []crmfake.ACPipeline{{ID: "7", Title: "Leads", Stages: []crmfake.ACField{{ID: "71"}}}}
	_, d := newAC(t, crmfake.ACOptions{Pipelines: pipes}, func(c *crm.Config) {
		c.StageMode, c.Pipeline = crm.StageModeDeal, "7"
		c.StageMap = map[string]string{"Discovered": "79"}
	})
	if r := upsertOne(t, d, jane()); crm.ClassOf(r.Err) != crm.Setup || !strings.Contains(r.Err.Error(), `"79"`) {
		t.Errorf("Err = %v, want Setup naming stage 79", r.Err)
	}
}

// Bulk import: field ids go as integers; a resync or backfill never starts the account's automations, a
// live burst keeps them unless the destination says never.
func TestActiveCampaignBulkImportIntegerFieldIDsAndAutomations(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name     string
		setting  string
		live     bool
		exclude  bool
		wantRuns int
	}{
		{"backfill", "", false, true, 0},
		{"live burst", "", true, false, 12},
		{"live burst, automations never", crm.AutomationsNever, true, true, 0},
		{"backfill, automations always", crm.AutomationsAlways, false, false, 12},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fake, d := newAC(t, crmfake.ACOptions{ImportPolls: 1}, func(c *crm.Config) { c.Automations = tc.setting })
			for _, r := range bulkOf(t, d).BulkImport(context.Background(), bulkContacts(12), crm.BulkOptions{Live: tc.live}) {
				mustOK(t, r)
			}
			imports := requestsTo(fake, http.MethodPost, "/api/3/import/bulk_import")
			var body struct {
				Contacts []struct {
					Fields []struct {
						ID any `json:"id"`
					} `json:"fields"`
				} `json:"contacts"`
				ExcludeAutomations *bool `json:"exclude_automations"`
			}
			// The second import sets the first-touch values of the contacts the first created: never automations.
			if len(imports) != 2 || !strings.Contains(string(imports[1].Body), `"exclude_automations":true`) || json.Unmarshal(imports[0].Body, &body) != nil {
				t.Fatalf("import requests %d, want the import and its first-touch import (no automations)", len(imports))
			}
			if body.ExcludeAutomations == nil || *body.ExcludeAutomations != tc.exclude {
				t.Errorf("exclude_automations %v, want %v", body.ExcludeAutomations, tc.exclude)
			}
			for _, c := range body.Contacts {
				for _, f := range c.Fields {
					if _, ok := f.ID.(float64); !ok {
						t.Fatalf("field id %#v, want a JSON integer", f.ID)
					}
				}
			}
			if runs := len(fake.AutomationRuns()); runs != tc.wantRuns {
				t.Errorf("automation runs %d, want %d", runs, tc.wantRuns)
			}
		})
	}
	// A small backfill batch still goes through the importer: the Contacts API would start the automations.
	fake, d := newAC(t, crmfake.ACOptions{ImportPolls: 1})
	for _, r := range bulkOf(t, d).BulkImport(context.Background(), bulkContacts(3), crm.BulkOptions{}) {
		mustOK(t, r)
	}
	if len(fake.BulkImports()) != 2 || len(fake.AutomationRuns()) != 0 {
		t.Errorf("small backfill: %d imports, %d automation runs; want 2 (with its first-touch import) and 0", len(fake.BulkImports()), len(fake.AutomationRuns()))
	}
}

// A batch over the importer's 400,000-byte payload limit goes out as several imports, each under it; the
// created contacts' ids are read back with the reference's ids[] list form, not searched one by one.
func TestActiveCampaignBulkImportSplitsAtThePayloadLimit(t *testing.T) {
	t.Parallel()
	fake, d := newAC(t, crmfake.ACOptions{ImportPolls: 1})
	batch := bulkContacts(250)
	for i := range batch {
		batch[i].Fields["budget"] = strings.Repeat("b", 2000)
	}
	for _, r := range bulkOf(t, d).BulkImport(context.Background(), batch, crm.BulkOptions{}) {
		mustOK(t, r)
	}
	imports := requestsTo(fake, http.MethodPost, "/api/3/import/bulk_import")
	if len(imports) < 2 {
		t.Fatalf("%d import requests, want the batch split", len(imports))
	}
	for _, r := range imports {
		if len(r.Body) >= 400_000 || r.Status != 200 {
			t.Errorf("import of %d bytes answered %d", len(r.Body), r.Status)
		}
	}
	if n := len(fake.Contacts()); n != 250 {
		t.Errorf("%d contacts, want 250", n)
	}
	for _, r := range requestsTo(fake, http.MethodGet, "/api/3/contacts") {
		if strings.Contains(r.Query, "email=") {
			t.Fatalf("a created contact was searched by email (%s): the ids[] read-back missed it", r.Query)
		}
	}
}

// Reads of a contact's tags, lists and deals, and of pipeline stages, follow every page.
func TestActiveCampaignReadsPastTheFirstPage(t *testing.T) {
	t.Parallel()
	stages := make([]crmfake.ACField, 130)
	for i := range stages {
		stages[i] = crmfake.ACField{ID: fmt.Sprint(1000 + i), Title: fmt.Sprint("s", i)}
	}
	pipes := []crmfake.ACPipeline{{ID: "7", Title: "Leads", Stages: stages}, {ID: "8", Title: "Other", Stages: []crmfake.ACField{{ID: "81"}}}}
	fake, d := newAC(t, crmfake.ACOptions{Pipelines: pipes}, func(c *crm.Config) {
		c.StageMode, c.Pipeline = crm.StageModeDeal, "7"
		c.StageMap = map[string]string{"Discovered": "1120", "Engaged": "1125", "SQL": "1129"}
	})
	contact := fake.AddContact(crmfake.ACContact{Email: "jane@example.com"})
	for range 120 {
		fake.AddDeal(crmfake.ACDeal{Contact: contact, Group: "8", Stage: "81"})
	}
	ours := fake.AddDeal(crmfake.ACDeal{Contact: contact, Group: "7", Stage: "1120"})
	c := jane()
	c.Stage = "Engaged"
	mustOK(t, upsertOne(t, d, c))
	var inOurs []crmfake.ACDeal
	for _, dl := range fake.Deals() {
		if dl.Group == "7" {
			inOurs = append(inOurs, dl)
		}
	}
	if len(inOurs) != 1 || inOurs[0].ID != ours || inOurs[0].Stage != "1125" {
		t.Errorf("deals in the pipeline %+v, want deal %s moved to 1125 (found past the first page)", inOurs, ours)
	}
	disc, err := d.Discover(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(disc.Pipelines) != 2 || len(disc.Pipelines[0].Stages) != 130 {
		t.Errorf("Discover: %d pipelines, %d stages in the first; want 2 and 130", len(disc.Pipelines), len(disc.Pipelines[0].Stages))
	}

	acts := d.(crm.ActionRunner)
	var tagID string
	for i := range 130 {
		id := fake.AddTag(fmt.Sprintf("t%03d", i))
		if i == 125 {
			tagID = id
		}
		acCallAPI(t, fake, http.MethodPost, "/api/3/contactTags", map[string]any{"contactTag": map[string]any{"contact": contact, "tag": id}})
		fake.SetListStatus(fmt.Sprint(i+1), contact, "1")
	}
	fake.SetListStatus("131", contact, "2") // unsubscribed, past the first page
	before := len(requestsTo(fake, http.MethodPost, "/api/3/contactTags"))
	if err := acts.RunAction(context.Background(), contact, crm.Action{Name: crm.ActionAddTag, Params: map[string]string{"tag": "t125"}}); err != nil {
		t.Fatal(err)
	}
	if n := len(requestsTo(fake, http.MethodPost, "/api/3/contactTags")) - before; n != 0 {
		t.Errorf("tag %s the contact has (past the first page) was attached again", tagID)
	}
	err = acts.RunAction(context.Background(), contact, crm.Action{Name: crm.ActionAddToList, Params: map[string]string{"list": "131"}})
	if crm.ClassOf(err) != crm.Invalid || len(fake.ListMembers("131")) != 0 {
		t.Errorf("unsubscribed list past the first page: err %v, members %v; want left alone", err, fake.ListMembers("131"))
	}
}

func acCallAPI(t *testing.T, fake *crmfake.ActiveCampaign, method, path string, body any) {
	t.Helper()
	b, _ := json.Marshal(body)
	req, _ := http.NewRequest(method, fake.URL+path, strings.NewReader(string(b)))
	req.Header.Set("Api-Token", "ac-token")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode >= 300 {
		t.Fatalf("%s %s: %d", method, path, resp.StatusCode)
	}
}

// Tag names match without regard to letter case: the account's "Webinar" is the lead's "webinar".
func TestActiveCampaignTagNamesMatchCaseInsensitively(t *testing.T) {
	t.Parallel()
	fake, d := newAC(t, crmfake.ACOptions{})
	want := fake.AddTag("Webinar")
	r := upsertOne(t, d, jane())
	mustOK(t, r)
	if n := len(requestsTo(fake, http.MethodPost, "/api/3/tags")); n != 0 {
		t.Errorf("%d tags created; the account has Webinar (%s)", n, want)
	}
	if c, _ := fake.Contact("jane@example.com"); len(c.Tags) != 1 || c.Tags[0] != "Webinar" {
		t.Errorf("contact tags %v, want [Webinar]", c.Tags)
	}
}

// A custom field the mapping or the stage field names and the account lacks is a Setup fault naming the
// field and its setting, with no write; once the fields exist, the next contact goes through without
// rebuilding the destination.
func TestActiveCampaignMissingMappedOrStageFieldIsASetupFault(t *testing.T) {
	t.Parallel()
	_, d := newAC(t, crmfake.ACOptions{Fields: acFields[:2]}, func(c *crm.Config) { c.StageField = "99" })
	if r := upsertOne(t, d, jane()); crm.ClassOf(r.Err) != crm.Setup || !strings.Contains(r.Err.Error(), `"99" (stage_field)`) {
		t.Errorf("stage field id the account lacks: Err = %v, want Setup naming stage_field 99", r.Err)
	}
	fake, d := newAC(t, crmfake.ACOptions{Fields: acFields[:2]}, func(c *crm.Config) {
		c.StageField = "LIFECYCLE"
		c.FieldMap = map[string]string{"budget": "BUDGET"}
	})
	r := upsertOne(t, d, jane())
	if crm.ClassOf(r.Err) != crm.Setup || !strings.Contains(r.Err.Error(), `"LIFECYCLE" (stage_field)`) ||
		!strings.Contains(r.Err.Error(), `"BUDGET" (field_map[budget])`) {
		t.Fatalf("Err = %v, want Setup naming stage_field LIFECYCLE and field_map[budget]", r.Err)
	}
	if n := len(fake.Mutations()); n != 0 {
		t.Errorf("%d writes at a half-configured account", n)
	}
	// A batch stops at the fault: the destination pauses, and the rest would fail the same way.
	before := len(fake.Requests())
	second := jane()
	second.LeadgateID, second.Email = "lg-2", "second@example.com"
	res := d.Upsert(context.Background(), []crm.Contact{jane(), second})
	if crm.ClassOf(res[1].Err) != crm.Setup || res[1].Err != res[0].Err || len(fake.Requests())-before != 1 {
		t.Errorf("batch: second result %v after %d requests; want the same Setup error after the one field listing",
			res[1].Err, len(fake.Requests())-before)
	}
	stage := fake.AddField(crmfake.ACField{Title: "Lifecycle", Perstag: "LIFECYCLE"})
	fake.AddField(crmfake.ACField{Title: "Budget", Perstag: "BUDGET"})
	mustOK(t, upsertOne(t, d, jane()))
	if c, _ := fake.Contact("jane@example.com"); c.Fields[stage] != "discovered" {
		t.Errorf("after the fields were added: %v, want the stage written", c.Fields)
	}
}

// A write whose answer is lost after it landed (timeout after commit) is looked up before anything is sent
// again: the relay's retry finds the record, never creates a second one, and a contact/sync is not
// repeated (which would start the account's automations twice).
func TestActiveCampaignTimeoutAfterCommitIsVerifiedNotRepeated(t *testing.T) {
	t.Parallel()
	short := func(c *crm.Config) {
		c.AllowNullEmail, c.HTTPClient = true, &http.Client{Timeout: 300 * time.Millisecond}
	}
	t.Run("phone-only create", func(t *testing.T) {
		fake, d := newAC(t, crmfake.ACOptions{AllowNullEmail: true}, short)
		fake.TimeoutAfterCommit(http.MethodPost, "/api/3/contacts")
		r := upsertOne(t, d, phoneOnly("lg-p", "+14155550134"))
		if r.Err != nil { // as the relay would: retry after a failure
			r = upsertOne(t, d, phoneOnly("lg-p", "+14155550134"))
		}
		mustOK(t, r)
		if cs := fake.Contacts(); len(cs) != 1 || cs[0].ID != r.RemoteID || !r.Created {
			t.Errorf("contacts %+v, result %+v; want the one record, reported created", cs, r)
		}
		if n := len(requestsTo(fake, http.MethodPost, "/api/3/contacts")); n != 1 {
			t.Errorf("%d POST /contacts, want 1", n)
		}
	})
	t.Run("contact/sync", func(t *testing.T) {
		fake, d := newAC(t, crmfake.ACOptions{}, short)
		fake.TimeoutAfterCommit(http.MethodPost, "/api/3/contact/sync")
		c := jane()
		c.Tags, c.Note = nil, ""
		mustOK(t, upsertOne(t, d, c))
		if n := len(requestsTo(fake, http.MethodPost, "/api/3/contact/sync")); n != 1 || len(fake.AutomationRuns()) != 1 {
			t.Errorf("%d contact/sync, %d automation runs; want 1 and 1", n, len(fake.AutomationRuns()))
		}
	})
	t.Run("tag and note", func(t *testing.T) {
		fake, d := newAC(t, crmfake.ACOptions{}, short)
		fake.TimeoutAfterCommit(http.MethodPost, "/api/3/contactTags")
		fake.TimeoutAfterCommit(http.MethodPost, "/api/3/notes")
		r := upsertOne(t, d, jane())
		if r.Err != nil {
			next := jane()
			next.RemoteID, next.Previous = r.RemoteID, r.Written
			r = upsertOne(t, d, next)
		}
		mustOK(t, r)
		if c, _ := fake.Contact("jane@example.com"); len(c.Tags) != 1 || len(c.Notes) != 1 {
			t.Errorf("tags %v notes %v, want one of each", c.Tags, c.Notes)
		}
		if n := len(requestsTo(fake, http.MethodPost, "/api/3/notes")); n != 1 {
			t.Errorf("%d POST /notes, want 1", n)
		}
	})
	t.Run("deal create", func(t *testing.T) {
		pipes := []crmfake.ACPipeline{{ID: "7", Title: "Leads", Stages: []crmfake.ACField{{ID: "71"}}}}
		fake, d := newAC(t, crmfake.ACOptions{Pipelines: pipes}, short, func(c *crm.Config) {
			c.StageMode, c.Pipeline, c.StageMap = crm.StageModeDeal, "7", map[string]string{"Discovered": "71"}
		})
		fake.TimeoutAfterCommit(http.MethodPost, "/api/3/deals")
		r := upsertOne(t, d, jane())
		mustOK(t, r)
		if deals := fake.Deals(); len(deals) != 1 || r.Written[crm.PrevDealID] != deals[0].ID {
			t.Errorf("deals %+v, written %v; want the one deal recorded", deals, r.Written)
		}
	})
}

// A 2xx whose body shows the record without our write (a silent no-op) is reported, not recorded as
// written.
func TestActiveCampaignSilentNoOpIsCaught(t *testing.T) {
	t.Parallel()
	fake, d := newAC(t, crmfake.ACOptions{})
	first := upsertOne(t, d, jane())
	mustOK(t, first)
	fake.FailNext(crmfake.Response{Method: http.MethodPut, Path: "/api/3/contacts/" + first.RemoteID, Status: 200,
		Body: `{"contact":{"id":"` + first.RemoteID + `"},"fieldValues":[{"field":"2","value":"2020-01-01T00:00:00Z"}]}`})
	next := jane()
	next.RemoteID, next.Previous, next.Stage = first.RemoteID, first.Written, "SQL"
	r := upsertOne(t, d, next)
	if crm.ClassOf(r.Err) != crm.Transient || r.Err == nil || !strings.Contains(r.Err.Error(), "does not hold the write") {
		t.Errorf("Err = %v, want a transient error saying the write did not land", r.Err)
	}
}

// CheckSetup names every missing piece at once, without writing, and is nil once the account is complete.
func TestActiveCampaignCheckSetupListsEveryMissingPiece(t *testing.T) {
	t.Parallel()
	fake, d := newAC(t, crmfake.ACOptions{Fields: acFields[1:2]}, func(c *crm.Config) {
		c.StageField = "LIFECYCLE"
		c.FieldMap = map[string]string{"budget": "BUDGET", "utm_source": "UTM_SOURCE"}
	})
	checker := d.(crm.SetupChecker)
	err := checker.CheckSetup(context.Background())
	for _, want := range []string{`"last_automation_source" (loop_field)`, `"LIFECYCLE" (stage_field)`, `"BUDGET" (field_map[budget])`,
		`"UTM_SOURCE" (field_map[utm_source])`} {
		if crm.ClassOf(err) != crm.Setup || !strings.Contains(err.Error(), want) {
			t.Errorf("CheckSetup = %v, want Setup naming %s", err, want)
		}
	}
	if len(fake.Mutations()) != 0 {
		t.Error("CheckSetup wrote")
	}
	if err := d.(crm.LoopFieldCreator).CreateLoopFields(context.Background()); err != nil {
		t.Fatal(err)
	}
	for _, f := range []crmfake.ACField{{Title: "Lifecycle", Perstag: "LIFECYCLE"}, {Title: "Budget", Perstag: "BUDGET"}, {Title: "UTM", Perstag: "UTM_SOURCE"}} {
		fake.AddField(f)
	}
	if err := checker.CheckSetup(context.Background()); err != nil {
		t.Errorf("complete account: CheckSetup = %v", err)
	}
	pipes := []crmfake.ACPipeline{{ID: "7", Title: "Leads", Stages: []crmfake.ACField{{ID: "71"}}}}
	_, d = newAC(t, crmfake.ACOptions{Pipelines: pipes}, func(c *crm.Config) {
		c.StageMode, c.Pipeline, c.StageMap = crm.StageModeDeal, "7", map[string]string{"Discovered": "71", "SQL": "79"}
	})
	if err := d.(crm.SetupChecker).CheckSetup(context.Background()); crm.ClassOf(err) != crm.Setup || !strings.Contains(err.Error(), `"79" (stage_map[SQL])`) {
		t.Errorf("deal mode: CheckSetup = %v, want stage 79 named", err)
	}
}

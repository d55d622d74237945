package crm_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/leadgate/leadgate/crm"
	"github.com/leadgate/leadgate/crm/crmfake"
)

// A location where two people share one phone: Bob's record holds the phone; Jane's lead brings the same
// phone and her own email. Bob's record is never written (GHL's upsert would have matched it by phone and
// replaced his email, names and first-touch fields); Jane gets her own record.
func TestGoHighLevelSharedPhoneNeverWritesTheOtherPersonsRecord(t *testing.T) {
	t.Parallel()
	for _, allow := range []bool{false, true} {
		name := map[bool]string{false: "duplicates not allowed", true: "duplicates allowed"}[allow]
		t.Run(name, func(t *testing.T) {
			fake, d := newGHL(t, crmfake.GHLOptions{AllowDuplicates: allow})
			bob := crmfake.GHLContact{Email: "bob@example.com", Phone: "+14155550134", FirstName: "Bob", LastName: "Roe",
				CustomFields: map[string]string{"cfUTM": "google"}}
			bobID := fake.AddContact(bob)
			r := upsertOne(t, d, jane())
			mustOK(t, r)
			got, _ := fake.ContactByID(bobID)
			if got.Email != bob.Email || got.Phone != bob.Phone || got.FirstName != "Bob" || got.LastName != "Roe" ||
				got.CustomFields["cfUTM"] != "google" || len(got.CustomFields) != 1 || len(got.Tags) != 0 || len(got.Notes) != 0 {
				t.Errorf("Bob's record was written: %+v", got)
			}
			for _, m := range fake.Mutations() {
				if m.ContactID == bobID {
					t.Errorf("%s wrote Bob's record", m.Path)
				}
			}
			jr, ok := fake.Contact("jane@example.com")
			if !ok || !r.Created || r.RemoteID != jr.ID || jr.FirstName != "Jane" || jr.CustomFields["cfUTM"] != "ads" {
				t.Fatalf("Jane: Created=%v RemoteID=%q record %+v", r.Created, r.RemoteID, jr)
			}
			if allow {
				if jr.Phone != "+14155550134" || len(r.Conflicts) != 0 {
					t.Errorf("duplicates allowed: Jane's phone %q conflicts %v, want the shared phone on her record", jr.Phone, r.Conflicts)
				}
				return
			}
			if jr.Phone != "" || len(r.Conflicts) != 1 || r.Conflicts[0].Field != "phone" || !strings.Contains(r.Conflicts[0].Remote, bobID) {
				t.Errorf("Jane's phone %q conflicts %v, want the phone left out and reported as held by %s", jr.Phone, r.Conflicts, bobID)
			}
			if _, wrote := r.Written["phone"]; wrote {
				t.Errorf("Written %v claims the phone", r.Written)
			}
		})
	}
}

// Jane's own record exists but the search index does not show it yet, and Bob holds her phone: create
// (sent without the phone) is refused as a duplicate of Jane's record, which is then updated; the phone
// is refused again there (Bob holds it) and reported once. Bob's record is never written.
func TestGoHighLevelSharedPhoneWithALaggingIndexUpdatesOnlyTheLeadsRecord(t *testing.T) {
	t.Parallel()
	fake, d := newGHL(t, crmfake.GHLOptions{})
	bobID := fake.AddContact(crmfake.GHLContact{Email: "bob@example.com", Phone: "+14155550134", FirstName: "Bob"})
	janeID := fake.AddContact(crmfake.GHLContact{Email: "jane@example.com", CustomFields: map[string]string{"cfUTM": "google"}})
	fake.HideFromSearch(janeID)
	r := upsertOne(t, d, jane())
	mustOK(t, r)
	if r.Created || r.RemoteID != janeID || len(fake.Contacts()) != 2 {
		t.Fatalf("Created=%v RemoteID=%q contacts %+v", r.Created, r.RemoteID, fake.Contacts())
	}
	got, _ := fake.ContactByID(janeID)
	if got.FirstName != "Jane" || got.Phone != "" || got.CustomFields["cfUTM"] != "google" {
		t.Errorf("Jane's record %+v: want her names written, no phone, first touch kept", got)
	}
	if len(r.Conflicts) != 1 || r.Conflicts[0].Field != "phone" || !strings.Contains(r.Conflicts[0].Remote, bobID) {
		t.Errorf("Conflicts = %v, want the phone once, held by %s", r.Conflicts, bobID)
	}
	for _, m := range fake.Mutations() {
		if m.ContactID == bobID {
			t.Errorf("%s wrote Bob's record", m.Path)
		}
	}
}

var ghlTypedFields = append(slices.Clone(ghlFields),
	crmfake.GHLField{ID: "cfInterests", Name: "Interests", FieldKey: "contact.interests", DataType: "MULTIPLE_OPTIONS", Options: []string{"a", "b", "c"}},
	crmfake.GHLField{ID: "cfConsent", Name: "Consent", FieldKey: "contact.consent", DataType: "CHECKBOX", Options: []string{"email", "sms"}},
	crmfake.GHLField{ID: "cfBudget", Name: "Budget", FieldKey: "contact.budget", DataType: "MONETORY"},
)

// Multi-select and checkbox values go as arrays of strings (MultiSelectField / CheckboxField), numbers
// as numbers; read back, they compare as sets, so an unchanged value is not written again.
func TestGoHighLevelMultiSelectAndCheckboxFieldsGoAsArrays(t *testing.T) {
	t.Parallel()
	fake, d := newGHL(t, crmfake.GHLOptions{Fields: ghlTypedFields}, func(c *crm.Config) {
		c.FieldMap = map[string]string{"utm_source": "cfUTM", "interests": "contact.interests", "consent": "Consent", "budget": "cfBudget"}
	})
	c := jane()
	c.Fields = map[string]string{"interests": "b;a", "consent": "sms", "budget": "1200.50"}
	r := upsertOne(t, d, c)
	mustOK(t, r)
	got, _ := fake.Contact("jane@example.com")
	if !slices.Equal(got.CustomArrays["cfInterests"], []string{"a", "b"}) || !slices.Equal(got.CustomArrays["cfConsent"], []string{"sms"}) ||
		got.CustomFields["cfBudget"] != "1200.5" {
		t.Fatalf("stored arrays %v scalars %v", got.CustomArrays, got.CustomFields)
	}
	before := len(fake.Mutations())
	c.RemoteID, c.Previous, c.Note = r.RemoteID, r.Written, ""
	c.Fields["interests"] = "a;b"
	r2 := upsertOne(t, d, c)
	mustOK(t, r2)
	if n := len(fake.Mutations()) - before; n != 0 || len(r2.Conflicts) != 0 {
		t.Errorf("an unchanged contact (options in another order) was written %d times, conflicts %v", n, r2.Conflicts)
	}
}

// PUT /contacts/{id} carries only what UpdateContactDto declares: no companyName (the fake refuses it,
// as GHL does). The company is set when the record is created.
func TestGoHighLevelUpdateSendsOnlyDeclaredProperties(t *testing.T) {
	t.Parallel()
	fake, d := newGHL(t, crmfake.GHLOptions{})
	c := jane()
	c.Company = "Acme"
	r := upsertOne(t, d, c)
	mustOK(t, r)
	if got, _ := fake.Contact("jane@example.com"); got.CompanyName != "Acme" {
		t.Errorf("company on create %q, want Acme", got.CompanyName)
	}
	c.RemoteID, c.Previous, c.Company, c.LastName = r.RemoteID, r.Written, "Acme Two", "Smith"
	r2 := upsertOne(t, d, c)
	mustOK(t, r2)
	got, _ := fake.Contact("jane@example.com")
	if got.LastName != "Smith" || got.CompanyName != "Acme" {
		t.Errorf("after the update: lastName %q company %q, want Smith and the company left as created", got.LastName, got.CompanyName)
	}
	if r2.Written["companyName"] != "Acme" {
		t.Errorf("Written company %q, want what was last written (Acme)", r2.Written["companyName"])
	}
	puts := 0
	for _, m := range fake.Mutations() {
		if strings.HasPrefix(m.Path, "/contacts/ct") {
			puts++
			if slices.Contains(m.Fields, "companyName") || slices.Contains(m.Fields, "locationId") {
				t.Errorf("PUT sent %v", m.Fields)
			}
		}
	}
	if puts != 1 {
		t.Errorf("%d PUTs, want 1", puts)
	}
}

// A phone-only lead whose record the lookups miss (the search index lags) is upserted by phone; upsert
// answers new:false, so the record is re-read and re-planned: its first-touch fields are kept, nothing
// is created, and no opportunity is created blindly.
func TestGoHighLevelPhoneOnlyUpsertAnsweringNotNewIsReplanned(t *testing.T) {
	t.Parallel()
	fake, d := newGHL(t, crmfake.GHLOptions{})
	id := fake.AddContact(crmfake.GHLContact{Phone: "+14155550134", FirstName: "J", CustomFields: map[string]string{"cfUTM": "google"}})
	fake.HideFromSearch(id)
	c := jane()
	c.Email = ""
	r := upsertOne(t, d, c)
	mustOK(t, r)
	got := fake.Contacts()
	if r.Created || r.RemoteID != id || len(got) != 1 {
		t.Fatalf("Created=%v RemoteID=%q contacts %+v", r.Created, r.RemoteID, got)
	}
	if got[0].CustomFields["cfUTM"] != "google" || got[0].FirstName != "Jane" || got[0].CustomFields["cfStage"] != "Discovered" {
		t.Errorf("record after the re-plan %+v: want first touch kept (google), the rest written", got[0])
	}
	if r.Written["cfUTM"] != "" {
		t.Errorf("Written claims first-touch %q", r.Written["cfUTM"])
	}
	for _, req := range fake.Requests() {
		if req.Path == "/contacts/upsert" && strings.Contains(string(req.Body), "cfUTM") {
			t.Errorf("upsert carried a first-touch field: %s", req.Body)
		}
	}
}

// A create that committed but answered 422, or whose answer was lost, is checked with a lookup: the
// record it made is used (re-planned), never a second one. A 422 that created nothing stays a 422 and
// says it was checked.
func TestGoHighLevelUntrustedCreateAnswersAreCheckedByARead(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name   string
		answer crmfake.Response
	}{
		// Path "": the first POST, the contact write (the lookups before it are GETs).
		{"422 after the create", crmfake.Response{Method: http.MethodPost, Status: 422,
			Body: `{"statusCode":422,"message":["Unprocessable Entity"],"error":"Unprocessable Entity"}`}},
		{"answer lost after the create", crmfake.Response{Method: http.MethodPost}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fake, d := newGHL(t, crmfake.GHLOptions{})
			fake.AnswerAfterCommit(tc.answer)
			r := upsertOne(t, d, jane())
			mustOK(t, r)
			got := fake.Contacts()
			if len(got) != 1 || r.RemoteID != got[0].ID || !r.Created || len(got[0].Tags) != 1 || len(got[0].Notes) != 1 {
				t.Fatalf("Created=%v RemoteID=%q contacts %+v", r.Created, r.RemoteID, got)
			}
			creates := 0
			for _, req := range fake.Requests() {
				if req.Method == http.MethodPost && (req.Path == "/contacts/" || req.Path == "/contacts/upsert") {
					creates++
				}
			}
			if creates != 1 {
				t.Errorf("%d create requests, want 1", creates)
			}
		})
	}
	t.Run("timeout after the create", func(t *testing.T) {
		fake, d := newGHL(t, crmfake.GHLOptions{}, func(c *crm.Config) { c.HTTPClient = &http.Client{Timeout: 2 * time.Second} })
		fake.TimeoutAfterCommit(http.MethodPost, "/contacts/")
		r := upsertOne(t, d, jane())
		mustOK(t, r)
		if got := fake.Contacts(); len(got) != 1 || r.RemoteID != got[0].ID || !r.Created {
			t.Errorf("Created=%v RemoteID=%q contacts %+v", r.Created, r.RemoteID, got)
		}
	})
	t.Run("422 that created nothing", func(t *testing.T) {
		fake, d := newGHL(t, crmfake.GHLOptions{})
		fake.FailNext(crmfake.Response{Method: http.MethodPost, Path: "/contacts/", Status: 422,
			Body: `{"statusCode":422,"message":["email must be an email"],"error":"Unprocessable Entity"}`})
		r := upsertOne(t, d, jane())
		if crm.ClassOf(r.Err) != crm.Invalid || !strings.Contains(r.Err.Error(), "checked") || len(fake.Contacts()) != 0 {
			t.Errorf("Err = %v, contacts %d; want the 422, checked, and nothing created", r.Err, len(fake.Contacts()))
		}
	})
	t.Run("lost answer of a create that did not happen", func(t *testing.T) {
		fake, d := newGHL(t, crmfake.GHLOptions{})
		fake.FailNext(crmfake.Response{Method: http.MethodPost, Path: "/contacts/", Status: 502})
		r := upsertOne(t, d, jane())
		if crm.ClassOf(r.Err) != crm.Transient || !strings.Contains(r.Err.Error(), "did not happen") || len(fake.Contacts()) != 0 {
			t.Errorf("Err = %v, contacts %d; want a transient error saying the write did not happen", r.Err, len(fake.Contacts()))
		}
	})
}

// A field the mapping, the loop breaker or the stage names that the location lacks is a Setup fault of
// the destination, with a plain message; so is a deal-mode stage the pipeline lacks.
func TestGoHighLevelMissingSetupIsASetupFault(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		fields []crmfake.GHLField
		mutate func(*crm.Config)
		want   string
	}{
		{"mapped field", ghlFields, func(c *crm.Config) { c.FieldMap = map[string]string{"utm_source": "contact.utm_medium"} }, "field_map utm_source"},
		{"loop-breaker field", ghlFields[1:], nil, "loop-breaker field"},
		{"stage field", ghlFields, func(c *crm.Config) { c.StageField = "contact.stage_x" }, "stage field"},
		{"deal stage", ghlFields, func(c *crm.Config) {
			c.StageMode, c.Pipeline = crm.StageModeDeal, "p1"
			c.StageMap = map[string]string{"Discovered": "s9"}
		}, "not a stage of pipeline"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			mut := []func(*crm.Config){}
			if tc.mutate != nil {
				mut = append(mut, tc.mutate)
			}
			fake, d := newGHL(t, crmfake.GHLOptions{Fields: tc.fields, Pipelines: []crmfake.GHLPipeline{{ID: "p1", Stages: []string{"s1"}}}}, mut...)
			r := upsertOne(t, d, jane())
			if crm.ClassOf(r.Err) != crm.Setup || !strings.Contains(r.Err.Error(), tc.want) {
				t.Errorf("Err = %v, want a setup fault naming %q", r.Err, tc.want)
			}
			if tc.name != "deal stage" && len(fake.Mutations()) != 0 {
				t.Errorf("a contact was written: %+v", fake.Mutations())
			}
		})
	}
}

// A loop-breaker field created after the setup fault (here by another instance, as an operator would) is
// found once the field list is older than the recheck interval, without a restart; the fields are created
// as TEXT contact fields.
func TestGoHighLevelFieldCreatedLaterIsFound(t *testing.T) {
	t.Parallel()
	now := time.Now()
	clock := func(c *crm.Config) { c.Now = func() time.Time { return now } }
	fake, d := newGHL(t, crmfake.GHLOptions{Fields: ghlFields[1:]}, clock)
	if r := upsertOne(t, d, jane()); crm.ClassOf(r.Err) != crm.Setup {
		t.Fatalf("Err = %v, want Setup", r.Err)
	}
	other, err := crm.New(crm.Config{Kind: crm.KindGoHighLevel, BaseURL: fake.URL, APIToken: "ghl-token", LocationID: "loc-9"})
	if err != nil {
		t.Fatal(err)
	}
	if err := other.(crm.LoopFieldCreator).CreateLoopFields(context.Background()); err != nil {
		t.Fatal(err)
	}
	now = now.Add(11 * time.Second)
	mustOK(t, upsertOne(t, d, jane()))
	for _, req := range fake.Requests() {
		if req.Method == http.MethodPost && strings.HasSuffix(req.Path, "/customFields") {
			var in map[string]any
			_ = json.Unmarshal(req.Body, &in)
			if in["model"] != "contact" || in["dataType"] != "TEXT" {
				t.Errorf("field created with %s, want a TEXT contact field", req.Body)
			}
		}
	}
}

// Custom fields are read with model=contact: an opportunity field with the mapped name is not taken for
// the contact field.
func TestGoHighLevelReadsContactCustomFieldsOnly(t *testing.T) {
	t.Parallel()
	fields := append(slices.Clone(ghlFields), crmfake.GHLField{ID: "cfOppUTM", Name: "UTM source", FieldKey: "opportunity.utm_source", Model: "opportunity"})
	fake, d := newGHL(t, crmfake.GHLOptions{Fields: fields}, func(c *crm.Config) { c.FieldMap = map[string]string{"utm_source": "UTM source"} })
	mustOK(t, upsertOne(t, d, jane()))
	if got, _ := fake.Contact("jane@example.com"); got.CustomFields["cfUTM"] != "ads" {
		t.Errorf("custom fields %v, want utm_source in the contact field cfUTM", got.CustomFields)
	}
}

// A daily 429 (X-RateLimit-Daily-Remaining: 0) is a Quota fault held until the reset; the budget each
// answer reports is exposed for pacing. A burst 429 stays RateLimited (TestGoHighLevelFailures).
func TestGoHighLevelDailyLimitIsAQuotaFault(t *testing.T) {
	t.Parallel()
	fake, d := newGHL(t, crmfake.GHLOptions{DailyLimit: 1000})
	mustOK(t, upsertOne(t, d, jane()))
	b, ok := d.(crm.DailyBudgetReporter).DailyBudget()
	if !ok || b.Limit != 1000 || b.Remaining != 1000-len(fake.Requests()) {
		t.Errorf("DailyBudget = %+v, %v after %d requests", b, ok, len(fake.Requests()))
	}
	fake.SetDailyRemaining(0, 0)
	r := upsertOne(t, d, jane())
	var e *crm.Error
	if crm.ClassOf(r.Err) != crm.Quota || !errors.As(r.Err, &e) || e.RetryAfter <= 0 || e.RetryAfter > 24*time.Hour {
		t.Errorf("Err = %v, want Quota with a wait until the daily reset", r.Err)
	}
	fake.SetDailyRemaining(0, 90*time.Minute)
	r = upsertOne(t, d, jane())
	if !errors.As(r.Err, &e) || e.Class != crm.Quota || e.RetryAfter < 89*time.Minute || e.RetryAfter > 91*time.Minute {
		t.Errorf("Err = %v, want Quota honouring Retry-After", r.Err)
	}
}

// A note whose answer is lost after GHL stored it is found among the contact's notes: the sync succeeds
// and a retry does not add it twice.
func TestGoHighLevelNoteWithALostAnswerIsCheckedBeforeARetry(t *testing.T) {
	t.Parallel()
	fake, d := newGHL(t, crmfake.GHLOptions{})
	id := fake.AddContact(crmfake.GHLContact{Email: "jane@example.com"})
	fake.AnswerAfterCommit(crmfake.Response{Method: http.MethodPost, Path: "/contacts/" + id + "/notes"})
	c := jane()
	c.RemoteID = id
	r := upsertOne(t, d, c)
	mustOK(t, r)
	got, _ := fake.ContactByID(id)
	if len(got.Notes) != 1 || r.Written[crm.PrevNote] != c.Note {
		t.Errorf("notes %v, Written note %q; want the note once and recorded", got.Notes, r.Written[crm.PrevNote])
	}
}

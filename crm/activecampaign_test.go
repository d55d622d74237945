package crm_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/leadgate/leadgate/crm"
	"github.com/leadgate/leadgate/crm/crmfake"
)

// acFields is the fake account's custom fields: the loop-breaker pair, a stage field and mapped fields.
var acFields = []crmfake.ACField{
	{ID: "1", Title: "Last automation source", Perstag: "LAST_AUTOMATION_SOURCE"},
	{ID: "2", Title: "Sync timestamp", Perstag: "SYNC_TIMESTAMP"},
	{ID: "3", Title: "Lifecycle stage", Perstag: "STAGE"},
	{ID: "4", Title: "UTM source", Perstag: "UTM_SOURCE"},
	{ID: "5", Title: "Budget", Perstag: "BUDGET"},
	{ID: "6", Title: "Submission count", Perstag: "SUBMISSION_COUNT"},
}

func newAC(t testing.TB, opts crmfake.ACOptions, mutate ...func(*crm.Config)) (*crmfake.ActiveCampaign, crm.Destination) {
	t.Helper()
	if opts.Fields == nil {
		opts.Fields = acFields
	}
	opts.Token = "ac-token"
	fake := crmfake.NewActiveCampaign(opts)
	t.Cleanup(fake.Close)
	cfg := crm.Config{
		Kind: crm.KindActiveCampaign, BaseURL: fake.URL, APIToken: "ac-token",
		StageField: "3",
		StageMap:   map[string]string{"Discovered": "discovered", "Engaged": "engaged", "SQL": "sql"},
		FieldMap:   map[string]string{"utm_source": "4", "budget": "BUDGET", "submission_count": "SUBMISSION_COUNT"},
	}
	for _, m := range mutate {
		m(&cfg)
	}
	d, err := crm.New(cfg)
	if err != nil {
		t.Fatalf("crm.New: %v", err)
	}
	return fake, d
}

func jane() crm.Contact {
	return crm.Contact{
		LeadgateID: "lg-1", Version: 1,
		Email: "jane@example.com", Phone: "+14155550134", FirstName: "Jane", LastName: "Doe",
		Stage: "Discovered", Fields: map[string]string{"budget": "10k"},
		FirstTouch: map[string]string{"utm_source": "ads"},
		Tags:       []string{"webinar"}, SubmissionCount: 1, Note: "form_submitted: budget 10k",
	}
}

func upsertOne(t testing.TB, d crm.Destination, c crm.Contact) crm.Result {
	t.Helper()
	res := d.Upsert(context.Background(), []crm.Contact{c})
	if len(res) != 1 {
		t.Fatalf("Upsert returned %d results for 1 contact", len(res))
	}
	return res[0]
}

func mustOK(t testing.TB, r crm.Result) {
	t.Helper()
	if r.Err != nil {
		t.Fatalf("Upsert %s: %v", r.LeadgateID, r.Err)
	}
}

func TestActiveCampaignCreatesContactWithFieldsTagAndNote(t *testing.T) {
	t.Parallel()
	fake, d := newAC(t, crmfake.ACOptions{})
	r := upsertOne(t, d, jane())
	mustOK(t, r)
	if !r.Created || r.RemoteID == "" {
		t.Fatalf("Created=%v RemoteID=%q, want a created contact with an id", r.Created, r.RemoteID)
	}
	c, ok := fake.Contact("jane@example.com")
	if !ok {
		t.Fatal("contact not in the fake")
	}
	want := map[string]string{"1": "leadgate", "3": "discovered", "4": "ads", "5": "10k", "6": "1"}
	for id, v := range want {
		if c.Fields[id] != v {
			t.Errorf("field %s = %q, want %q", id, c.Fields[id], v)
		}
	}
	if _, err := time.Parse(time.RFC3339, c.Fields["2"]); err != nil {
		t.Errorf("sync_timestamp %q is not RFC 3339: %v", c.Fields["2"], err)
	}
	if c.ID != r.RemoteID || c.Phone != "+14155550134" || c.FirstName != "Jane" || c.LastName != "Doe" {
		t.Errorf("stored contact %+v does not match the desired state", c)
	}
	if len(c.Tags) != 1 || c.Tags[0] != "webinar" || len(c.Notes) != 1 {
		t.Errorf("tags %v notes %v, want [webinar] and one note", c.Tags, c.Notes)
	}
	if r.Written["3"] != "discovered" || r.Written[crm.PrevNote] == "" || r.Written[crm.PrevTags] != "webinar" {
		t.Errorf("Written = %v, want the stage, note and tags recorded", r.Written)
	}
	if r.Calls != len(fake.Requests()) {
		t.Errorf("Calls = %d, fake saw %d requests", r.Calls, len(fake.Requests()))
	}
}

func TestActiveCampaignUpdatesByRemoteIDWithoutSearching(t *testing.T) {
	t.Parallel()
	fake, d := newAC(t, crmfake.ACOptions{})
	first := upsertOne(t, d, jane())
	mustOK(t, first)
	before := len(fake.Requests())

	next := jane()
	next.Version, next.RemoteID, next.Previous = 2, first.RemoteID, first.Written
	next.Stage, next.SubmissionCount = "SQL", 2
	r := upsertOne(t, d, next)
	mustOK(t, r)
	if r.Created || r.RemoteID != first.RemoteID {
		t.Fatalf("Created=%v RemoteID=%q, want an update of %s", r.Created, r.RemoteID, first.RemoteID)
	}
	for _, req := range fake.Requests()[before:] {
		if req.Method == http.MethodGet && req.Path == "/api/3/contacts" {
			t.Errorf("contact with a remote id was searched: %s?%s", req.Path, req.Query)
		}
		if req.Method == http.MethodPost && strings.HasPrefix(req.Path, "/api/3/contact") && req.Path != "/api/3/contactTags" {
			t.Errorf("contact with a remote id was re-created/synced: %s", req.Path)
		}
		if req.Path == "/api/3/notes" || req.Path == "/api/3/contactTags" {
			t.Errorf("unchanged note/tag written again: %s", req.Path)
		}
	}
	c, _ := fake.Contact("jane@example.com")
	if c.Fields["3"] != "sql" || c.Fields["6"] != "2" || len(fake.Contacts()) != 1 {
		t.Errorf("after update: stage %q count %q contacts %d", c.Fields["3"], c.Fields["6"], len(fake.Contacts()))
	}
}

// At an account that holds phone-only contacts, a lead whose email is new is looked up by phone too.
func TestActiveCampaignFindsByEmailThenExactPhone(t *testing.T) {
	t.Parallel()
	fake, d := newAC(t, crmfake.ACOptions{AllowNullEmail: true}, func(c *crm.Config) { c.AllowNullEmail = true })
	// An older contact whose phone merely starts with ours: AC's phone filter returns it too.
	fake.AddContact(crmfake.ACContact{Email: "other@example.com", Phone: "+141555501349"})
	phoneOnly := fake.AddContact(crmfake.ACContact{Phone: "+14155550134", FirstName: "J"})
	byEmail := fake.AddContact(crmfake.ACContact{Email: "known@example.com"})

	tests := []struct {
		name   string
		email  string
		wantID string
	}{
		{"email match wins", "known@example.com", byEmail},
		{"no email match falls back to the exact phone", "new@example.com", phoneOnly},
	}
	for i, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := jane()
			c.LeadgateID, c.Email = "lg-find-"+string(rune('a'+i)), tc.email
			if tc.email == "known@example.com" {
				c.Phone = ""
			}
			r := upsertOne(t, d, c)
			mustOK(t, r)
			if r.Created || r.RemoteID != tc.wantID {
				t.Errorf("Created=%v RemoteID=%q, want update of %s", r.Created, r.RemoteID, tc.wantID)
			}
		})
	}
	if got := fake.DuplicateEmails(); got != 0 {
		t.Errorf("DuplicateEmails = %d", got)
	}
	if n := len(fake.Contacts()); n != 3 {
		t.Errorf("contacts = %d, want 3 (nothing inserted)", n)
	}
}

func TestActiveCampaignNeverOverwritesFirstTouch(t *testing.T) {
	t.Parallel()
	fake, d := newAC(t, crmfake.ACOptions{})
	id := fake.AddContact(crmfake.ACContact{Email: "jane@example.com", Fields: map[string]string{"4": "google"}})
	r := upsertOne(t, d, jane())
	mustOK(t, r)
	c, _ := fake.Contact("jane@example.com")
	if r.RemoteID != id || c.Fields["4"] != "google" {
		t.Errorf("utm_source = %q (remote id %s), want the remote first touch google kept", c.Fields["4"], r.RemoteID)
	}
	if c.Fields["5"] != "10k" {
		t.Errorf("budget = %q, want 10k (non-first-touch fields are written)", c.Fields["5"])
	}
	if len(r.Conflicts) != 0 {
		t.Errorf("first touch kept is not a conflict: %v", r.Conflicts)
	}
}

func TestActiveCampaignHumanEditIsAConflictAndSurvives(t *testing.T) {
	t.Parallel()
	fake, d := newAC(t, crmfake.ACOptions{})
	first := upsertOne(t, d, jane())
	mustOK(t, first)
	fake.HumanEdit(first.RemoteID, "firstName", "Janet")
	fake.HumanEdit(first.RemoteID, "5", "20k")

	next := jane()
	next.RemoteID, next.Previous, next.Version = first.RemoteID, first.Written, 2
	next.Fields = map[string]string{"budget": "15k"}
	r := upsertOne(t, d, next)
	mustOK(t, r)
	c, _ := fake.Contact("jane@example.com")
	if c.FirstName != "Janet" || c.Fields["5"] != "20k" {
		t.Errorf("human edits overwritten: firstName %q budget %q", c.FirstName, c.Fields["5"])
	}
	want := map[string]crm.FieldConflict{
		"firstName": {Field: "firstName", OurLast: "Jane", Remote: "Janet"},
		"BUDGET":    {Field: "BUDGET", OurLast: "10k", Remote: "20k"},
	}
	if len(r.Conflicts) != len(want) {
		t.Fatalf("Conflicts = %v, want %v", r.Conflicts, want)
	}
	for _, fc := range r.Conflicts {
		if want[fc.Field] != fc {
			t.Errorf("conflict %+v, want %+v", fc, want[fc.Field])
		}
	}
	if r.Written["firstName"] != "Jane" {
		t.Errorf("Written keeps our last value for a conflicted field, got %q", r.Written["firstName"])
	}
}

func TestActiveCampaignEveryMutationCarriesTheLoopBreaker(t *testing.T) {
	t.Parallel()
	fake, d := newAC(t, crmfake.ACOptions{AllowNullEmail: true}, func(c *crm.Config) { c.AllowNullEmail = true })
	c := jane()
	r := upsertOne(t, d, c)
	mustOK(t, r)
	c.RemoteID, c.Previous, c.Stage = r.RemoteID, r.Written, "Engaged"
	mustOK(t, upsertOne(t, d, c))
	phoneOnly := crm.Contact{LeadgateID: "lg-2", Phone: "+14155550199", Stage: "Discovered"}
	mustOK(t, upsertOne(t, d, phoneOnly))

	muts := fake.Mutations()
	if len(muts) != 3 {
		t.Fatalf("mutations = %d, want 3 (create, update, phone-only create)", len(muts))
	}
	for _, m := range muts {
		if m.FieldValues["1"] != crm.LoopValue || m.FieldValues["2"] == "" {
			t.Errorf("%s %s carried loop field %q sync %q", m.Method, m.Path, m.FieldValues["1"], m.FieldValues["2"])
		}
	}
}

func TestActiveCampaignClassifiesFailures(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name      string
		resp      crmfake.Response
		authFail  int
		rate400   bool
		wantClass crm.Class
		wantRetry time.Duration
	}{
		{name: "429 with Retry-After", resp: crmfake.Response{Status: 429, Header: http.Header{"Retry-After": {"7"}}, Body: `{"message":"Too Many Requests"}`}, wantClass: crm.RateLimited, wantRetry: 7 * time.Second},
		{name: "503", resp: crmfake.Response{Status: 503, Body: `{"message":"Service Unavailable"}`}, wantClass: crm.Transient},
		{name: "422 validation", resp: crmfake.Response{Status: 422, Body: `{"errors":[{"title":"Contact Email Address is not valid.","code":"email_invalid"}]}`}, wantClass: crm.Invalid},
		{name: "400 validation", resp: crmfake.Response{Status: 400, Body: `{"errors":[{"title":"Bad request"}]}`}, wantClass: crm.Invalid},
		{name: "402 payment", resp: crmfake.Response{Status: 402, Body: `{"message":"Payment required"}`}, wantClass: crm.Auth},
		{name: "401 mode", authFail: 401, wantClass: crm.Auth},
		{name: "403 mode", authFail: 403, wantClass: crm.Auth},
		{name: "400 Rate limit exceeded", rate400: true, wantClass: crm.RateLimited, wantRetry: time.Second},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			fake, d := newAC(t, crmfake.ACOptions{})
			switch {
			case tc.authFail != 0:
				fake.SetAuthFailure(tc.authFail)
			case tc.rate400:
				fake.SetRateLimit400(true)
			default:
				fake.FailNext(tc.resp)
			}
			second := jane()
			second.LeadgateID, second.Email = "lg-2", "second@example.com"
			res := d.Upsert(context.Background(), []crm.Contact{jane(), second})
			var e *crm.Error
			if !errors.As(res[0].Err, &e) {
				t.Fatalf("Err = %v, want *crm.Error", res[0].Err)
			}
			if e.Class != tc.wantClass || e.RetryAfter != tc.wantRetry {
				t.Errorf("class %v retry %v, want %v %v (%v)", e.Class, e.RetryAfter, tc.wantClass, tc.wantRetry, e)
			}
			batchLevel := tc.wantClass == crm.RateLimited || tc.wantClass == crm.Auth
			if batchLevel && res[1].Err != res[0].Err {
				t.Errorf("batch-level failure: second result %v, want the same error", res[1].Err)
			}
			if !batchLevel && res[1].Err != nil {
				t.Errorf("contact failure must not fail the rest of the batch: %v", res[1].Err)
			}
		})
	}
}

func TestActiveCampaignUnknownRemoteIDIsNotFound(t *testing.T) {
	t.Parallel()
	_, d := newAC(t, crmfake.ACOptions{})
	c := jane()
	c.RemoteID = "999"
	r := upsertOne(t, d, c)
	if crm.ClassOf(r.Err) != crm.NotFound || r.Err == nil {
		t.Errorf("Err = %v, want NotFound (a remote id is never re-searched)", r.Err)
	}
}

// A loop-breaker field the account lacks is a fault of the destination (every contact would fail the same
// way), not an invalid mapping of one contact: Setup, with the workflow instructions.
func TestActiveCampaignMissingLoopFieldIsASetupFaultWithInstructions(t *testing.T) {
	t.Parallel()
	_, d := newAC(t, crmfake.ACOptions{Fields: acFields[2:]})
	r := upsertOne(t, d, jane())
	if crm.ClassOf(r.Err) != crm.Setup || r.Err == nil || !strings.Contains(r.Err.Error(), "stop when last_automation_source equals leadgate") {
		t.Errorf("Err = %v, want Setup with the workflow instructions", r.Err)
	}
}

func TestActiveCampaignDiscoverAndCreateLoopFields(t *testing.T) {
	t.Parallel()
	fake, d := newAC(t, crmfake.ACOptions{Fields: acFields[2:],
		Pipelines: []crmfake.ACPipeline{{ID: "1", Title: "Sales", Stages: []crmfake.ACField{{ID: "11", Title: "New"}, {ID: "12", Title: "Won"}}}}})
	disc, err := d.Discover(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if disc.Loop.LoopFieldFound || !disc.Loop.CanCreate || disc.Loop.Instructions == "" {
		t.Errorf("Loop = %+v, want missing, creatable, with instructions", disc.Loop)
	}
	if len(disc.Fields) != 4 || len(disc.Pipelines) != 1 || len(disc.Pipelines[0].Stages) != 2 {
		t.Errorf("Discover = %+v", disc)
	}
	if err := d.(crm.LoopFieldCreator).CreateLoopFields(context.Background()); err != nil {
		t.Fatal(err)
	}
	mustOK(t, upsertOne(t, d, jane()))
	if len(fake.Mutations()) != 1 {
		t.Errorf("mutations = %d after creating the loop fields", len(fake.Mutations()))
	}
	if err := d.TestConnection(context.Background()); err != nil {
		t.Errorf("TestConnection: %v", err)
	}
}

func TestActiveCampaignDealMode(t *testing.T) {
	t.Parallel()
	pipes := []crmfake.ACPipeline{{ID: "7", Title: "Leads", Stages: []crmfake.ACField{{ID: "71"}, {ID: "72"}, {ID: "73"}}}}
	fake, d := newAC(t, crmfake.ACOptions{Pipelines: pipes}, func(c *crm.Config) {
		c.StageMode, c.Pipeline = crm.StageModeDeal, "7"
		c.StageMap = map[string]string{"Discovered": "71", "Engaged": "72", "SQL": "73"}
	})
	r := upsertOne(t, d, jane())
	mustOK(t, r)
	deals := fake.Deals()
	if len(deals) != 1 || deals[0].Stage != "71" || deals[0].Contact != r.RemoteID {
		t.Fatalf("deals = %+v, want one at stage 71 for %s", deals, r.RemoteID)
	}
	c := jane()
	c.RemoteID, c.Previous, c.Stage = r.RemoteID, r.Written, "Engaged"
	r = upsertOne(t, d, c)
	mustOK(t, r)
	if got := fake.Deals(); len(got) != 1 || got[0].Stage != "72" {
		t.Fatalf("after moving: %+v, want the same deal at 72", got)
	}
	fake.HumanMoveDeal(deals[0].ID, "71")
	c.Previous, c.Stage = r.Written, "SQL"
	r = upsertOne(t, d, c)
	mustOK(t, r)
	if got := fake.Deals(); got[0].Stage != "71" || len(r.Conflicts) != 1 || r.Conflicts[0].Remote != "71" {
		t.Errorf("human move: deal %+v conflicts %v, want stage 71 kept and a conflict", got, r.Conflicts)
	}
}

func TestActiveCampaignFakeRateLimitBecomesRateLimitedWithRetryAfter(t *testing.T) {
	t.Parallel()
	fake, d := newAC(t, crmfake.ACOptions{Options: crmfake.Options{RateLimit: 2, RetryAfter: 4}})
	r := upsertOne(t, d, jane()) // search, fields, create, tag, note: more than 2 requests in a second
	var e *crm.Error
	if !errors.As(r.Err, &e) || e.Class != crm.RateLimited || e.RetryAfter != 4*time.Second || e.Status != 429 {
		t.Errorf("Err = %v, want RateLimited 429 with 4 s", r.Err)
	}
	if got := fake.MaxRequestsInWindow(time.Second); got != 3 {
		t.Errorf("fake saw %d requests in a second, want 3 (the third was refused and the batch stopped)", got)
	}
}

// TestDestinationsAreSafeForConcurrentUse runs several relay workers against one destination.
func TestDestinationsAreSafeForConcurrentUse(t *testing.T) {
	t.Parallel()
	fake, d := newAC(t, crmfake.ACOptions{})
	done := make(chan crm.Result)
	for i := range 8 {
		go func() { done <- upsertOne(t, d, lead(i)) }()
	}
	for range 8 {
		mustOK(t, <-done)
	}
	if n, dup := len(fake.Contacts()), fake.DuplicateEmails(); n != 8 || dup != 0 {
		t.Errorf("contacts %d duplicates %d, want 8 and 0", n, dup)
	}
}

// The tag is looked up by its exact name: an account with more than a page of tags containing it
// (sql-1 … sql-150) must not get a second "sql" tag.
func TestActiveCampaignFindsATagByExactNameAmongMany(t *testing.T) {
	t.Parallel()
	fake, d := newAC(t, crmfake.ACOptions{})
	for i := 1; i <= 150; i++ {
		fake.AddTag(fmt.Sprintf("webinar-%d", i))
	}
	want := fake.AddTag("webinar")
	mustOK(t, upsertOne(t, d, jane()))
	for _, r := range fake.Requests() {
		if r.Method == http.MethodPost && r.Path == "/api/3/tags" {
			t.Fatalf("created a second tag named webinar; the account already had id %s", want)
		}
	}
	c, _ := fake.Contact("jane@example.com")
	if len(c.Tags) != 1 || c.Tags[0] != "webinar" {
		t.Fatalf("contact tags %v, want [webinar]", c.Tags)
	}
}

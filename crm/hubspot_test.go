package crm_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/leadgate/leadgate/crm"
	"github.com/leadgate/leadgate/crm/crmfake"
)

var hsProps = []string{"last_automation_source", "sync_timestamp", "utm_source", "budget", "submission_count"}

func newHS(t testing.TB, opts crmfake.HSOptions) (*crmfake.HubSpot, crm.Destination) {
	t.Helper()
	if opts.Properties == nil {
		opts.Properties = hsProps
	}
	opts.Token = "hs-token"
	fake := crmfake.NewHubSpot(opts)
	t.Cleanup(fake.Close)
	d, err := crm.New(crm.Config{
		Kind: crm.KindHubSpot, BaseURL: fake.URL, APIToken: "hs-token",
		StageMap: map[string]string{"Discovered": "lead", "Engaged": "marketingqualifiedlead", "SQL": "salesqualifiedlead"},
		FieldMap: map[string]string{"utm_source": "utm_source", "budget": "budget", "submission_count": "submission_count", "nope": "does_not_exist"},
	})
	if err != nil {
		t.Fatalf("crm.New: %v", err)
	}
	return fake, d
}

func lead(i int) crm.Contact {
	return crm.Contact{LeadgateID: fmt.Sprintf("lg-%d", i), Version: 1, Email: fmt.Sprintf("lead%d@example.com", i),
		FirstName: "Lead", Stage: "Discovered", FirstTouch: map[string]string{"utm_source": "ads"}, SubmissionCount: 1}
}

func TestHubSpotBatchCreatesEmailAndPhoneOnlyContacts(t *testing.T) {
	t.Parallel()
	fake, d := newHS(t, crmfake.HSOptions{})
	batch := []crm.Contact{lead(1), lead(2), {LeadgateID: "lg-p", Phone: "+14155550100", Stage: "Discovered", Note: "called"}}
	res := d.Upsert(context.Background(), batch)
	for _, r := range res {
		mustOK(t, r)
		if !r.Created || r.RemoteID == "" {
			t.Errorf("%s: Created=%v RemoteID=%q", r.LeadgateID, r.Created, r.RemoteID)
		}
	}
	if n := len(fake.Contacts()); n != 3 {
		t.Fatalf("contacts = %d, want 3", n)
	}
	c, _ := fake.Contact("lead1@example.com")
	if c.Properties["lifecyclestage"] != "lead" || c.Properties["utm_source"] != "ads" || c.Properties["submission_count"] != "1" {
		t.Errorf("lead1 properties %v", c.Properties)
	}
	// account details (once per adapter), phone search, read by email, batch upsert, phone-only create,
	// note batch.
	if got := len(fake.Requests()); got != 6 {
		t.Errorf("requests = %d, want 6 for the batch", got)
	}
	for _, m := range fake.Mutations() {
		if m.Properties["last_automation_source"] != crm.LoopValue || m.Properties["sync_timestamp"] == "" {
			t.Errorf("mutation %s on %s lacks the loop-breaker: %v", m.Path, m.ContactID, m.Properties)
		}
	}
}

func TestHubSpotUpdatesByRemoteIDAndKeepsFirstTouch(t *testing.T) {
	t.Parallel()
	fake, d := newHS(t, crmfake.HSOptions{})
	id := fake.AddContact(map[string]string{"email": "lead1@example.com", "utm_source": "google"})
	c := lead(1)
	c.RemoteID = id
	before := len(fake.Requests())
	r := upsertOne(t, d, c)
	mustOK(t, r)
	got, _ := fake.Contact("lead1@example.com")
	if r.Created || got.Properties["utm_source"] != "google" || got.Properties["firstname"] != "Lead" {
		t.Errorf("Created=%v properties %v, want an update keeping utm_source=google", r.Created, got.Properties)
	}
	for _, req := range fake.Requests()[before:] {
		if strings.HasSuffix(req.Path, "/search") || strings.Contains(string(req.Body), `"idProperty":"email"`) {
			t.Errorf("a contact with a remote id was looked up by identity: %s %s", req.Path, req.Body)
		}
	}
}

func TestHubSpot207PartialFailureFailsOnlyThatContact(t *testing.T) {
	t.Parallel()
	fake, d := newHS(t, crmfake.HSOptions{})
	bad := lead(2)
	bad.Email = "not-an-email"
	res := d.Upsert(context.Background(), []crm.Contact{lead(1), bad, lead(3)})
	if res[0].Err != nil || res[2].Err != nil {
		t.Fatalf("good contacts failed: %v / %v", res[0].Err, res[2].Err)
	}
	if crm.ClassOf(res[1].Err) != crm.Invalid || res[1].Err == nil {
		t.Errorf("invalid email: Err = %v, want Invalid", res[1].Err)
	}
	if n := len(fake.Contacts()); n != 2 {
		t.Errorf("contacts = %d, want 2", n)
	}
}

// A value one contact carries that HubSpot refuses (not one of an enumeration's options) fails the batch
// update with a 400; it is retried input by input, so only that contact fails and the others are written.
func TestHubSpotBatchValidationErrorIsolatesTheBadContact(t *testing.T) {
	t.Parallel()
	fake, d := newHS(t, crmfake.HSOptions{Properties: hsProps, Enumerations: map[string][]string{"budget": {"10k", "50k"}}})
	a := fake.AddContact(map[string]string{"email": "lead1@example.com"})
	b := fake.AddContact(map[string]string{"email": "lead2@example.com"})
	good, bad := lead(1), lead(2)
	good.RemoteID, bad.RemoteID = a, b
	good.Fields, bad.Fields = map[string]string{"budget": "10k"}, map[string]string{"budget": "a lot"}
	res := d.Upsert(context.Background(), []crm.Contact{good, bad})
	if res[0].Err != nil {
		t.Errorf("good contact: %v", res[0].Err)
	}
	if crm.ClassOf(res[1].Err) != crm.Invalid || res[1].Err == nil || !strings.Contains(res[1].Err.Error(), "INVALID_OPTION") {
		t.Errorf("bad contact: %v, want Invalid naming INVALID_OPTION", res[1].Err)
	}
	if c, _ := fake.Contact("lead1@example.com"); c.Properties["firstname"] != "Lead" || c.Properties["budget"] != "10k" {
		t.Errorf("good contact not written: %v", c.Properties)
	}
}

// A property the destination's configuration names (a mapped field, the loop-breaker, the stage field)
// that the account lacks fails every contact the same way: it is a fault of the destination's setup
// (Setup, with a plain message naming the property and what names it), not an invalid contact.
func TestHubSpotMissingPropertyIsASetupFault(t *testing.T) {
	t.Parallel()
	t.Run("mapped field", func(t *testing.T) {
		fake, d := newHS(t, crmfake.HSOptions{})
		id := fake.AddContact(map[string]string{"email": "lead1@example.com"})
		c := lead(1)
		c.RemoteID, c.Fields = id, map[string]string{"nope": "x"}
		for _, r := range d.Upsert(context.Background(), []crm.Contact{c, lead(2)}) {
			if crm.ClassOf(r.Err) != crm.Setup || !strings.Contains(r.Err.Error(), `"does_not_exist" (mapped from nope)`) {
				t.Errorf("%s: Err = %v, want Setup naming does_not_exist and its mapping", r.LeadgateID, r.Err)
			}
		}
	})
	t.Run("loop-breaker field", func(t *testing.T) {
		_, d := newHS(t, crmfake.HSOptions{Properties: []string{"utm_source", "budget", "submission_count", "sync_timestamp"}})
		r := upsertOne(t, d, lead(1))
		if crm.ClassOf(r.Err) != crm.Setup || !strings.Contains(r.Err.Error(), `"last_automation_source" (the loop-breaker field)`) {
			t.Errorf("Err = %v, want Setup naming the loop-breaker field", r.Err)
		}
	})
	t.Run("stage value not an option", func(t *testing.T) {
		fake := crmfake.NewHubSpot(crmfake.HSOptions{Options: crmfake.Options{Token: "hs-token"}, Properties: hsProps})
		t.Cleanup(fake.Close)
		d, err := crm.New(crm.Config{Kind: crm.KindHubSpot, BaseURL: fake.URL, APIToken: "hs-token",
			StageMap: map[string]string{"Discovered": "prospect"}})
		if err != nil {
			t.Fatal(err)
		}
		c := lead(1)
		c.FirstTouch, c.SubmissionCount = nil, 0
		r := upsertOne(t, d, c)
		if crm.ClassOf(r.Err) != crm.Setup || !strings.Contains(r.Err.Error(), "lifecyclestage") {
			t.Errorf("Err = %v, want Setup naming lifecyclestage", r.Err)
		}
		if len(fake.Contacts()) != 0 {
			t.Errorf("contacts %+v, want none written", fake.Contacts())
		}
	})
	t.Run("refused credentials stay Auth", func(t *testing.T) {
		fake, d := newHS(t, crmfake.HSOptions{})
		fake.SetAuthFailure(http.StatusUnauthorized)
		if r := upsertOne(t, d, lead(1)); crm.ClassOf(r.Err) != crm.Auth {
			t.Errorf("Err = %v, want Auth", r.Err)
		}
	})
}

func TestHubSpotConflictUpdatesTheExistingID(t *testing.T) {
	t.Parallel()
	t.Run("batch upsert CONFLICT", func(t *testing.T) {
		fake, d := newHS(t, crmfake.HSOptions{})
		existing := fake.AddContact(map[string]string{"email": "old@example.com", "utm_source": "google"})
		fake.ConflictOnUpsert("lead1@example.com", existing)
		r := upsertOne(t, d, lead(1))
		mustOK(t, r)
		c := fake.Contacts()[0]
		if r.RemoteID != existing || r.Created || c.Properties["utm_source"] != "google" || c.Properties["firstname"] != "Lead" {
			t.Errorf("RemoteID=%q Created=%v props %v, want update of %s keeping first touch", r.RemoteID, r.Created, c.Properties, existing)
		}
	})
	t.Run("409 on create", func(t *testing.T) {
		fake, d := newHS(t, crmfake.HSOptions{})
		existing := fake.AddContact(map[string]string{"phone": "+1 415 555 0199"})
		fake.FailNext(crmfake.Response{Method: http.MethodPost, Path: "/crm/v3/objects/contacts", Status: http.StatusConflict,
			Body: `{"status":"error","message":"Contact already exists. Existing ID: ` + existing + `","correlationId":"x","category":"CONFLICT"}`})
		r := upsertOne(t, d, crm.Contact{LeadgateID: "lg-p", Phone: "+14155550100", FirstName: "Pat"})
		mustOK(t, r)
		if r.RemoteID != existing || r.Created || len(fake.Contacts()) != 1 || fake.Contacts()[0].Properties["firstname"] != "Pat" {
			t.Errorf("RemoteID=%q Created=%v contacts %+v", r.RemoteID, r.Created, fake.Contacts())
		}
	})
}

func TestHubSpotLifecycleStage(t *testing.T) {
	t.Parallel()
	fake, d := newHS(t, crmfake.HSOptions{})
	c := lead(1)
	c.Stage = "SQL"
	r := upsertOne(t, d, c)
	mustOK(t, r)

	// leadgate set SQL and now (its rules allowing) moves back: clear, then set.
	c.RemoteID, c.Previous, c.Stage = r.RemoteID, r.Written, "Engaged"
	r = upsertOne(t, d, c)
	mustOK(t, r)
	if got, _ := fake.Contact(c.Email); got.Properties["lifecyclestage"] != "marketingqualifiedlead" {
		t.Errorf("backward move by leadgate: stage %q, want marketingqualifiedlead", got.Properties["lifecyclestage"])
	}

	// A contact that reached customer in the CRM is never pushed back by a first sync.
	id := fake.AddContact(map[string]string{"email": "vip@example.com", "lifecyclestage": "customer"})
	v := lead(9)
	v.Email = "vip@example.com"
	r = upsertOne(t, d, v)
	mustOK(t, r)
	if got, _ := fake.Contact("vip@example.com"); got.Properties["lifecyclestage"] != "customer" || r.RemoteID != id {
		t.Errorf("CRM stage pushed back to %q", got.Properties["lifecyclestage"])
	}
	if len(r.Conflicts) != 1 || r.Conflicts[0].Field != "lifecyclestage" || r.Conflicts[0].Remote != "customer" {
		t.Errorf("Conflicts = %v, want the lifecyclestage conflict", r.Conflicts)
	}
}

func TestHubSpotHumanEditIsAConflict(t *testing.T) {
	t.Parallel()
	fake, d := newHS(t, crmfake.HSOptions{})
	c := lead(1)
	r := upsertOne(t, d, c)
	mustOK(t, r)
	fake.HumanEdit(r.RemoteID, "firstname", "Leah")
	c.RemoteID, c.Previous, c.SubmissionCount = r.RemoteID, r.Written, 2
	r = upsertOne(t, d, c)
	mustOK(t, r)
	got, _ := fake.Contact(c.Email)
	if got.Properties["firstname"] != "Leah" || got.Properties["submission_count"] != "2" {
		t.Errorf("properties %v, want the human's firstname kept and the count updated", got.Properties)
	}
	if len(r.Conflicts) != 1 || r.Conflicts[0] != (crm.FieldConflict{Field: "firstname", OurLast: "Lead", Remote: "Leah"}) {
		t.Errorf("Conflicts = %v", r.Conflicts)
	}
}

func TestHubSpotClassifiesFailures(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name      string
		resp      crmfake.Response
		authFail  int
		wantClass crm.Class
		wantRetry string
	}{
		{name: "429 ten-secondly", resp: crmfake.Response{Status: 429, Header: http.Header{"X-Hubspot-Ratelimit-Interval-Milliseconds": {"10000"}},
			Body: `{"status":"error","message":"You have reached your ten secondly limit.","policyName":"TEN_SECONDLY_ROLLING"}`}, wantClass: crm.RateLimited, wantRetry: "10s"},
		{name: "429 Retry-After", resp: crmfake.Response{Status: 429, Header: http.Header{"Retry-After": {"3"}}}, wantClass: crm.RateLimited, wantRetry: "3s"},
		{name: "503", resp: crmfake.Response{Status: 503}, wantClass: crm.Transient, wantRetry: "0s"},
		{name: "423 locked", resp: crmfake.Response{Status: 423}, wantClass: crm.Transient, wantRetry: "2s"},
		{name: "401", authFail: 401, wantClass: crm.Auth, wantRetry: "0s"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			fake, d := newHS(t, crmfake.HSOptions{})
			if tc.authFail != 0 {
				fake.SetAuthFailure(tc.authFail)
			} else {
				tc.resp.Path = "/crm/v3/objects/contacts/batch/read"
				fake.FailNext(tc.resp)
			}
			res := d.Upsert(context.Background(), []crm.Contact{lead(1), lead(2)})
			for _, r := range res {
				e, ok := r.Err.(*crm.Error)
				if !ok || e.Class != tc.wantClass || e.RetryAfter.String() != tc.wantRetry {
					t.Errorf("%s: Err = %#v, want class %v retry %s", r.LeadgateID, r.Err, tc.wantClass, tc.wantRetry)
				}
			}
		})
	}
}

func TestHubSpotSplitsBatchesAbove100AndCostsFewCalls(t *testing.T) {
	t.Parallel()
	fake, d := newHS(t, crmfake.HSOptions{})
	var batch []crm.Contact
	for i := range 150 {
		batch = append(batch, lead(i))
	}
	for _, r := range d.Upsert(context.Background(), batch) {
		mustOK(t, r)
	}
	if n := len(fake.Contacts()); n != 150 {
		t.Fatalf("contacts = %d", n)
	}
	// The account details once, then two chunks, each one batch read + one batch upsert.
	if got := len(fake.Requests()); got != 5 || float64(got)/150 > 1.0/15 {
		t.Errorf("requests = %d for 150 changes, want 5 (≤ 1/15 per change)", got)
	}
	if d.MaxBatch() != 100 {
		t.Errorf("MaxBatch = %d", d.MaxBatch())
	}
}

func TestHubSpotDiscover(t *testing.T) {
	t.Parallel()
	_, d := newHS(t, crmfake.HSOptions{Properties: []string{"utm_source"}})
	disc, err := d.Discover(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(disc.LifecycleOptions) != 8 || disc.LifecycleOptions[3].Value != "salesqualifiedlead" {
		t.Errorf("LifecycleOptions = %v", disc.LifecycleOptions)
	}
	if disc.Loop.LoopFieldFound || disc.Loop.Instructions == "" || len(disc.Pipelines) != 1 {
		t.Errorf("Loop = %+v pipelines %v", disc.Loop, disc.Pipelines)
	}
	if err := d.(crm.LoopFieldCreator).CreateLoopFields(context.Background()); err != nil {
		t.Fatal(err)
	}
	if disc, _ = d.Discover(context.Background()); !disc.Loop.LoopFieldFound || !disc.Loop.SyncFieldFound {
		t.Errorf("after CreateLoopFields: %+v", disc.Loop)
	}
}

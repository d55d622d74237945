package crm_test

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/leadgate/leadgate/crm"
	"github.com/leadgate/leadgate/crm/crmfake"
)

// callsTo counts the requests to method path.
func callsTo(fake requestLog, method, path string) int { return len(requestsTo(fake, method, path)) }

const hsUpsertPath = "/crm/v3/objects/contacts/batch/upsert"

// A 207 answer's errors are StandardError, whose subCategory is an object (the published example:
// "subCategory": {}), with context arrays of strings and ErrorDetail entries whose subCategory is a string.
// The answer is decoded, the failing input is isolated by its context, and the inputs in results are
// recorded as written: nothing that succeeded is sent again.
func TestHubSpot207WithObjectSubCategoryRecordsTheWrittenInputs(t *testing.T) {
	t.Parallel()
	fake, d := newHS(t, crmfake.HSOptions{})
	// Shaped after BatchResponseSimplePublicUpsertObjectWithErrors in HubSpot's contacts description and the
	// batch create reference example.
	fake.FailNext(crmfake.Response{Method: http.MethodPost, Path: hsUpsertPath, Status: http.StatusMultiStatus, Body: `{
		"status":"COMPLETE","numErrors":1,
		"results":[
			{"id":"501","new":true,"objectWriteTraceId":"lg-1","properties":{"email":"lead1@example.com"},"createdAt":"2026-12-01T10:00:00Z","updatedAt":"2026-12-01T10:00:00Z","archived":false},
			{"id":"503","new":false,"properties":{"email":"lead3@example.com"},"createdAt":"2026-12-01T10:00:00Z","updatedAt":"2026-12-01T10:00:00Z","archived":false}],
		"errors":[{"status":"error","category":"VALIDATION_ERROR","subCategory":{},"message":"Property values were not valid: [{\"isValid\":false,\"message\":\"Email address lead2@example.com is invalid\",\"error\":\"INVALID_EMAIL\",\"name\":\"email\"}]",
			"context":{"ids":["lead2@example.com"]},"links":{},"errors":[{"message":"invalid","code":"INVALID_EMAIL","subCategory":"crm.contacts.INVALID_EMAIL","context":{"propertyName":["email"]}}]}],
		"startedAt":"2026-12-01T10:00:00Z","completedAt":"2026-12-01T10:00:01Z"}`})
	res := d.Upsert(context.Background(), []crm.Contact{lead(1), lead(2), lead(3)})
	if res[0].Err != nil || res[0].RemoteID != "501" || !res[0].Created || res[0].Written["firstname"] != "Lead" {
		t.Errorf("lead1: %+v, want written as 501 (created)", res[0])
	}
	if res[2].Err != nil || res[2].RemoteID != "503" || res[2].Created || res[2].Written["firstname"] != "Lead" {
		t.Errorf("lead3: %+v, want written as 503 (updated), matched by its email", res[2])
	}
	if crm.ClassOf(res[1].Err) != crm.Invalid || !strings.Contains(res[1].Err.Error(), "VALIDATION_ERROR") {
		t.Errorf("lead2: Err = %v, want Invalid (its own VALIDATION_ERROR)", res[1].Err)
	}
	if n := callsTo(fake, http.MethodPost, hsUpsertPath); n != 1 {
		t.Errorf("batch upserts = %d, want 1: nothing that was written is sent again", n)
	}
}

// A v4 association batch read pages per input: a contact with more deals than one page has
// paging.next.after on its result, sent back with its id. Its deal in the pipeline on a later page is
// found and moved; no second deal is created.
func TestHubSpotDealModeFollowsPerInputAssociationPaging(t *testing.T) {
	t.Parallel()
	fake := crmfake.NewHubSpot(crmfake.HSOptions{Options: crmfake.Options{Token: "hs-token"}, Properties: hsProps, AssociationPageSize: 2,
		Pipelines: []crmfake.HSPipeline{{ID: "default", Label: "Sales", Stages: []string{"appointmentscheduled", "qualifiedtobuy"}},
			{ID: "other", Label: "Renewals", Stages: []string{"r1"}}}})
	t.Cleanup(fake.Close)
	d, err := crm.New(crm.Config{Kind: crm.KindHubSpot, BaseURL: fake.URL, APIToken: "hs-token", StageMode: crm.StageModeDeal,
		Pipeline: "default", StageMap: map[string]string{"Discovered": "appointmentscheduled", "Engaged": "qualifiedtobuy"}})
	if err != nil {
		t.Fatal(err)
	}
	id := fake.AddContact(map[string]string{"email": "lead1@example.com", "firstname": "Lead"})
	for range 5 {
		fake.AddDeal(id, "other", "r1") // five deals in another pipeline: pages 1 to 3
	}
	deal := fake.AddDeal(id, "default", "appointmentscheduled") // the sixth, on page 3
	c := lead(1)
	c.Stage, c.FirstTouch, c.SubmissionCount = "Engaged", nil, 0
	r := upsertOne(t, d, c)
	mustOK(t, r)
	if r.Written[crm.PrevDealID] != deal {
		t.Errorf("Written deal %q, want the existing deal %s found on the third page", r.Written[crm.PrevDealID], deal)
	}
	if n := len(fake.Deals()); n != 6 {
		t.Errorf("deals = %d, want the 6 existing ones and no new one", n)
	}
	if got := dealOf(fake, id); got.ID != deal || got.Stage != "qualifiedtobuy" {
		t.Errorf("deal %+v, want %s moved to qualifiedtobuy", got, deal)
	}
	if n := callsTo(fake, http.MethodPost, "/crm/v4/associations/contacts/deals/batch/read"); n != 3 {
		t.Errorf("association reads = %d, want 3 pages", n)
	}
}

// newHSClock is a HubSpot destination whose clock is now, against a fake account in zone with a daily
// quota of daily requests.
func newHSClock(t *testing.T, zone string, daily int, now time.Time) (*crmfake.HubSpot, crm.Destination) {
	t.Helper()
	clock := func() time.Time { return now }
	fake := crmfake.NewHubSpot(crmfake.HSOptions{Options: crmfake.Options{Token: "hs-token"}, Properties: hsProps, DailyLimit: daily,
		TimeZone: zone, Now: clock})
	t.Cleanup(fake.Close)
	d, err := crm.New(crm.Config{Kind: crm.KindHubSpot, BaseURL: fake.URL, APIToken: "hs-token", Now: clock,
		StageMap: map[string]string{"Discovered": "lead"}})
	if err != nil {
		t.Fatal(err)
	}
	return fake, d
}

// A 429 of the daily policy lasts until midnight in the account's time zone: it is a Quota fault with
// RetryAfter to that reset (the zone read from the account details before the quota ran out), not a
// RateLimited retry in 10 s.
func TestHubSpotDailyLimitIsQuotaUntilTheAccountsMidnight(t *testing.T) {
	t.Parallel()
	// 15:30 in Los Angeles (PST, UTC-8): the reset is 08:00 UTC the next day, 8h30m later.
	now := time.Date(2026, 12, 1, 23, 30, 0, 0, time.UTC)
	fake, d := newHSClock(t, "US/Pacific", 3, now)
	mustOK(t, upsertOne(t, d, crm.Contact{LeadgateID: "lg-1", Email: "a@example.com"})) // details, read, upsert: the quota
	r := upsertOne(t, d, crm.Contact{LeadgateID: "lg-2", Email: "b@example.com"})
	e, ok := r.Err.(*crm.Error)
	if !ok || e.Class != crm.Quota || e.RetryAfter != 8*time.Hour+30*time.Minute {
		t.Fatalf("Err = %#v, want Quota with RetryAfter 8h30m (midnight US/Pacific)", r.Err)
	}
	if !strings.Contains(e.Message, "daily") || !strings.Contains(e.Message, "US/Pacific") {
		t.Errorf("message %q should say the daily limit is used up and when it resets", e.Message)
	}
	if n := callsTo(fake, http.MethodGet, "/account-info/v3/details"); n != 1 {
		t.Errorf("account detail reads = %d, want 1 (read once, before the quota ran out)", n)
	}
}

// When the account's time zone could not be read, a daily 429 is still a Quota fault: it waits an hour and
// checks again instead of retrying every 10 s.
func TestHubSpotDailyLimitWithoutAKnownZoneWaitsAnHour(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	fake, d := newHSClock(t, "US/Eastern", 0, now)
	fake.FailNext(crmfake.Response{Path: "/account-info/v3/details", Status: http.StatusForbidden,
		Body: `{"status":"error","message":"This app hasn't been granted all required scopes","category":"MISSING_SCOPES","correlationId":"x"}`})
	fake.FailNext(crmfake.Response{Path: "/crm/v3/objects/contacts/batch/read", Status: http.StatusTooManyRequests,
		Body: `{"status":"error","message":"You have reached your daily limit.","errorType":"RATE_LIMIT","correlationId":"x","policyName":"DAILY"}`})
	r := upsertOne(t, d, crm.Contact{LeadgateID: "lg-1", Email: "a@example.com"})
	if e, ok := r.Err.(*crm.Error); !ok || e.Class != crm.Quota || e.RetryAfter != time.Hour {
		t.Fatalf("Err = %#v, want Quota with RetryAfter 1h", r.Err)
	}
}

// A batch upsert that answers 200 COMPLETE without a result for one input is checked by a read: a
// silent no-op is reported (and not recorded written), an input that was written anyway is recorded
// written; the others are untouched, and nothing is resent within the batch.
func TestHubSpotCompleteWithMissingResultsIsVerifiedByARead(t *testing.T) {
	t.Parallel()
	t.Run("silent no-op", func(t *testing.T) {
		fake, d := newHS(t, crmfake.HSOptions{})
		fake.OmitResult(hsUpsertPath, "lead2@example.com", false)
		res := d.Upsert(context.Background(), []crm.Contact{lead(1), lead(2)})
		mustOK(t, res[0])
		if crm.ClassOf(res[1].Err) != crm.Transient || !strings.Contains(res[1].Err.Error(), "silent no-op") {
			t.Errorf("lead2: Err = %v, want a Transient error reporting the silent no-op", res[1].Err)
		}
		if res[1].Written["firstname"] != "" || res[1].RemoteID != "" {
			t.Errorf("lead2 recorded as written: %+v", res[1])
		}
		if _, ok := fake.Contact("lead2@example.com"); ok {
			t.Error("the fake wrote lead2; the no-op did not happen")
		}
		if n := callsTo(fake, http.MethodPost, hsUpsertPath); n != 1 {
			t.Errorf("batch upserts = %d, want 1", n)
		}
		// The retry (the relay's) reads first and writes it once.
		mustOK(t, upsertOne(t, d, lead(2)))
		if n := fake.DuplicateEmails(); n != 0 || len(fake.Contacts()) != 2 {
			t.Errorf("contacts %d, duplicates %d after the retry", len(fake.Contacts()), n)
		}
	})
	t.Run("written without a result", func(t *testing.T) {
		fake, d := newHS(t, crmfake.HSOptions{})
		fake.OmitResult(hsUpsertPath, "lead2@example.com", true)
		res := d.Upsert(context.Background(), []crm.Contact{lead(1), lead(2)})
		c, _ := fake.Contact("lead2@example.com")
		if res[1].Err != nil || res[1].RemoteID != c.ID || res[1].Written["firstname"] != "Lead" {
			t.Errorf("lead2: %+v, want recorded written as %s after the read", res[1], c.ID)
		}
		if n := callsTo(fake, http.MethodPost, hsUpsertPath); n != 1 {
			t.Errorf("batch upserts = %d, want 1: the written contact is not sent again", n)
		}
	})
}

// A write whose answer is lost (the connection closes after HubSpot applied it, as on a timeout) is
// checked with a lookup before any retry: the contact is recorded written and never created twice.
func TestHubSpotLostAnswerIsVerifiedBeforeAnyRetry(t *testing.T) {
	t.Parallel()
	t.Run("batch upsert", func(t *testing.T) {
		fake, d := newHS(t, crmfake.HSOptions{})
		fake.LoseAnswer(hsUpsertPath)
		res := d.Upsert(context.Background(), []crm.Contact{lead(1), lead(2)})
		for _, r := range res {
			if r.Err != nil || r.RemoteID == "" || r.Written["firstname"] != "Lead" {
				t.Errorf("%s: %+v, want verified as written", r.LeadgateID, r)
			}
		}
		if n := callsTo(fake, http.MethodPost, hsUpsertPath); n != 1 || len(fake.Contacts()) != 2 {
			t.Errorf("upserts %d, contacts %d; want 1 and 2", n, len(fake.Contacts()))
		}
	})
	t.Run("phone-only create", func(t *testing.T) {
		fake, d := newHS(t, crmfake.HSOptions{})
		fake.LoseAnswer("/crm/v3/objects/contacts")
		c := crm.Contact{LeadgateID: "lg-p", Phone: "+14155550134", FirstName: "Pat"}
		r := upsertOne(t, d, c)
		if r.Err != nil || r.RemoteID == "" || !r.Created {
			t.Fatalf("%+v, want the create verified by a search", r)
		}
		c.RemoteID, c.Previous = r.RemoteID, r.Written
		mustOK(t, upsertOne(t, d, c))
		if n := len(fake.Contacts()); n != 1 || callsTo(fake, http.MethodPost, "/crm/v3/objects/contacts") != 1 {
			t.Errorf("contacts %d, creates %d; want one of each", n, callsTo(fake, http.MethodPost, "/crm/v3/objects/contacts"))
		}
	})
	t.Run("unconfirmed update fails for a retry", func(t *testing.T) {
		fake, d := newHS(t, crmfake.HSOptions{})
		id := fake.AddContact(map[string]string{"email": "lead1@example.com"})
		fake.FailNext(crmfake.Response{Method: http.MethodPost, Path: "/crm/v3/objects/contacts/batch/update", Status: http.StatusBadGateway})
		c := lead(1)
		c.RemoteID = id
		r := upsertOne(t, d, c)
		if crm.ClassOf(r.Err) != crm.Transient || !strings.Contains(r.Err.Error(), "was not written") {
			t.Errorf("Err = %v, want Transient saying a read shows it was not written", r.Err)
		}
	})
}

// HubSpot keeps phones as typed and search's EQ compares the stored string: a phone-only lead held as
// +14155550134 finds the contact stored as "(415) 555-0134" and updates it instead of creating a second.
func TestHubSpotPhoneOnlyLeadFindsAPhoneStoredInNationalFormat(t *testing.T) {
	t.Parallel()
	fake, d := newHS(t, crmfake.HSOptions{})
	id := fake.AddContact(map[string]string{"phone": "(415) 555-0134", "firstname": "Pat"})
	fake.AddContact(map[string]string{"phone": "(415) 555-0199"})
	r := upsertOne(t, d, crm.Contact{LeadgateID: "lg-p", Phone: "+14155550134", LastName: "Lee"})
	mustOK(t, r)
	if r.RemoteID != id || r.Created {
		t.Errorf("RemoteID=%q Created=%v, want the existing %s updated", r.RemoteID, r.Created, id)
	}
	if n := len(fake.Contacts()); n != 2 {
		t.Errorf("contacts = %d, want 2 (no duplicate)", n)
	}
	for _, c := range fake.Contacts() {
		if c.ID == id && c.Properties["lastname"] != "Lee" {
			t.Errorf("contact %s not updated: %v", id, c.Properties)
		}
	}
}

// Phone-only contacts share searches (a filter group each, 5 per search) and the searches are spaced to
// HubSpot's search limit, so a batch of 12 costs 3 searches and none is refused.
func TestHubSpotPhoneSearchesShareRequestsWithinTheSearchLimit(t *testing.T) {
	t.Parallel()
	fake, d := newHS(t, crmfake.HSOptions{})
	var batch []crm.Contact
	for i := range 12 {
		batch = append(batch, crm.Contact{LeadgateID: "lg-" + string(rune('a'+i)), Phone: "+1415555" + string(rune('0'+i/10)) + string(rune('0'+i%10)) + "00"})
	}
	for _, r := range d.Upsert(context.Background(), batch) {
		mustOK(t, r)
	}
	if n := callsTo(fake, http.MethodPost, "/crm/v3/objects/contacts/search"); n != 3 {
		t.Errorf("searches = %d, want 3", n)
	}
	for _, r := range fake.Requests() {
		if r.Status == http.StatusTooManyRequests {
			t.Errorf("%s %s was refused 429", r.Method, r.Path)
		}
	}
}

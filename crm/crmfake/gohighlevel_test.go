package crmfake_test

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/leadgate/leadgate/crm/crmfake"
)

type ghlAnswer struct {
	status int
	header http.Header
	body   map[string]any
	raw    string
}

// ghlDo sends one v2 request the way an integration must (bearer token, Version: 2021-07-28) unless
// header overrides them.
func ghlDo(t *testing.T, f *crmfake.GoHighLevel, method, path string, body any, header ...string) ghlAnswer {
	t.Helper()
	var rd io.Reader = http.NoBody
	if s, ok := body.(string); ok {
		rd = strings.NewReader(s)
	} else if body != nil {
		b, _ := json.Marshal(body)
		rd = bytes.NewReader(b)
	}
	req, _ := http.NewRequest(method, f.URL+path, rd)
	req.Header.Set("Authorization", "Bearer t")
	req.Header.Set("Version", "2021-07-28")
	req.Header.Set("Content-Type", "application/json")
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	a := ghlAnswer{status: resp.StatusCode, header: resp.Header, raw: strings.TrimSpace(string(raw))}
	_ = json.Unmarshal(raw, &a.body)
	return a
}

func newGHLFake(t *testing.T, opts crmfake.GHLOptions) *crmfake.GoHighLevel {
	t.Helper()
	if opts.Fields == nil {
		opts.Fields = []crmfake.GHLField{
			{ID: "cfText", Name: "Notes", FieldKey: "contact.notes"},
			{ID: "cfMulti", Name: "Interests", FieldKey: "contact.interests", DataType: "MULTIPLE_OPTIONS", Options: []string{"a", "b"}},
			{ID: "cfBox", Name: "Consent", FieldKey: "contact.consent", DataType: "CHECKBOX", Options: []string{"email", "sms"}},
			{ID: "cfNum", Name: "Budget", FieldKey: "contact.budget", DataType: "NUMERICAL"},
			{ID: "cfOpp", Name: "Deal size", FieldKey: "opportunity.deal_size", Model: "opportunity"},
		}
	}
	f := crmfake.NewGoHighLevel(opts)
	t.Cleanup(f.Close)
	return f
}

// Every contact write schema refuses what it does not declare with GHL's NestJS 422 body; PUT's
// UpdateContactDto declares no companyName and no locationId.
func TestGoHighLevelFakeRefusesUndeclaredProperties(t *testing.T) {
	f := newGHLFake(t, crmfake.GHLOptions{})
	id := f.AddContact(crmfake.GHLContact{Email: "a@example.com"})
	a := ghlDo(t, f, http.MethodPut, "/contacts/"+id, map[string]any{"companyName": "Acme"})
	if a.status != 422 || a.raw != `{"error":"Unprocessable Entity","message":["property companyName should not exist"],"statusCode":422}` {
		t.Errorf("PUT with companyName: %d %s", a.status, a.raw)
	}
	if a := ghlDo(t, f, http.MethodPut, "/contacts/"+id, map[string]any{"locationId": "loc-1"}); a.status != 422 {
		t.Errorf("PUT with locationId: %d %s, want 422", a.status, a.raw)
	}
	a = ghlDo(t, f, http.MethodPost, "/contacts/upsert", map[string]any{"locationId": "loc-1", "email": "b@example.com", "additionalEmails": []string{"x@example.com"}})
	if a.status != 422 || !strings.Contains(a.raw, "property additionalEmails should not exist") {
		t.Errorf("upsert with additionalEmails: %d %s", a.status, a.raw)
	}
	if a := ghlDo(t, f, http.MethodPost, "/contacts/", map[string]any{"locationId": "loc-1", "createNewIfDuplicateAllowed": true}); a.status != 422 {
		t.Errorf("create with an upsert-only property: %d %s, want 422", a.status, a.raw)
	}
	if a := ghlDo(t, f, http.MethodPost, "/contacts/"+id+"/notes", map[string]any{"body": "x", "contactId": id}); a.status != 422 {
		t.Errorf("note with contactId: %d %s, want 422", a.status, a.raw)
	}
	if got := f.Contacts(); len(got) != 1 || got[0].CompanyName != "" {
		t.Errorf("a refused write changed the location: %+v", got)
	}
	if a := ghlDo(t, f, http.MethodPost, "/contacts/upsert", map[string]any{"locationId": "loc-1", "email": "b@example.com", "companyName": "Acme"}); a.status != 200 {
		t.Errorf("upsert with companyName (declared there): %d %s", a.status, a.raw)
	}
}

// Required properties and property types are checked: locationId on create, tags as an array, each
// custom field value of its field's type (an array for multi-select and checkbox fields, never "a;b").
func TestGoHighLevelFakeChecksRequiredFieldsAndTypes(t *testing.T) {
	f := newGHLFake(t, crmfake.GHLOptions{})
	tests := []struct {
		name, method, path string
		body               any
		wantStatus         int
		wantMessage        string
	}{
		{"create without locationId", "POST", "/contacts/", map[string]any{"email": "a@example.com"}, 422, "locationId should not be empty"},
		{"tags as a string", "POST", "/contacts/upsert", map[string]any{"locationId": "loc-1", "tags": "a"}, 422, "tags must be an array"},
		{"multi-select as a joined string", "POST", "/contacts/", map[string]any{"locationId": "loc-1",
			"customFields": []any{map[string]any{"id": "cfMulti", "field_value": "a;b"}}}, 422, "must be an array of strings"},
		{"checkbox as a string", "POST", "/contacts/", map[string]any{"locationId": "loc-1",
			"customFields": []any{map[string]any{"id": "cfBox", "field_value": "email"}}}, 422, "must be an array of strings"},
		{"numeric field with words", "POST", "/contacts/", map[string]any{"locationId": "loc-1",
			"customFields": []any{map[string]any{"id": "cfNum", "field_value": "ten"}}}, 422, "must be a number"},
		{"custom field without id", "POST", "/contacts/", map[string]any{"locationId": "loc-1",
			"customFields": []any{map[string]any{"key": "notes", "field_value": "x"}}}, 422, "customFields.0.id should not be empty"},
		{"custom field of the opportunity model", "POST", "/contacts/", map[string]any{"locationId": "loc-1",
			"customFields": []any{map[string]any{"id": "cfOpp", "field_value": "x"}}}, 422, "does not exist for contacts"},
		{"custom field entry with value instead of field_value", "POST", "/contacts/", map[string]any{"locationId": "loc-1",
			"customFields": []any{map[string]any{"id": "cfText", "value": "x"}}}, 422, "customFields.0.property value should not exist"},
		{"task without completed", "POST", "/contacts/{id}/tasks", map[string]any{"title": "t", "dueDate": "2026-12-01T00:00:00Z"}, 422, "completed should not be empty"},
		{"opportunity without status", "POST", "/opportunities/", map[string]any{"pipelineId": "p1", "locationId": "loc-1", "name": "n", "contactId": "{id}"}, 422, "status should not be empty"},
		{"opportunity status outside the enum", "PUT", "/opportunities/x", map[string]any{"status": "closed"}, 422, "status must be one of the following values"},
		{"body that is not JSON", "POST", "/contacts/", "{", 400, ""},
	}
	id := f.AddContact(crmfake.GHLContact{Email: "seed@example.com"})
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			body := tc.body
			if m, ok := body.(map[string]any); ok && m["contactId"] == "{id}" {
				m["contactId"] = id
			}
			a := ghlDo(t, f, tc.method, strings.ReplaceAll(tc.path, "{id}", id), body)
			if a.status != tc.wantStatus || !strings.Contains(a.raw, tc.wantMessage) {
				t.Errorf("%d %s, want %d with %q", a.status, a.raw, tc.wantStatus, tc.wantMessage)
			}
			if tc.wantStatus == 422 && (a.body["error"] != "Unprocessable Entity" || a.body["statusCode"] != float64(422)) {
				t.Errorf("422 body %s is not UnprocessableDTO", a.raw)
			}
		})
	}
	a := ghlDo(t, f, http.MethodPost, "/contacts/", map[string]any{"locationId": "loc-1", "email": "ok@example.com",
		"customFields": []any{map[string]any{"id": "cfMulti", "field_value": []string{"a", "b"}}, map[string]any{"id": "cfNum", "field_value": 12}}})
	if a.status != 201 {
		t.Fatalf("create with typed custom values: %d %s", a.status, a.raw)
	}
	c, _ := f.Contact("ok@example.com")
	if !slices.Equal(c.CustomArrays["cfMulti"], []string{"a", "b"}) || c.CustomFields["cfNum"] != "12" {
		t.Errorf("stored values: arrays %v scalars %v", c.CustomArrays, c.CustomFields)
	}
	got := ghlDo(t, f, http.MethodGet, "/contacts/"+c.ID, nil)
	cfs, _ := got.body["contact"].(map[string]any)["customFields"].([]any)
	want := map[string]any{"cfMulti": []any{"a", "b"}, "cfNum": float64(12)}
	for _, cf := range cfs {
		m := cf.(map[string]any)
		if w, ok := want[m["id"].(string)]; !ok || !jsonEqual(m["value"], w) {
			t.Errorf("GET custom field %v, want the value typed as %v", m, w)
		}
	}
}

func jsonEqual(a, b any) bool {
	x, _ := json.Marshal(a)
	y, _ := json.Marshal(b)
	return bytes.Equal(x, y)
}

// Every v2 operation needs Version: 2021-07-28; bad tokens get UnauthorizedDTO.
func TestGoHighLevelFakeNeedsVersionHeaderAndAnswersNestJSErrors(t *testing.T) {
	f := newGHLFake(t, crmfake.GHLOptions{Options: crmfake.Options{Token: "t"}})
	if a := ghlDo(t, f, http.MethodGet, "/contacts/x", nil, "Version", ""); a.status != 400 || a.body["statusCode"] != float64(400) {
		t.Errorf("no Version header: %d %s, want a 400 BadRequestDTO", a.status, a.raw)
	}
	if a := ghlDo(t, f, http.MethodGet, "/contacts/x", nil, "Version", "2021-04-15"); a.status != 400 {
		t.Errorf("old Version: %d %s, want 400", a.status, a.raw)
	}
	a := ghlDo(t, f, http.MethodGet, "/contacts/x", nil, "Authorization", "Bearer wrong")
	if a.status != 401 || a.raw != `{"error":"Unauthorized","message":"Invalid token: access token is invalid","statusCode":401}` {
		t.Errorf("bad token: %d %s", a.status, a.raw)
	}
}

// Every answer carries the five X-RateLimit-* headers; the burst limit answers 429 (RateLimit per
// window), and when the day's budget is spent every request is a 429 whose Daily-Remaining is 0.
func TestGoHighLevelFakeRateLimitHeadersBurstAndDaily(t *testing.T) {
	f := newGHLFake(t, crmfake.GHLOptions{Options: crmfake.Options{RateLimit: 3}, DailyLimit: 10})
	a := ghlDo(t, f, http.MethodGet, "/locations/loc-1/customFields", nil)
	h := a.header
	if a.status != 200 || h.Get("X-RateLimit-Max") != "3" || h.Get("X-RateLimit-Interval-Milliseconds") != "10000" ||
		h.Get("X-RateLimit-Limit-Daily") != "10" || h.Get("X-RateLimit-Daily-Remaining") != "9" || h.Get("X-RateLimit-Remaining") != "2" {
		t.Errorf("first answer %d headers %v", a.status, h)
	}
	ghlDo(t, f, http.MethodGet, "/locations/loc-1/customFields", nil)
	ghlDo(t, f, http.MethodGet, "/locations/loc-1/customFields", nil)
	a = ghlDo(t, f, http.MethodGet, "/locations/loc-1/customFields", nil)
	if a.status != 429 || a.header.Get("X-RateLimit-Remaining") != "0" || a.header.Get("X-RateLimit-Daily-Remaining") != "7" {
		t.Errorf("fourth request in the window: %d %v, want a burst 429 with daily budget left", a.status, a.header)
	}

	day := newGHLFake(t, crmfake.GHLOptions{})
	if a := ghlDo(t, day, http.MethodGet, "/locations/loc-1/customFields", nil); a.header.Get("X-RateLimit-Max") != "100" ||
		a.header.Get("X-RateLimit-Limit-Daily") != "200000" {
		t.Errorf("default limits advertised %v, want GHL's 100 per 10 s and 200,000 a day", a.header)
	}
	day.SetDailyRemaining(1, 0)
	if a := ghlDo(t, day, http.MethodGet, "/locations/loc-1/customFields", nil); a.status != 200 || a.header.Get("X-RateLimit-Daily-Remaining") != "0" {
		t.Errorf("last request of the day: %d %v", a.status, a.header)
	}
	a = ghlDo(t, day, http.MethodGet, "/locations/loc-1/customFields", nil)
	if a.status != 429 || a.header.Get("X-RateLimit-Daily-Remaining") != "0" || a.header.Get("Retry-After") != "" {
		t.Errorf("past the daily budget: %d %v, want a 429 with Daily-Remaining 0", a.status, a.header)
	}
	day.SetDailyRemaining(0, time.Hour)
	if a := ghlDo(t, day, http.MethodGet, "/locations/loc-1/customFields", nil); a.status != 429 || a.header.Get("Retry-After") == "" {
		t.Errorf("daily 429 with a reset: %d %v", a.status, a.header)
	}
}

// Upsert follows the duplicate rule: with email then phone, an email nobody holds and a phone someone
// holds update that someone and replace their email (new:false); when one contact holds the email and
// another the phone, the email's contact is updated and the phone ignored.
func TestGoHighLevelFakeUpsertFollowsTheDuplicateRule(t *testing.T) {
	f := newGHLFake(t, crmfake.GHLOptions{})
	bob := f.AddContact(crmfake.GHLContact{Email: "bob@example.com", Phone: "+14155550134", FirstName: "Bob"})
	a := ghlDo(t, f, http.MethodPost, "/contacts/upsert", map[string]any{"locationId": "loc-1", "email": "jane@example.com",
		"phone": "+14155550134", "firstName": "Jane"})
	if a.status != 200 || a.body["new"] != false || a.body["contact"].(map[string]any)["id"] != bob {
		t.Fatalf("upsert by a shared phone: %d %s", a.status, a.raw)
	}
	if got, _ := f.ContactByID(bob); got.Email != "jane@example.com" || got.FirstName != "Jane" || len(f.Contacts()) != 1 {
		t.Errorf("Bob's record after the upsert: %+v (the rule overwrites the phone's holder)", got)
	}

	g := newGHLFake(t, crmfake.GHLOptions{})
	byEmail := g.AddContact(crmfake.GHLContact{Email: "a@example.com"})
	byPhone := g.AddContact(crmfake.GHLContact{Phone: "+14155550100"})
	a = ghlDo(t, g, http.MethodPost, "/contacts/upsert", map[string]any{"locationId": "loc-1", "email": "a@example.com", "phone": "+14155550100"})
	if a.status != 200 || a.body["new"] != false || a.body["contact"].(map[string]any)["id"] != byEmail {
		t.Fatalf("upsert matching two contacts: %d %s", a.status, a.raw)
	}
	if e, _ := g.ContactByID(byEmail); e.Phone != "" {
		t.Errorf("the email's contact got the phone %q another contact holds", e.Phone)
	}
	if p, _ := g.ContactByID(byPhone); p.Email != "" {
		t.Errorf("the phone's contact was written: %+v", p)
	}

	pp := newGHLFake(t, crmfake.GHLOptions{DuplicatePriority: []string{"phone", "email"}})
	pp.AddContact(crmfake.GHLContact{Email: "a@example.com"})
	holder := pp.AddContact(crmfake.GHLContact{Phone: "+14155550100"})
	a = ghlDo(t, pp, http.MethodPost, "/contacts/upsert", map[string]any{"locationId": "loc-1", "email": "a@example.com", "phone": "+14155550100"})
	if a.body["contact"].(map[string]any)["id"] != holder {
		t.Errorf("phone-first location updated %v, want the phone's holder %s", a.body["contact"], holder)
	}
	if a := ghlDo(t, pp, http.MethodPost, "/contacts/upsert", map[string]any{"locationId": "loc-1", "email": "new@example.com"}); a.body["new"] != true {
		t.Errorf("upsert of an unknown email: %s, want new:true", a.raw)
	}
}

// POST /contacts/ refuses a duplicate email or phone, naming the holder, unless the location allows
// duplicates (GET /locations/{id} settings.allowDuplicateContact).
func TestGoHighLevelFakeCreateRefusesDuplicatesUnlessAllowed(t *testing.T) {
	f := newGHLFake(t, crmfake.GHLOptions{})
	bob := f.AddContact(crmfake.GHLContact{Email: "bob@example.com", Phone: "+14155550134"})
	a := ghlDo(t, f, http.MethodPost, "/contacts/", map[string]any{"locationId": "loc-1", "email": "jane@example.com", "phone": "+14155550134"})
	meta, _ := a.body["meta"].(map[string]any)
	if a.status != 400 || meta["contactId"] != bob || meta["matchingField"] != "phone" {
		t.Errorf("duplicate phone: %d %s", a.status, a.raw)
	}
	if a := ghlDo(t, f, http.MethodGet, "/locations/loc-1", nil); a.body["location"].(map[string]any)["settings"].(map[string]any)["allowDuplicateContact"] != false {
		t.Errorf("location settings %s", a.raw)
	}
	allow := newGHLFake(t, crmfake.GHLOptions{AllowDuplicates: true})
	allow.AddContact(crmfake.GHLContact{Email: "bob@example.com", Phone: "+14155550134"})
	if a := ghlDo(t, allow, http.MethodPost, "/contacts/", map[string]any{"locationId": "loc-1", "email": "jane@example.com", "phone": "+14155550134"}); a.status != 201 {
		t.Errorf("duplicate phone where duplicates are allowed: %d %s", a.status, a.raw)
	}
}

// The duplicate search and the advanced search compare phones as stored; the advanced search ORs a group
// of filters and needs pageLimit.
func TestGoHighLevelFakeSearchesComparePhonesAsStored(t *testing.T) {
	f := newGHLFake(t, crmfake.GHLOptions{})
	id := f.AddContact(crmfake.GHLContact{Phone: "(415) 555-0134"})
	if a := ghlDo(t, f, http.MethodGet, "/contacts/search/duplicate?locationId=loc-1&number=%2B14155550134", nil); a.status != 200 || a.body["contact"] != nil {
		t.Errorf("duplicate search by E.164 for a national-format phone: %s", a.raw)
	}
	if a := ghlDo(t, f, http.MethodGet, "/contacts/search/duplicate?number=%2B14155550134", nil); a.status != 422 {
		t.Errorf("duplicate search without locationId: %d, want 422", a.status)
	}
	body := map[string]any{"locationId": "loc-1", "pageLimit": 10, "filters": []any{map[string]any{"group": "OR", "filters": []any{
		map[string]any{"field": "phone", "operator": "eq", "value": "+14155550134"},
		map[string]any{"field": "phone", "operator": "eq", "value": "(415) 555-0134"},
	}}}}
	a := ghlDo(t, f, http.MethodPost, "/contacts/search", body)
	cs, _ := a.body["contacts"].([]any)
	if a.status != 200 || len(cs) != 1 || cs[0].(map[string]any)["id"] != id {
		t.Errorf("advanced search over phone forms: %d %s", a.status, a.raw)
	}
	delete(body, "pageLimit")
	if a := ghlDo(t, f, http.MethodPost, "/contacts/search", body); a.status != 422 {
		t.Errorf("advanced search without pageLimit: %d, want 422", a.status)
	}
	f.HideFromSearch(id)
	body["pageLimit"] = 10
	if a := ghlDo(t, f, http.MethodPost, "/contacts/search", body); len(a.body["contacts"].([]any)) != 0 {
		t.Errorf("a contact the index does not show yet was found: %s", a.raw)
	}
}

// Custom fields are listed per model; opportunity search filters by status (open when absent, in this
// fake: the default is not documented), caps limit at 100 and answers ids that are not in creation order.
func TestGoHighLevelFakeFieldModelsAndOpportunitySearch(t *testing.T) {
	f := newGHLFake(t, crmfake.GHLOptions{Pipelines: []crmfake.GHLPipeline{{ID: "p1", Stages: []string{"s1", "s2"}}}})
	count := func(q string) int {
		a := ghlDo(t, f, http.MethodGet, "/locations/loc-1/customFields"+q, nil)
		return len(a.body["customFields"].([]any))
	}
	if all, contact, opp := count(""), count("?model=contact"), count("?model=opportunity"); all != 5 || contact != 4 || opp != 1 {
		t.Errorf("fields: all %d contact %d opportunity %d", all, contact, opp)
	}
	c := f.AddContact(crmfake.GHLContact{Email: "a@example.com"})
	t0 := time.Now().Add(-time.Hour)
	var ids []string
	for i, st := range []string{"won", "open", "lost", "open", "open"} {
		ids = append(ids, f.AddOpportunity(crmfake.GHLOpportunity{Name: "o", ContactID: c, PipelineID: "p1", PipelineStageID: "s1",
			Status: st, CreatedAt: t0.Add(time.Duration(i) * time.Minute)}))
	}
	if slices.IsSorted(ids) {
		t.Errorf("opportunity ids %v are in creation order", ids)
	}
	search := func(q string) ghlAnswer {
		return ghlDo(t, f, http.MethodGet, "/opportunities/search?location_id=loc-1&contact_id="+c+q, nil)
	}
	if n := len(search("").body["opportunities"].([]any)); n != 3 {
		t.Errorf("no status: %d opportunities, want the 3 open ones", n)
	}
	if n := len(search("&status=all").body["opportunities"].([]any)); n != 5 {
		t.Errorf("status=all: %d, want 5", n)
	}
	if a := search("&limit=101"); a.status != 422 {
		t.Errorf("limit=101: %d, want 422", a.status)
	}
	a := search("&status=all&limit=2")
	if n := len(a.body["opportunities"].([]any)); n != 2 || a.body["meta"].(map[string]any)["nextPage"] != float64(2) {
		t.Errorf("paged: %s", a.raw)
	}
}

// A write can commit and still answer 422, or lose its answer: the contact exists either way.
func TestGoHighLevelFakeAnswersAfterCommit(t *testing.T) {
	f := newGHLFake(t, crmfake.GHLOptions{})
	f.AnswerAfterCommit(crmfake.Response{Path: "/contacts/", Status: 422, Body: `{"statusCode":422,"message":["Unprocessable Entity"],"error":"Unprocessable Entity"}`})
	if a := ghlDo(t, f, http.MethodPost, "/contacts/", map[string]any{"locationId": "loc-1", "email": "a@example.com"}); a.status != 422 {
		t.Errorf("create answered %d, want the injected 422", a.status)
	}
	if _, ok := f.Contact("a@example.com"); !ok {
		t.Error("the create that answered 422 did not create the contact")
	}
	f.AnswerAfterCommit(crmfake.Response{Path: "/contacts/"})
	b, _ := json.Marshal(map[string]any{"locationId": "loc-1", "email": "b@example.com"})
	req, _ := http.NewRequest(http.MethodPost, f.URL+"/contacts/", bytes.NewReader(b))
	req.Header.Set("Authorization", "Bearer t")
	req.Header.Set("Version", "2021-07-28")
	resp, err := http.DefaultClient.Do(req)
	if err == nil {
		resp.Body.Close()
		t.Fatalf("lost answer: got %d", resp.StatusCode)
	}
	if _, ok := f.Contact("b@example.com"); !ok {
		t.Errorf("the create whose answer was lost did not create the contact (%v)", err)
	}
}

package crmfake_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/leadgate/leadgate/crm/crmfake"
)

// Each test below holds the fake to a rule of ActiveCampaign's v3 reference; the page is named in the
// fake's handler comments.

func acErrPointer(out map[string]any) string {
	errs, _ := out["errors"].([]any)
	if len(errs) == 0 {
		return ""
	}
	src, _ := errs[0].(map[string]any)["source"].(map[string]any)
	p, _ := src["pointer"].(string)
	return p
}

// POST /contacts: the email is required unless a phone is given, the account has opted in to phone-only
// contacts and the request sets contact.allowNullEmail. contact/sync always needs the email.
func TestActiveCampaignFakeEmailIsRequiredUnlessThePhoneOnlyOptInApplies(t *testing.T) {
	tests := []struct {
		name        string
		accountOpts bool
		body        map[string]any
		want        int
	}{
		{"no email, no opt-in", true, map[string]any{"phone": "+14155550134"}, 422},
		{"opt-in without the account option", false, map[string]any{"phone": "+14155550134", "allowNullEmail": true}, 422},
		{"opt-in without a phone", true, map[string]any{"firstName": "J", "allowNullEmail": true}, 422},
		{"opt-in, account option and phone", true, map[string]any{"phone": "+14155550134", "allowNullEmail": true}, 201},
		{"with an email", false, map[string]any{"email": "a@example.com"}, 201},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := crmfake.NewActiveCampaign(crmfake.ACOptions{AllowNullEmail: tc.accountOpts})
			defer f.Close()
			status, out := acCall(t, f, http.MethodPost, "/api/3/contacts", map[string]any{"contact": tc.body})
			if status != tc.want {
				t.Fatalf("status %d %v, want %d", status, out, tc.want)
			}
			if status == 422 && acErrPointer(out) != "/data/attributes/email" {
				t.Errorf("422 body %v, want the reference's errors[] shape pointing at the email", out)
			}
		})
	}
	f := crmfake.NewActiveCampaign(crmfake.ACOptions{AllowNullEmail: true})
	defer f.Close()
	if status, _ := acCall(t, f, http.MethodPost, "/api/3/contact/sync", map[string]any{"contact": map[string]any{
		"phone": "+14155550134", "allowNullEmail": true}}); status != 422 {
		t.Errorf("contact/sync without an email: %d, want 422", status)
	}
}

// fieldValues entries are {"field": "<custom field id>", "value": "<string>"}: a field name, an unknown id,
// a number as value or a wrongly typed attribute are refused with a 422 naming the attribute.
func TestActiveCampaignFakeRefusesMistypedContactBodies(t *testing.T) {
	f := crmfake.NewActiveCampaign(crmfake.ACOptions{Fields: []crmfake.ACField{{ID: "3", Title: "Stage", Perstag: "STAGE"}}})
	defer f.Close()
	tests := []struct {
		name    string
		contact map[string]any
		pointer string
	}{
		{"field named by perstag", map[string]any{"email": "a@example.com", "fieldValues": []any{map[string]any{"field": "STAGE", "value": "x"}}}, "/data/attributes/fieldValues"},
		{"unknown field id", map[string]any{"email": "a@example.com", "fieldValues": []any{map[string]any{"field": "9", "value": "x"}}}, "/data/attributes/fieldValues"},
		{"number as value", map[string]any{"email": "a@example.com", "fieldValues": []any{map[string]any{"field": "3", "value": 7}}}, "/data/attributes/fieldValues"},
		{"email as a number", map[string]any{"email": 7}, "/data/attributes/email"},
		{"allowNullEmail as a string", map[string]any{"phone": "+14155550134", "allowNullEmail": "yes"}, "/data/attributes/allowNullEmail"},
	}
	for _, tc := range tests {
		status, out := acCall(t, f, http.MethodPost, "/api/3/contact/sync", map[string]any{"contact": tc.contact})
		if status != 422 || acErrPointer(out) != tc.pointer {
			t.Errorf("%s: %d %v, want 422 at %s", tc.name, status, out, tc.pointer)
		}
	}
	if status, _ := acCall(t, f, http.MethodPost, "/api/3/contact/sync", map[string]any{"contact": map[string]any{"email": "a@example.com",
		"fieldValues": []any{map[string]any{"field": 3, "value": "sql"}}}}); status != 201 {
		t.Errorf("integer field id: %d, want 201 (the reference's ids are strings, integers are the same id)", status)
	}
	if n := len(f.Contacts()); n != 1 {
		t.Errorf("%d contacts stored, want 1: refused bodies must not be half-applied", n)
	}
}

// POST /deals: value an integer of cents, currency lower-case ISO, a stage of the pipeline, and an owner
// where the pipeline's auto-assign option is off.
func TestActiveCampaignFakeDealCreationRules(t *testing.T) {
	f := crmfake.NewActiveCampaign(crmfake.ACOptions{Pipelines: []crmfake.ACPipeline{
		{ID: "1", Title: "Auto", Stages: []crmfake.ACField{{ID: "11"}, {ID: "12"}}},
		{ID: "2", Title: "Manual", NoAutoAssign: true, Stages: []crmfake.ACField{{ID: "21"}}},
	}})
	defer f.Close()
	contact := f.AddContact(crmfake.ACContact{Email: "d@example.com"})
	deal := func(over map[string]any) map[string]any {
		d := map[string]any{"title": "D", "contact": contact, "value": 0, "currency": "usd", "group": "1", "stage": "11"}
		for k, v := range over {
			if v == nil {
				delete(d, k)
			} else {
				d[k] = v
			}
		}
		return map[string]any{"deal": d}
	}
	tests := []struct {
		name string
		body map[string]any
		want int
	}{
		{"auto-assigned pipeline, no owner", deal(nil), 201},
		{"stage omitted: the pipeline's first", deal(map[string]any{"stage": nil}), 201},
		{"manual pipeline without owner", deal(map[string]any{"group": "2", "stage": "21"}), 422},
		{"manual pipeline with owner", deal(map[string]any{"group": "2", "stage": "21", "owner": "1"}), 201},
		{"owner who is no user", deal(map[string]any{"group": "2", "stage": "21", "owner": "99"}), 422},
		{"value as a string", deal(map[string]any{"value": "0"}), 422},
		{"currency in upper case", deal(map[string]any{"currency": "USD"}), 422},
		{"no currency", deal(map[string]any{"currency": nil}), 422},
		{"stage of another pipeline", deal(map[string]any{"stage": "21"}), 422},
	}
	for _, tc := range tests {
		if status, out := acCall(t, f, http.MethodPost, "/api/3/deals", tc.body); status != tc.want {
			t.Errorf("%s: %d %v, want %d", tc.name, status, out, tc.want)
		}
	}
	status, out := acCall(t, f, http.MethodGet, "/api/3/dealGroups/2", nil)
	if g, _ := out["dealGroup"].(map[string]any); status != 200 || g["autoassign"] != "0" || g["currency"] != "usd" {
		t.Errorf("GET /dealGroups/2: %d %v, want autoassign 0", status, out)
	}
	if status, out := acCall(t, f, http.MethodGet, "/api/3/users/me", nil); status != 200 || out["user"].(map[string]any)["id"] != "1" {
		t.Errorf("GET /users/me: %d %v", status, out)
	}
}

// Bulk import: at most 250 contacts, a payload under 400,000 bytes, an email on every contact, integer
// field ids, string values and tags, a boolean exclude_automations (a refused request queues nothing);
// automations run for every imported contact unless exclude_automations is true.
func TestActiveCampaignFakeBulkImportLimitsAndAutomations(t *testing.T) {
	f := crmfake.NewActiveCampaign(crmfake.ACOptions{Fields: []crmfake.ACField{{ID: "1", Title: "Stage"}}, ImportPolls: 1})
	defer f.Close()
	contacts := func(n int, pad int) []any {
		out := make([]any, n)
		for i := range out {
			out[i] = map[string]any{"email": fmt.Sprintf("b%d@example.com", i), "first_name": strings.Repeat("x", pad),
				"fields": []any{map[string]any{"id": 1, "value": "sql"}}}
		}
		return out
	}
	if status, out := acCall(t, f, http.MethodPost, "/api/3/import/bulk_import", map[string]any{"contacts": contacts(251, 0)}); status != 400 || out["success"] != float64(0) {
		t.Errorf("251 contacts: %d %v, want 400", status, out)
	}
	if status, out := acCall(t, f, http.MethodPost, "/api/3/import/bulk_import", map[string]any{"contacts": contacts(200, 2000)}); status != 400 {
		t.Errorf("a payload over 400,000 bytes: %d %v, want 400", status, out)
	}
	stringID := []any{map[string]any{"email": "s@example.com", "fields": []any{map[string]any{"id": "1", "value": "sql"}}}}
	if status, out := acCall(t, f, http.MethodPost, "/api/3/import/bulk_import", map[string]any{"contacts": stringID}); status != 400 || out["failureReasons"] == nil {
		t.Errorf("string field id: %d %v, want 400 with failureReasons", status, out)
	}
	for name, body := range map[string]map[string]any{
		"exclude_automations as a string":    {"contacts": contacts(2, 0), "exclude_automations": "true"},
		"a field value that is not a string": {"contacts": []any{map[string]any{"email": "v@example.com", "fields": []any{map[string]any{"id": 1, "value": 5}}}}},
		"a field without an id":              {"contacts": []any{map[string]any{"email": "v@example.com", "fields": []any{map[string]any{"value": "sql"}}}}},
		"a tag that is not a string":         {"contacts": []any{map[string]any{"email": "v@example.com", "tags": []any{7}}}},
		"a contact without an email":         {"contacts": []any{map[string]any{"email": "v@example.com"}, map[string]any{"phone": "+14155550100"}}},
	} {
		if status, out := acCall(t, f, http.MethodPost, "/api/3/import/bulk_import", body); status != 400 || out["success"] != float64(0) {
			t.Errorf("%s: %d %v, want 400", name, status, out)
		}
	}
	if len(f.BulkImports()) != 0 {
		t.Fatalf("refused imports were queued: %+v", f.BulkImports())
	}
	run := func(exclude bool) {
		status, out := acCall(t, f, http.MethodPost, "/api/3/import/bulk_import", map[string]any{"contacts": contacts(3, 0), "exclude_automations": exclude})
		if status != 200 {
			t.Fatalf("import: %d %v", status, out)
		}
		acCall(t, f, http.MethodGet, "/api/3/import/info?batchId="+out["batchId"].(string), nil)
	}
	run(true)
	if n := len(f.AutomationRuns()); n != 0 || len(f.Contacts()) != 3 {
		t.Fatalf("exclude_automations true: %d automation runs, %d contacts; want 0 runs, 3 contacts", n, len(f.Contacts()))
	}
	run(false)
	if runs := f.AutomationRuns(); len(runs) != 3 || runs[0].Trigger != "contact_updated" {
		t.Errorf("exclude_automations false: runs %+v, want 3 updates", runs)
	}
}

// Collections page with limit (default 20, at most 100) and offset, and carry meta.total.
func TestActiveCampaignFakePagesCollections(t *testing.T) {
	stages := make([]crmfake.ACField, 130)
	for i := range stages {
		stages[i].ID = fmt.Sprint(1000 + i)
	}
	f := crmfake.NewActiveCampaign(crmfake.ACOptions{Pipelines: []crmfake.ACPipeline{{ID: "1", Stages: stages}}})
	defer f.Close()
	contact := f.AddContact(crmfake.ACContact{Email: "p@example.com"})
	for i := range 130 {
		tag := f.AddTag(fmt.Sprintf("t%d", i))
		if status, _ := acCall(t, f, http.MethodPost, "/api/3/contactTags", map[string]any{"contactTag": map[string]any{"contact": contact, "tag": tag}}); status != 201 {
			t.Fatalf("tag %d: %d", i, status)
		}
		f.SetListStatus(fmt.Sprint(i+1), contact, "1")
	}
	for _, c := range []struct{ path, key string }{
		{"/api/3/contacts/" + contact + "/contactTags", "contactTags"},
		{"/api/3/contacts/" + contact + "/contactLists", "contactLists"},
		{"/api/3/dealStages?filters[d_groupid]=1", "dealStages"},
		{"/api/3/tags", "tags"},
	} {
		path, key := c.path, c.key
		sep := map[bool]string{true: "&", false: "?"}[strings.Contains(path, "?")]
		for _, tc := range []struct {
			query string
			want  int
		}{{"", 20}, {"limit=500", 100}, {"limit=100&offset=100", 30}} {
			status, out := acCall(t, f, http.MethodGet, path+sep+tc.query, nil)
			items, _ := out[key].([]any)
			meta, _ := out["meta"].(map[string]any)
			if status != 200 || len(items) != tc.want || meta["total"] != "130" {
				t.Errorf("%s %s: %d, %d items, meta %v; want %d of 130", path, tc.query, status, len(items), meta, tc.want)
			}
		}
	}
}

// At the account's documented limit the sixth request within a second is a 429 with Retry-After and the
// RateLimit-* headers.
func TestActiveCampaignFakeAccountRateLimit(t *testing.T) {
	f := crmfake.NewActiveCampaign(crmfake.ACOptions{Options: crmfake.Options{RateLimit: crmfake.ACAccountRateLimit, RetryAfter: 2}})
	defer f.Close()
	var last *http.Response
	for range crmfake.ACAccountRateLimit + 1 {
		req, _ := http.NewRequest(http.MethodGet, f.URL+"/api/3/contacts", nil)
		req.Header.Set("Api-Token", "tok")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		last = resp
	}
	if last.StatusCode != 429 || last.Header.Get("Retry-After") != "2" || last.Header.Get("RateLimit-Limit") != "5" || last.Header.Get("RateLimit-Remaining") != "0" {
		t.Errorf("sixth request: %d %v, want 429 with Retry-After 2 and RateLimit-Limit 5", last.StatusCode, last.Header)
	}
}

// TimeoutAfterCommit: the write is stored, the client gets no answer.
func TestActiveCampaignFakeTimeoutAfterCommit(t *testing.T) {
	f := crmfake.NewActiveCampaign(crmfake.ACOptions{AllowNullEmail: true})
	defer f.Close()
	f.TimeoutAfterCommit(http.MethodPost, "/api/3/contacts")
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	b, _ := json.Marshal(map[string]any{"contact": map[string]any{"phone": "+14155550134", "allowNullEmail": true}})
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, f.URL+"/api/3/contacts", bytes.NewReader(b))
	req.Header.Set("Api-Token", "tok")
	if resp, err := http.DefaultClient.Do(req); err == nil {
		resp.Body.Close()
		t.Fatalf("got an answer %d, want a timeout", resp.StatusCode)
	}
	if cs := f.Contacts(); len(cs) != 1 || cs[0].Phone != "+14155550134" {
		t.Errorf("contacts %+v, want the write committed", cs)
	}
	if status, _ := acCall(t, f, http.MethodPost, "/api/3/contacts", map[string]any{"contact": map[string]any{"phone": "+14155550135", "allowNullEmail": true}}); status != 201 {
		t.Errorf("the next request: %d, want answered normally", status)
	}
}

// Tag names match without regard to case: a second tag of the same name is refused, the importer reuses
// the existing tag.
func TestActiveCampaignFakeTagNamesAreCaseInsensitive(t *testing.T) {
	f := crmfake.NewActiveCampaign(crmfake.ACOptions{ImportPolls: 1})
	defer f.Close()
	f.AddTag("Webinar")
	if status, _ := acCall(t, f, http.MethodPost, "/api/3/tags", map[string]any{"tag": map[string]any{"tag": "webinar", "tagType": "contact"}}); status != 422 {
		t.Errorf("second tag 'webinar': %d, want 422 duplicate", status)
	}
	_, out := acCall(t, f, http.MethodGet, "/api/3/tags?filters[search][eq]=WEBINAR", nil)
	if tags, _ := out["tags"].([]any); len(tags) != 1 {
		t.Errorf("exact search in another case: %v", out)
	}
	_, out = acCall(t, f, http.MethodPost, "/api/3/import/bulk_import", map[string]any{"contacts": []any{
		map[string]any{"email": "w@example.com", "tags": []string{"WEBINAR"}}, map[string]any{"email": "v@example.com"}}})
	acCall(t, f, http.MethodGet, "/api/3/import/info?batchId="+out["batchId"].(string), nil)
	if c, _ := f.Contact("w@example.com"); len(c.Tags) != 1 || c.Tags[0] != "Webinar" {
		t.Errorf("imported contact tags %v, want the existing Webinar", c.Tags)
	}
	_, out = acCall(t, f, http.MethodGet, "/api/3/tags", nil)
	if tags, _ := out["tags"].([]any); len(tags) != 1 {
		t.Errorf("tags after import %v, want still one", out)
	}
}

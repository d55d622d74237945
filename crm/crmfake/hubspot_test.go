package crmfake_test

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/leadgate/leadgate/crm/crmfake"
)

// hsCall sends one request to the HubSpot fake and returns its status, headers and decoded body.
func hsCall(t *testing.T, f *crmfake.HubSpot, method, path, body string) (int, http.Header, map[string]any) {
	t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, _ := http.NewRequest(method, f.URL+path, rd)
	req.Header.Set("Authorization", "Bearer t")
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	var out map[string]any
	if len(bytes.TrimSpace(raw)) > 0 {
		if err := json.Unmarshal(raw, &out); err != nil {
			t.Fatalf("%s %s: body %s is not a JSON object: %v", method, path, raw, err)
		}
	}
	return resp.StatusCode, resp.Header, out
}

// The fake refuses the requests HubSpot's published description refuses (PublicApiSpecs/CRM/Contacts/
// Rollouts/424/v3/contacts.json and the deals, associations and tasks descriptions): missing required
// members, members the schema does not declare, wrong types, too many inputs, and search requests beyond
// its limits.
func TestHubSpotFakeRefusesWhatTheDescriptionRefuses(t *testing.T) {
	f := crmfake.NewHubSpot(crmfake.HSOptions{Properties: []string{"budget"}, SearchPerSecond: -1})
	defer f.Close()
	inputs := func(n int) string {
		var parts []string
		for i := range n {
			parts = append(parts, `{"id":"`+strings.Repeat("1", i+1)+`"}`)
		}
		return strings.Join(parts, ",")
	}
	group := `{"filters":[{"propertyName":"phone","operator":"EQ","value":"1"}]}`
	search := func(groups int, limit string) string {
		return `{"filterGroups":[` + strings.TrimSuffix(strings.Repeat(group+",", groups), ",") + `],"properties":[],"limit":` + limit + `,"after":"0","sorts":[]}`
	}
	tests := []struct {
		name, method, path, body string
		want                     string // in the message
	}{
		{"batch read without propertiesWithHistory", "POST", "/crm/v3/objects/contacts/batch/read", `{"inputs":[{"id":"1"}],"properties":[]}`, "propertiesWithHistory"},
		{"batch read input without id", "POST", "/crm/v3/objects/contacts/batch/read", `{"inputs":[{}],"properties":[],"propertiesWithHistory":[]}`, "[id]"},
		{"batch read of 101 inputs", "POST", "/crm/v3/objects/contacts/batch/read", `{"inputs":[` + inputs(101) + `],"properties":[],"propertiesWithHistory":[]}`, "at most 100"},
		{"upsert input without properties", "POST", "/crm/v3/objects/contacts/batch/upsert", `{"inputs":[{"id":"a@b.co","idProperty":"email"}]}`, "properties"},
		{"upsert with an undeclared member", "POST", "/crm/v3/objects/contacts/batch/upsert", `{"inputs":[{"id":"a@b.co","idProperty":"email","properties":{},"associations":[]}]}`, "unknown field"},
		{"upsert with a number property value", "POST", "/crm/v3/objects/contacts/batch/upsert", `{"inputs":[{"id":"a@b.co","idProperty":"email","properties":{"budget":5}}]}`, "Invalid input JSON"},
		{"update of a property the account lacks", "POST", "/crm/v3/objects/contacts/batch/update", `{"inputs":[{"id":"1","properties":{"nope":"x"}}]}`, "PROPERTY_DOESNT_EXIST"},
		{"update of a read-only property", "POST", "/crm/v3/objects/contacts/batch/update", `{"inputs":[{"id":"1","properties":{"hs_object_id":"9"}}]}`, "READ_ONLY_VALUE"},
		{"lifecyclestage not an option", "POST", "/crm/v3/objects/contacts/batch/update", `{"inputs":[{"id":"1","properties":{"lifecyclestage":"prospect"}}]}`, "INVALID_OPTION"},
		{"create without associations", "POST", "/crm/v3/objects/contacts", `{"properties":{"phone":"1"}}`, "associations"},
		{"search without after and sorts", "POST", "/crm/v3/objects/contacts/search", `{"filterGroups":[],"properties":[],"limit":10}`, "after, sorts"},
		{"search of 6 filter groups", "POST", "/crm/v3/objects/contacts/search", search(6, "10"), "filter groups"},
		{"search limit over 200", "POST", "/crm/v3/objects/contacts/search", search(1, "201"), "limit"},
		{"search with an undeclared operator", "POST", "/crm/v3/objects/contacts/search", strings.Replace(search(1, "10"), `"EQ"`, `"EQUALS"`, 1), "operator"},
		{"search IN without values", "POST", "/crm/v3/objects/contacts/search", strings.Replace(search(1, "10"), `"EQ"`, `"IN"`, 1), "values"},
		{"deal batch read without propertiesWithHistory", "POST", "/crm/v3/objects/0-3/batch/read", `{"inputs":[],"properties":[]}`, "propertiesWithHistory"},
		{"task create without associations", "POST", "/crm/v3/objects/tasks", `{"properties":{"hs_timestamp":"1"}}`, "associations"},
		{"association with an unknown category", "POST", "/crm/v3/objects/contacts", `{"properties":{},"associations":[{"to":{"id":"1"},"types":[{"associationCategory":"MINE","associationTypeId":1}]}]}`, "associationCategory"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f.AddContact(map[string]string{"email": "x@example.com"}) // id 1001+; "1" never exists
			status, _, body := hsCall(t, f, tc.method, tc.path, tc.body)
			msg, _ := body["message"].(string)
			if status != http.StatusBadRequest || body["category"] != "VALIDATION_ERROR" || !strings.Contains(msg, tc.want) {
				t.Errorf("status %d body %v, want 400 VALIDATION_ERROR mentioning %q", status, body, tc.want)
			}
			if body["correlationId"] == nil {
				t.Errorf("error body %v lacks correlationId (required by Error)", body)
			}
		})
	}
}

// Each failed input of a 207 is a StandardError: status, category, message, context (arrays of strings),
// links and errors present, and subCategory an object.
func TestHubSpotFake207ErrorsAreStandardErrors(t *testing.T) {
	f := crmfake.NewHubSpot(crmfake.HSOptions{})
	defer f.Close()
	status, _, body := hsCall(t, f, "POST", "/crm/v3/objects/contacts/batch/upsert",
		`{"inputs":[{"id":"ok@example.com","idProperty":"email","properties":{}},{"id":"not an email","idProperty":"email","properties":{}}]}`)
	errs, _ := body["errors"].([]any)
	if status != http.StatusMultiStatus || len(errs) != 1 || body["numErrors"] != float64(1) {
		t.Fatalf("status %d body %v, want a 207 with one error", status, body)
	}
	e := errs[0].(map[string]any)
	for _, k := range []string{"status", "category", "message", "context", "links", "errors"} {
		if _, ok := e[k]; !ok {
			t.Errorf("StandardError lacks required %q: %v", k, e)
		}
	}
	if _, ok := e["subCategory"].(map[string]any); !ok {
		t.Errorf("subCategory = %#v, want an object", e["subCategory"])
	}
	if ids, _ := e["context"].(map[string]any)["ids"].([]any); len(ids) != 1 || ids[0] != "not an email" {
		t.Errorf("context %v, want ids naming the failed input", e["context"])
	}
}

// Search is exempt from the 10 s burst window and limited on its own (about 4 per second); the burst
// window's answers carry X-HubSpot-RateLimit-Max, -Remaining and -Interval-Milliseconds.
func TestHubSpotFakeTierLimitsAndSearchLimit(t *testing.T) {
	f := crmfake.NewHubSpot(crmfake.HSOptions{Options: crmfake.Options{RateLimit: 2}})
	defer f.Close()
	status, h, _ := hsCall(t, f, "GET", "/crm/v3/objects/contacts", "")
	if status != 200 || h.Get("X-HubSpot-RateLimit-Max") != "2" || h.Get("X-HubSpot-RateLimit-Remaining") != "1" ||
		h.Get("X-HubSpot-RateLimit-Interval-Milliseconds") != "10000" {
		t.Errorf("status %d headers %v", status, h)
	}
	hsCall(t, f, "GET", "/crm/v3/objects/contacts", "")
	status, h, body := hsCall(t, f, "GET", "/crm/v3/objects/contacts", "")
	if status != http.StatusTooManyRequests || body["policyName"] != "TEN_SECONDLY_ROLLING" || h.Get("Retry-After") != "" {
		t.Errorf("third request: %d %v %v, want 429 TEN_SECONDLY_ROLLING without Retry-After", status, h, body)
	}
	search := `{"filterGroups":[],"properties":[],"limit":1,"after":"0","sorts":[]}`
	var statuses []int
	for range 5 {
		s, _, _ := hsCall(t, f, "POST", "/crm/v3/objects/contacts/search", search)
		statuses = append(statuses, s)
	}
	if statuses[0] != 200 || statuses[3] != 200 || statuses[4] != http.StatusTooManyRequests {
		t.Errorf("5 searches at once: %v, want 4 answered (exempt from the burst window) and the 5th 429", statuses)
	}
	if lim, daily := crmfake.HSTierLimits(crmfake.HSTierPro); lim != 190 || daily != 650_000 {
		t.Errorf("Pro limits %d/%d", lim, daily)
	}
}

// The daily quota answers 429 naming policy DAILY once used up, and resets at midnight in the account's
// time zone, which GET /account-info/v3/details names.
func TestHubSpotFakeDailyQuotaResetsAtTheAccountsMidnight(t *testing.T) {
	now := time.Date(2026, 12, 1, 7, 59, 0, 0, time.UTC) // 23:59 in US/Pacific
	f := crmfake.NewHubSpot(crmfake.HSOptions{DailyLimit: 2, TimeZone: "US/Pacific", Now: func() time.Time { return now }})
	defer f.Close()
	_, _, details := hsCall(t, f, "GET", "/account-info/v3/details", "")
	if details["timeZone"] != "US/Pacific" || details["utcOffsetMilliseconds"] != float64(-8*3600*1000) {
		t.Errorf("account details %v", details)
	}
	_, h, _ := hsCall(t, f, "GET", "/crm/v3/objects/contacts", "")
	if h.Get("X-HubSpot-RateLimit-Daily") != "2" || h.Get("X-HubSpot-RateLimit-Daily-Remaining") != "0" {
		t.Errorf("daily headers %v", h)
	}
	status, _, body := hsCall(t, f, "GET", "/crm/v3/objects/contacts", "")
	if status != http.StatusTooManyRequests || body["policyName"] != "DAILY" {
		t.Errorf("over the quota: %d %v, want 429 DAILY", status, body)
	}
	now = now.Add(time.Minute) // midnight in Los Angeles
	if status, _, _ := hsCall(t, f, "GET", "/crm/v3/objects/contacts", ""); status != http.StatusOK {
		t.Errorf("after the account's midnight: %d, want 200", status)
	}
}

// v4 association batch reads page per input: a result with more than one page carries paging.next.after,
// and that cursor sent back with the id returns the next page; toObjectId is a string.
func TestHubSpotFakeAssociationsPagePerInput(t *testing.T) {
	f := crmfake.NewHubSpot(crmfake.HSOptions{AssociationPageSize: 2})
	defer f.Close()
	c := f.AddContact(map[string]string{"email": "a@example.com"})
	for range 3 {
		f.AddDeal(c, "default", "appointmentscheduled")
	}
	read := func(after string) map[string]any {
		in := map[string]any{"id": c}
		if after != "" {
			in["after"] = after
		}
		b, _ := json.Marshal(map[string]any{"inputs": []any{in}})
		_, _, body := hsCall(t, f, "POST", "/crm/v4/associations/contacts/deals/batch/read", string(b))
		return body["results"].([]any)[0].(map[string]any)
	}
	first := read("")
	to := first["to"].([]any)
	next, _ := first["paging"].(map[string]any)["next"].(map[string]any)["after"].(string)
	if len(to) != 2 || next == "" {
		t.Fatalf("first page %v, want 2 deals and paging.next.after", first)
	}
	if _, ok := to[0].(map[string]any)["toObjectId"].(string); !ok {
		t.Errorf("toObjectId %#v, want a string", to[0].(map[string]any)["toObjectId"])
	}
	second := read(next)
	if len(second["to"].([]any)) != 1 || second["paging"] != nil {
		t.Errorf("second page %v, want the last deal and no paging", second)
	}
}

package crmfake_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"testing"

	"github.com/leadgate/leadgate/crm/crmfake"
)

func acCall(t *testing.T, f *crmfake.ActiveCampaign, method, path string, body any) (int, map[string]any) {
	t.Helper()
	var rd *bytes.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		rd = bytes.NewReader(b)
	} else {
		rd = bytes.NewReader(nil)
	}
	req, _ := http.NewRequest(method, f.URL+path, rd)
	req.Header.Set("Api-Token", "tok")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out map[string]any
	_ = json.NewDecoder(resp.Body).Decode(&out)
	return resp.StatusCode, out
}

// The fake importer answers with AC's documented shapes: a queued batch id, a status that completes on
// the second read listing imported (created and updated) ids and failed emails, a 400 validation answer and its 400 rate limit
// (single-contact requests have their own, lower limit).
func TestActiveCampaignFakeBulkImportShapes(t *testing.T) {
	f := crmfake.NewActiveCampaign(crmfake.ACOptions{Fields: []crmfake.ACField{{ID: "1", Title: "Stage"}}, ImportsPerMinute: 2,
		SingleImportsPerMinute: 1})
	defer f.Close()
	existing := f.AddContact(crmfake.ACContact{Email: "old@example.com"})
	status, out := acCall(t, f, http.MethodPost, "/api/3/import/bulk_import", map[string]any{"contacts": []any{
		map[string]any{"email": "old@example.com", "fields": []any{map[string]any{"id": 1, "value": "SQL"}}},
		map[string]any{"email": "new@example.com", "first_name": "New", "tags": []string{"t1"}},
		map[string]any{"email": "broken", "fields": []any{}},
	}})
	if status != 200 || out["success"] != float64(1) || out["queued_contacts"] != float64(3) || out["batchId"] == "" || out["message"] != "Contact import queued" {
		t.Fatalf("queue answer %d %v", status, out)
	}
	batch := out["batchId"].(string)
	if _, c := f.Contact("new@example.com"); c {
		t.Error("the import was applied before its status was read: it must be asynchronous")
	}
	status, out = acCall(t, f, http.MethodGet, "/api/3/import/info?batchId="+batch, nil)
	if status != 200 || out["status"] != "waiting" {
		t.Errorf("first status read %d %v, want waiting", status, out)
	}
	_, out = acCall(t, f, http.MethodGet, "/api/3/import/info?batchId="+batch, nil)
	created, _ := f.Contact("new@example.com")
	success, _ := out["success"].([]any)
	failure, _ := out["failure"].([]any)
	if out["status"] != "completed" || len(success) != 2 || success[0] != created.ID || success[1] != existing || len(failure) != 1 || failure[0] != "broken" {
		t.Errorf("completed status %v; want success [%s %s] (created and updated) and failure [broken]", out, created.ID, existing)
	}
	if c, _ := f.Contact("old@example.com"); c.ID != existing || c.Fields["1"] != "SQL" {
		t.Errorf("existing contact %+v, want updated in place", c)
	}
	if status, out = acCall(t, f, http.MethodPost, "/api/3/import/bulk_import", map[string]any{"contacts": []any{map[string]any{"first_name": "x"}}}); status != 400 || out["success"] != float64(0) || out["failureReasons"] == nil {
		t.Errorf("missing email: %d %v, want 400 with failureReasons", status, out)
	}
	if status, out = acCall(t, f, http.MethodPost, "/api/3/import/bulk_import", map[string]any{"contacts": []any{map[string]any{"email": "a@example.com"}}}); status != 400 || out["message"] != "Rate limit exceeded." {
		t.Errorf("second single-contact import in a minute (limit 1): %d %v, want AC's 400 rate limit", status, out)
	}
	if status, _ = acCall(t, f, http.MethodGet, "/api/3/import/info?batchId=nope", nil); status != 404 {
		t.Errorf("unknown batch: %d, want 404", status)
	}
}

// The GoHighLevel fake's v2 contact search pages by page number or by the last contact's searchAfter values.
func TestGoHighLevelFakeSearchPages(t *testing.T) {
	f := crmfake.NewGoHighLevel(crmfake.GHLOptions{})
	defer f.Close()
	for i := range 5 {
		f.AddContact(crmfake.GHLContact{Email: fmt.Sprintf("c%d@example.com", i)})
	}
	search := func(body map[string]any) (int, map[string]any) {
		b, _ := json.Marshal(body)
		req, _ := http.NewRequest(http.MethodPost, f.URL+"/contacts/search", bytes.NewReader(b))
		req.Header.Set("Authorization", "Bearer t")
		req.Header.Set("Version", "2021-07-28")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var out map[string]any
		_ = json.NewDecoder(resp.Body).Decode(&out)
		return resp.StatusCode, out
	}
	var seen []string
	var after any
	for range 4 {
		body := map[string]any{"locationId": "loc-1", "pageLimit": 2}
		if after != nil {
			body["searchAfter"] = after
		}
		status, out := search(body)
		cs, _ := out["contacts"].([]any)
		if status != 200 || out["total"] != float64(5) {
			t.Fatalf("search %d %v", status, out)
		}
		for _, c := range cs {
			seen = append(seen, c.(map[string]any)["id"].(string))
			after = c.(map[string]any)["searchAfter"]
		}
		if len(cs) < 2 {
			break
		}
	}
	all := f.Contacts()
	if len(seen) != 5 || seen[0] != all[0].ID || seen[4] != all[4].ID {
		t.Errorf("paged ids %v, want the 5 contacts in order", seen)
	}
	if status, _ := search(map[string]any{"pageLimit": 2}); status != 422 {
		t.Errorf("search without locationId: %d, want 422", status)
	}
}

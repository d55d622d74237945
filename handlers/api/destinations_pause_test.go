package api_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/leadgate/leadgate/crm/crmfake"
	"github.com/leadgate/leadgate/models"
)

// Test connection lists every missing piece of an ActiveCampaign setup (both loop-breaker fields, the stage
// field and a mapped field), not only the first, and says leadgate can create some; loop-fields
// {"create":true} creates the loop-breaker and stage fields (audited) and leaves the mapped field listed;
// a destination the system paused for its setup shows its cause and resumes at once when nothing is
// missing.
func TestTestConnectionListsEveryMissingPieceAndLoopFieldsCreatesThem(t *testing.T) {
	t.Parallel()
	e := newLCEnv(t)
	fake := crmfake.NewActiveCampaign(crmfake.ACOptions{Options: crmfake.Options{Token: "ac-token"},
		Fields: []crmfake.ACField{{Title: "Notes", Perstag: "NOTES"}}})
	defer fake.Close()
	status, body := e.call("POST", "/destinations", map[string]any{"name": "AC", "kind": "activecampaign", "base_url": fake.URL,
		"api_token": "ac-token", "stage_field": "lifecycle_stage", "field_map": map[string]string{"budget": "BUDGET"}})
	if status != http.StatusCreated {
		t.Fatalf("create: %d %v", status, body)
	}
	id := int64(body["id"].(float64))
	path := fmt.Sprintf("/destinations/%d", id)

	status, body = e.call("POST", path+"/test-connection", nil)
	missing, _ := body["missing"].([]any)
	if status != 200 || body["ok"] != true || body["setup_complete"] != false || body["can_create"] != true || len(missing) != 4 {
		t.Fatalf("test-connection: %d %v; want ok, setup incomplete, 4 missing pieces, can_create", status, body)
	}
	settings := map[string]bool{}
	for _, m := range missing {
		p := m.(map[string]any)
		settings[fmt.Sprint(p["setting"])] = p["creatable"] == true
		if p["message"] == "" {
			t.Errorf("missing piece without a message: %v", p)
		}
	}
	want := map[string]bool{"loop_field": true, "sync_field": true, "stage_field": true, "field_map[budget]": false}
	if fmt.Sprint(settings) != fmt.Sprint(want) {
		t.Errorf("missing pieces (setting: creatable) %v, want %v", settings, want)
	}

	// The relay found the same fault and paused the destination for it.
	if _, err := e.store.DestinationPauseFault(e.ctx, id, models.PauseSetup, "ActiveCampaign account lacks the loop-breaker field", nil, time.Now()); err != nil {
		t.Fatal(err)
	}
	if status, got := e.call("GET", path, nil); status != 200 || got["paused"] != true || got["pause_cause"] != "setup" || got["paused_reason"] == nil {
		t.Errorf("get paused: %d %v; want paused, pause_cause setup and a reason", status, got)
	}

	status, body = e.call("POST", path+"/loop-fields", map[string]any{"create": true})
	if status != 200 || body["created"] != true || fmt.Sprint(body["created_fields"]) != "[last_automation_source sync_timestamp lifecycle_stage]" {
		t.Fatalf("loop-fields create: %d %v", status, body)
	}
	if left, _ := body["missing"].([]any); len(left) != 1 || !strings.Contains(fmt.Sprint(left[0]), "BUDGET") {
		t.Errorf("still missing %v, want only the mapped BUDGET field", body["missing"])
	}
	if body["resumed"] != false {
		t.Errorf("resumed with a piece still missing: %v", body)
	}
	var n int64
	e.store.DB().Raw(`SELECT count(*) FROM audit_log WHERE action = 'destination.loop_fields.create' AND subject_id = ?`, fmt.Sprint(id)).Scan(&n)
	if n != 1 {
		t.Errorf("audit entries of the creation = %d, want 1", n)
	}

	fake.AddField(crmfake.ACField{Title: "Budget", Perstag: "BUDGET"}) // the operator adds the last one by hand
	status, body = e.call("POST", path+"/loop-fields", nil)
	if status != 200 || body["resumed"] != true {
		t.Fatalf("loop-fields after the fix: %d %v; want resumed", status, body)
	}
	if status, got := e.call("GET", path, nil); status != 200 || got["paused"] != false || got["pause_cause"] != nil {
		t.Errorf("get after resume: %d %v", status, got)
	}
	if status, body := e.call("POST", path+"/test-connection", nil); status != 200 || body["setup_complete"] != true {
		t.Errorf("test-connection after the fix: %d %v", status, body)
	}
}

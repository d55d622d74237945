package api_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/leadgate/leadgate/crm/crmfake"
	"github.com/leadgate/leadgate/internal/testkit"
	"github.com/leadgate/leadgate/models"
)

// The destinations API end to end: the default sandbox exists, a new ActiveCampaign destination is created
// (201 {"id"}), its token is sealed at rest and never returned, it can be tested, discovered and paused /
// resumed, every change is audited, and bad input gets a clear 400.
func TestDestinationsAPI(t *testing.T) {
	t.Parallel()
	e := newLCEnv(t)
	fake := crmfake.NewActiveCampaign(crmfake.ACOptions{Options: crmfake.Options{Token: "ac-secret-token"},
		Fields: []crmfake.ACField{{Title: "Lifecycle stage", Perstag: "STAGE"}}})
	defer fake.Close()

	status, list := e.call("GET", "/destinations", nil)
	if status != 200 || len(list["destinations"].([]any)) != 1 || list["destinations"].([]any)[0].(map[string]any)["kind"] != "sandbox" {
		t.Fatalf("default workspace destinations: %d %v; want the sandbox", status, list)
	}

	status, body := e.call("POST", "/destinations", map[string]any{"name": "AC", "kind": "activecampaign", "base_url": fake.URL,
		"api_token": "ac-secret-token", "stage_field": "1", "rate_limit_rps": 5, "batch_size": 20})
	if status != http.StatusCreated || body["id"] == nil {
		t.Fatalf("create: %d %v", status, body)
	}
	id := int64(body["id"].(float64))
	path := fmt.Sprintf("/destinations/%d", id)

	status, got := e.call("GET", path, nil)
	if status != 200 || got["has_api_token"] != true || strings.Contains(fmt.Sprint(got), "ac-secret-token") {
		t.Fatalf("get: %d %v; want has_api_token and no token", status, got)
	}
	var sealed []byte
	e.store.DB().Raw(`SELECT api_token_enc FROM destinations WHERE id = ?`, id).Scan(&sealed)
	if len(sealed) == 0 || strings.Contains(string(sealed), "ac-secret-token") {
		t.Error("the token is not sealed at rest")
	}

	if status, body := e.call("POST", path+"/test-connection", nil); status != 200 || body["ok"] != true {
		t.Errorf("test-connection: %d %v", status, body)
	}
	if status, body := e.call("GET", path+"/discover", nil); status != 200 || body["Loop"] == nil {
		t.Errorf("discover: %d %v", status, body)
	}
	if status, body := e.call("POST", path+"/loop-fields", map[string]any{"create": true}); status != 200 || body["created"] != true {
		t.Errorf("loop-fields create: %d %v", status, body)
	}

	if status, body := e.call("PATCH", path, map[string]any{"paused": true}); status != 200 || body["paused"] != true {
		t.Errorf("pause: %d %v", status, body)
	}
	if status, body := e.call("PATCH", path, map[string]any{"paused": false, "rate_limit_rps": 3}); status != 200 || body["paused"] != false || body["rate_limit_rps"] != float64(3) {
		t.Errorf("resume: %d %v", status, body)
	}
	var actions []string
	e.store.DB().Raw(`SELECT action FROM audit_log WHERE subject_type = 'destination' AND subject_id = ? ORDER BY id`, fmt.Sprint(id)).Scan(&actions)
	if strings.Join(actions, ",") != "destination.create,destination.loop_fields.create,destination.update,destination.update" {
		t.Errorf("audit trail %v", actions)
	}
	if status, body := e.call("GET", path+"/stats", nil); status != 200 || body["pending"] == nil || body["crm_calls"] == nil {
		t.Errorf("stats: %d %v", status, body)
	}

	bad := []struct {
		body  map[string]any
		field string
	}{
		{map[string]any{"name": "x", "kind": "salesforce", "api_token": "t"}, "kind"},
		{map[string]any{"name": "x", "kind": "activecampaign", "base_url": "https://a.example"}, "api_token"},
		{map[string]any{"name": "x", "kind": "activecampaign", "api_token": "t"}, "base_url"},
		{map[string]any{"name": "x", "kind": "gohighlevel", "api_token": "t"}, "location_id"},
		{map[string]any{"name": "x", "kind": "sandbox", "batch_size": 500}, "batch_size"},
		{map[string]any{"name": "", "kind": "sandbox"}, "name"},
		{map[string]any{"name": "x", "kind": "sandbox", "color": "red"}, "color"},
	}
	for _, b := range bad {
		if status, body := e.call("POST", "/destinations", b.body); status != 400 || body["field"] != b.field {
			t.Errorf("POST %v: %d %v; want 400 on %s", b.body, status, body, b.field)
		}
	}
	if status, _ := e.call("GET", "/destinations/99999", nil); status != 404 {
		t.Errorf("unknown destination: %d, want 404", status)
	}
}

// Through the real app: an applied event reaches the default sandbox via the relay, and the sandbox is
// browsable through the API.
func TestSandboxReceivesAppliedContact(t *testing.T) {
	t.Parallel()
	e := newLCEnv(t)
	e.applied("form_submitted", "jane@example.com", "", time.Now().Add(-time.Minute), nil)
	if _, err := e.app.Sync.Relay.FanOut(e.ctx); err != nil {
		t.Fatal(err)
	}
	ds, _ := e.store.DestinationList(e.ctx, e.ws)
	testkit.Eventually(t, 10*time.Second, "sandbox holds the contact", func() bool {
		_, _ = e.app.Sync.Relay.Drain(e.ctx, ds[0].ID)
		status, body := e.call("GET", fmt.Sprintf("/destinations/%d/sandbox/contacts", ds[0].ID), nil)
		cs, _ := body["contacts"].([]any)
		return status == 200 && len(cs) == 1 && cs[0].(map[string]any)["email"] == "jane@example.com" && cs[0].(map[string]any)["stage"] == "Discovered"
	})
	st, err := e.store.StatsGet(e.ctx, e.ws)
	if err != nil || st.OutboxPending != 0 {
		t.Errorf("outbox_pending = %d (%v) after the sync, want 0", st.OutboxPending, err)
	}
	var dest models.Destination
	dest, _ = e.store.DestinationByID(e.ctx, ds[0].ID)
	if dest.SyncedTotal != 1 || dest.CallsTotal != 1 {
		t.Errorf("sandbox counters synced=%d calls=%d, want 1, 1", dest.SyncedTotal, dest.CallsTotal)
	}
}

package api_test

import (
	"fmt"
	"net/http"
	"testing"
)

// The ActiveCampaign settings are stored and shown (allow_null_email, deal_owner, automations), and an
// automations value that is not live, never or always is a clear 400.
func TestDestinationsAPIActiveCampaignSettings(t *testing.T) {
	t.Parallel()
	e := newLCEnv(t)
	base := map[string]any{"name": "AC", "kind": "activecampaign", "base_url": "https://acct.api-us1.com", "api_token": "t",
		"allow_null_email": true, "deal_owner": "7", "automations": "never"}
	status, body := e.call("POST", "/destinations", base)
	if status != http.StatusCreated {
		t.Fatalf("create: %d %v", status, body)
	}
	status, got := e.call("GET", fmt.Sprintf("/destinations/%d", int64(body["id"].(float64))), nil)
	cfg, _ := got["config"].(map[string]any)
	if status != 200 || cfg["allow_null_email"] != true || cfg["deal_owner"] != "7" || cfg["automations"] != "never" {
		t.Errorf("get: %d config %v", status, cfg)
	}
	base["automations"] = "sometimes"
	if status, body := e.call("POST", "/destinations", base); status != http.StatusBadRequest || fmt.Sprint(body) == "" {
		t.Errorf("automations sometimes: %d %v, want 400", status, body)
	}
}

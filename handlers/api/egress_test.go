package api_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
)

// An editor cannot point leadgate at its own network: a destination's or hydration provider's base_url
// and the side-effect webhook on a literal private, loopback (other than the allowed 127.0.0.1),
// link-local or metadata address, or localhost, are refused at save time with a JSON error naming the
// setting that allows them, and nothing is saved. (Names are checked again on every connection.)
func TestSaveRefusesPrivateOutboundURLs(t *testing.T) {
	t.Parallel()
	e := newLCEnv(t) // LEADGATE_EGRESS_ALLOWED_HOSTS=127.0.0.1
	status, body := e.call("POST", "/destinations", map[string]any{"name": "HS", "kind": "hubspot", "api_token": "t"})
	if status != http.StatusCreated {
		t.Fatalf("create: %d %v", status, body)
	}
	dest := fmt.Sprintf("/destinations/%v", body["id"])
	for _, target := range []string{"http://10.0.0.5", "https://169.254.169.254/latest/meta-data", "http://[::1]:6379", "http://localhost:6379",
		"http://192.168.1.10:8080/hook", "http://0.0.0.0:6379"} {
		for _, req := range []struct {
			method, path, field string
			body                map[string]any
		}{
			{"POST", "/destinations", "base_url", map[string]any{"name": "AC", "kind": "activecampaign", "api_token": "t", "base_url": target}},
			{"PATCH", dest, "base_url", map[string]any{"base_url": target}},
			{"PUT", "/side-effect-webhook", "url", map[string]any{"url": target + "/hook"}},
			{"PUT", "/hydration-providers/meta", "base_url", map[string]any{"token": "t", "base_url": target}},
		} {
			status, body := e.call(req.method, req.path, req.body)
			msg, _ := body["error"].(string)
			if status != http.StatusBadRequest || body["field"] != req.field || !strings.Contains(msg, "LEADGATE_EGRESS_ALLOWED_HOSTS") {
				t.Errorf("%s %s %s: %d %v; want 400 on %s naming LEADGATE_EGRESS_ALLOWED_HOSTS", req.method, req.path, target, status, body, req.field)
			}
		}
	}
	var saved int64
	e.store.DB().Raw(`SELECT (SELECT count(*) FROM destinations WHERE base_url <> '') + (SELECT count(*) FROM side_effect_webhooks)
		+ (SELECT count(*) FROM hydration_providers)`).Scan(&saved)
	if saved != 0 {
		t.Errorf("%d destinations with a base_url, webhooks or provider credentials saved, want 0", saved)
	}
	// Public names and the allowed loopback address are fine.
	for _, req := range []struct {
		method, path string
		body         map[string]any
	}{
		{"PUT", "/side-effect-webhook", map[string]any{"url": "https://hooks.example.com/leadgate"}},
		{"PUT", "/hydration-providers/hubspot", map[string]any{"token": "t", "base_url": "http://127.0.0.1:9999"}},
		{"PATCH", dest, map[string]any{"base_url": "https://api.hubapi.com"}},
	} {
		if status, body := e.call(req.method, req.path, req.body); status != http.StatusOK {
			t.Errorf("%s %s: %d %v; want 200", req.method, req.path, status, body)
		}
	}
}

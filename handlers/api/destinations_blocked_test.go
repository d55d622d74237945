package api_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/leadgate/leadgate/crm/crmfake"
)

// A test connection the outbound guard refuses says "blocked", not "auth": the token is fine, the
// address is not allowed.
func TestTestConnectionToABlockedTargetSaysBlocked(t *testing.T) {
	t.Parallel()
	e := newLCEnv(t)
	fake := crmfake.NewActiveCampaign(crmfake.ACOptions{Options: crmfake.Options{Token: "ac-secret-token"}})
	defer fake.Close()
	status, body := e.call("POST", "/destinations", map[string]any{"name": "AC", "kind": "activecampaign", "base_url": fake.URL,
		"api_token": "ac-secret-token", "stage_field": "1", "rate_limit_rps": 5, "batch_size": 20})
	if status != http.StatusCreated {
		t.Fatalf("create: %d %v", status, body)
	}
	id := int64(body["id"].(float64))
	// A private address the guard does not allow (stored before the allowlist changed, say).
	if err := e.store.DB().Exec(`UPDATE destinations SET base_url = 'http://10.255.255.1:9' WHERE id = ?`, id).Error; err != nil {
		t.Fatal(err)
	}
	status, body = e.call("POST", fmt.Sprintf("/destinations/%d/test-connection", id), nil)
	if status != http.StatusBadGateway || body["class"] != "blocked" || !strings.Contains(fmt.Sprint(body["error"]), "blocked") {
		t.Fatalf("test-connection to a blocked address: %d %v, want 502 class blocked", status, body)
	}
}

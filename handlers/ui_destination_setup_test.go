package handlers_test

import (
	"net/http"
	"net/url"
	"testing"

	"github.com/leadgate/leadgate/crm/crmfake"
	"github.com/leadgate/leadgate/models"
)

// The UI's test connection lists every missing piece of the setup, and "Create missing fields" runs the
// API's loop-fields action: the fields are created in the account and the creation is audited.
func TestUIDestinationListsMissingSetupAndCreatesFields(t *testing.T) {
	t.Parallel()
	e := newUIEnv(t)
	c := e.signedIn(models.RoleEditor)
	fake := crmfake.NewActiveCampaign(crmfake.ACOptions{Options: crmfake.Options{Token: "ac-token"},
		Fields: []crmfake.ACField{{Title: "Sync timestamp", Perstag: "SYNC_TIMESTAMP"}}})
	defer fake.Close()
	res := c.post("/w/default/destinations", url.Values{"name": {"AC half"}, "kind": {"activecampaign"}, "base_url": {fake.URL},
		"api_token": {"ac-token"}, "stage_field": {"lifecycle_stage"}, "rate_limit_rps": {"5"}, "batch_size": {"20"}})
	if res.status != http.StatusSeeOther {
		t.Fatalf("create: %d %.300s", res.status, res.body)
	}
	path := res.header.Get("Location")
	expectBody(t, "detail", c.get(path), `data-testid="create-setup-fields"`)

	expectRedirect(t, "test", c.post(path+"/test", nil), path)
	expectBody(t, "test result", c.get(path), "setup is incomplete", "last_automation_source", "lifecycle_stage", "Create missing fields")

	expectRedirect(t, "create fields", c.post(path+"/setup-fields", nil), path)
	requireAudit(t, e, "destination.loop_fields.create")
	expectBody(t, "created", c.get(path), "Created last_automation_source, lifecycle_stage.")
	titles := map[string]bool{}
	for _, f := range fake.Fields() {
		titles[f.Title] = true
	}
	if !titles["last_automation_source"] || !titles["lifecycle_stage"] {
		t.Errorf("account fields %v; want the loop-breaker and stage fields created", titles)
	}
	expectRedirect(t, "test again", c.post(path+"/test", nil), path)
	expectBody(t, "test result", c.get(path), "Connection works")
}

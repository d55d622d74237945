package ui_test

import (
	"net/http"
	"net/url"
	"testing"

	"github.com/leadgate/leadgate/crm/crmfake"
	"github.com/leadgate/leadgate/handlers/handlerstest"
	"github.com/leadgate/leadgate/models"
)

// The UI's test connection lists every missing piece of the setup, and "Create missing fields" runs the
// API's loop-fields action: the fields are created in the account and the creation is audited.
func TestUIDestinationListsMissingSetupAndCreatesFields(t *testing.T) {
	t.Parallel()
	e := handlerstest.NewEnv(t)
	c := e.SignedIn(models.RoleEditor)
	fake := crmfake.NewActiveCampaign(crmfake.ACOptions{Options: crmfake.Options{Token: "ac-token"},
		Fields: []crmfake.ACField{{Title: "Sync timestamp", Perstag: "SYNC_TIMESTAMP"}}})
	defer fake.Close()
	res := c.Post("/w/default/destinations", url.Values{"name": {"AC half"}, "kind": {"activecampaign"}, "base_url": {fake.URL},
		"api_token": {"ac-token"}, "stage_field": {"lifecycle_stage"}, "rate_limit_rps": {"5"}, "batch_size": {"20"}})
	if res.Status != http.StatusSeeOther {
		t.Fatalf("create: %d %.300s", res.Status, res.Body)
	}
	path := res.Header.Get("Location")
	handlerstest.ExpectBody(t, "detail", c.Get(path), `data-testid="create-setup-fields"`)

	handlerstest.ExpectRedirect(t, "test", c.Post(path+"/test", nil), path)
	handlerstest.ExpectBody(t, "test result", c.Get(path), "setup is incomplete", "last_automation_source", "lifecycle_stage", "Create missing fields")

	handlerstest.ExpectRedirect(t, "create fields", c.Post(path+"/setup-fields", nil), path)
	handlerstest.RequireAudit(t, e, "destination.loop_fields.create")
	handlerstest.ExpectBody(t, "created", c.Get(path), "Created last_automation_source, lifecycle_stage.")
	titles := map[string]bool{}
	for _, f := range fake.Fields() {
		titles[f.Title] = true
	}
	if !titles["last_automation_source"] || !titles["lifecycle_stage"] {
		t.Errorf("account fields %v; want the loop-breaker and stage fields created", titles)
	}
	handlerstest.ExpectRedirect(t, "test again", c.Post(path+"/test", nil), path)
	handlerstest.ExpectBody(t, "test result", c.Get(path), "Connection works")
}

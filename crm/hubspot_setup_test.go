package crm_test

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/leadgate/leadgate/crm"
	"github.com/leadgate/leadgate/crm/crmfake"
)

// setupChecker is the destination's read-only check of its own setup.
type setupChecker interface {
	CheckSetup(ctx context.Context) error
}

// CheckSetup names every piece the configuration names and the HubSpot account lacks (the loop-breaker
// pair, a mapped property, a stage value that is not an option), writes nothing, and is nil once the
// pieces exist.
func TestHubSpotCheckSetupNamesEveryMissingPiece(t *testing.T) {
	t.Parallel()
	fake := crmfake.NewHubSpot(crmfake.HSOptions{Options: crmfake.Options{Token: "hs-token"}, Properties: []string{"utm_source"}})
	t.Cleanup(fake.Close)
	d, err := crm.New(crm.Config{Kind: crm.KindHubSpot, BaseURL: fake.URL, APIToken: "hs-token",
		StageMap: map[string]string{"Discovered": "lead", "SQL": "prospect"}, FieldMap: map[string]string{"budget": "budget", "utm_source": "utm_source"}})
	if err != nil {
		t.Fatal(err)
	}
	err = d.(setupChecker).CheckSetup(context.Background())
	for _, want := range []string{`"last_automation_source" (the loop-breaker field)`, `"sync_timestamp" (the sync-timestamp field)`,
		`"budget" (field_map[budget])`, `"prospect" is not an option of lifecyclestage (stage_map[SQL])`} {
		if crm.ClassOf(err) != crm.Setup || !strings.Contains(err.Error(), want) {
			t.Errorf("CheckSetup = %v, want Setup naming %s", err, want)
		}
	}
	if strings.Contains(err.Error(), "utm_source") || strings.Contains(err.Error(), `"lead"`) {
		t.Errorf("CheckSetup = %v names pieces that exist", err)
	}
	for _, r := range fake.Requests() {
		if r.Method != http.MethodGet {
			t.Errorf("CheckSetup wrote: %s %s", r.Method, r.Path)
		}
	}
	for _, p := range []string{"last_automation_source", "sync_timestamp", "budget"} {
		fake.AddProperty(p)
	}
	d2, _ := crm.New(crm.Config{Kind: crm.KindHubSpot, BaseURL: fake.URL, APIToken: "hs-token",
		StageMap: map[string]string{"Discovered": "lead"}, FieldMap: map[string]string{"budget": "budget"}})
	if err := d2.(setupChecker).CheckSetup(context.Background()); err != nil {
		t.Errorf("CheckSetup of a complete setup = %v, want nil", err)
	}
}

// In deal mode CheckSetup names a pipeline the account lacks, or a mapped dealstage its pipeline lacks.
func TestHubSpotCheckSetupChecksThePipelineInDealMode(t *testing.T) {
	t.Parallel()
	fake := crmfake.NewHubSpot(crmfake.HSOptions{Options: crmfake.Options{Token: "hs-token"}, Properties: hsProps})
	t.Cleanup(fake.Close)
	check := func(pipeline string, stages map[string]string) error {
		d, err := crm.New(crm.Config{Kind: crm.KindHubSpot, BaseURL: fake.URL, APIToken: "hs-token", StageMode: crm.StageModeDeal,
			Pipeline: pipeline, StageMap: stages})
		if err != nil {
			t.Fatal(err)
		}
		return d.(setupChecker).CheckSetup(context.Background())
	}
	if err := check("renewals", map[string]string{"SQL": "closedwon"}); crm.ClassOf(err) != crm.Setup || !strings.Contains(err.Error(), `no deal pipeline "renewals"`) {
		t.Errorf("missing pipeline: %v", err)
	}
	if err := check("default", map[string]string{"SQL": "gone"}); crm.ClassOf(err) != crm.Setup || !strings.Contains(err.Error(), `no stage "gone" (stage_map[SQL])`) {
		t.Errorf("missing stage: %v", err)
	}
	if err := check("default", map[string]string{"SQL": "closedwon"}); err != nil {
		t.Errorf("complete deal setup: %v", err)
	}
	fake.SetAuthFailure(http.StatusUnauthorized)
	if err := check("default", map[string]string{"SQL": "closedwon"}); crm.ClassOf(err) != crm.Auth {
		t.Errorf("refused credentials: %v, want Auth", err)
	}
}

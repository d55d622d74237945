package crm_test

import (
	"context"
	"slices"
	"testing"

	"github.com/leadgate/leadgate/crm"
	"github.com/leadgate/leadgate/crm/crmfake"
)

func missingSettings(t *testing.T, d crm.Destination) []string {
	t.Helper()
	list, err := d.(crm.SetupLister).MissingSetup(context.Background())
	if err != nil {
		t.Fatalf("MissingSetup: %v", err)
	}
	var out []string
	for _, m := range list {
		flag := ""
		if m.Creatable {
			flag = " (creatable)"
		}
		out = append(out, m.Kind+" "+m.Setting+flag)
	}
	return out
}

// Test connection and the pause probe see every piece a GoHighLevel location lacks, not only the
// loop-breaker pair: a destination paused for a missing stage field must not be resumed while it is still
// missing.
func TestGoHighLevelListsEveryMissingFieldAndCreatesTheOnesItCan(t *testing.T) {
	t.Parallel()
	fake, d := newGHL(t, crmfake.GHLOptions{Fields: []crmfake.GHLField{
		{ID: "cfSync", Name: "sync_timestamp", FieldKey: "contact.sync_timestamp"},
	}})
	want := []string{"field loop_field (creatable)", "field stage_field (creatable)", "field field_map[utm_source]"}
	if got := missingSettings(t, d); !slices.Equal(got, want) {
		t.Fatalf("missing %q, want %q", got, want)
	}
	created, err := d.(crm.SetupFieldCreator).CreateSetupFields(context.Background())
	if err != nil || !slices.Equal(created, []string{"last_automation_source", "contact.lifecycle_stage"}) {
		t.Fatalf("CreateSetupFields = %q, %v", created, err)
	}
	if got := missingSettings(t, d); !slices.Equal(got, []string{"field field_map[utm_source]"}) {
		t.Errorf("after creating: missing %q, want only the mapped field, which is the operator's to make", got)
	}
	keys := []string{}
	for _, f := range fake.Fields() {
		keys = append(keys, f.FieldKey)
	}
	if !slices.Contains(keys, "contact.lifecycle_stage") || !slices.Contains(keys, "contact.last_automation_source") {
		t.Errorf("location fields %q: the stage field must get the key the configuration names", keys)
	}
}

func TestGoHighLevelOpportunityModeListsAMissingPipelineOrStage(t *testing.T) {
	t.Parallel()
	pipes := []crmfake.GHLPipeline{{ID: "p1", Name: "Leads", Stages: []string{"s1", "s2"}}}
	_, d := newGHL(t, crmfake.GHLOptions{Pipelines: pipes}, func(c *crm.Config) {
		c.StageMode, c.Pipeline = crm.StageModeDeal, "p1"
		c.StageMap = map[string]string{"Discovered": "s1", "Engaged": "s2", "SQL": "s9"}
	})
	if got := missingSettings(t, d); !slices.Equal(got, []string{"stage stage_map[SQL]"}) {
		t.Errorf("missing %q, want the one stage the pipeline lacks", got)
	}
	_, d = newGHL(t, crmfake.GHLOptions{Pipelines: pipes}, func(c *crm.Config) {
		c.StageMode, c.Pipeline = crm.StageModeDeal, "p-gone"
		c.StageMap = map[string]string{"Discovered": "s1"}
	})
	if got := missingSettings(t, d); !slices.Equal(got, []string{"pipeline pipeline"}) {
		t.Errorf("missing %q, want the pipeline", got)
	}
}

func TestGoHighLevelCompleteSetupListsNothing(t *testing.T) {
	t.Parallel()
	_, d := newGHL(t, crmfake.GHLOptions{})
	if got := missingSettings(t, d); len(got) != 0 {
		t.Errorf("missing %q for a complete location", got)
	}
}

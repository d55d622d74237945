package loop_test

import (
	"testing"
	"time"

	"github.com/leadgate/leadgate/guards/loop"
	"github.com/leadgate/leadgate/models"
)

func TestIsEcho(t *testing.T) {
	now := time.Date(2026, 5, 4, 12, 0, 0, 0, time.UTC)
	recent := now.Add(-2 * time.Minute).Format(time.RFC3339)
	stale := now.Add(-30 * time.Minute).Format(time.RFC3339)
	written := map[string]string{"stage": "SQL", "first_name": "Jane"}
	cases := []struct {
		name    string
		change  loop.Change
		written map[string]string
		echo    bool
	}{
		{"flag inside the window", loop.Change{SourceKind: "gohighlevel",
			Fields: map[string]any{"last_automation_source": "leadgate", "sync_timestamp": recent}}, nil, true},
		{"flag under a CRM's own key names", loop.Change{SourceKind: "gohighlevel",
			Fields: map[string]any{"contact.last_automation_source": "LeadGate", "contact.sync_timestamp": float64(now.Add(-time.Minute).UnixMilli())}}, nil, true},
		{"flag nested in properties", loop.Change{SourceKind: "hubspot",
			Fields: map[string]any{"properties": map[string]any{"last_automation_source": map[string]any{"value": "leadgate"}, "sync_timestamp": recent}}}, nil, true},
		{"stale flag is what the record still holds: not an echo", loop.Change{SourceKind: "gohighlevel",
			Fields: map[string]any{"last_automation_source": "leadgate", "sync_timestamp": stale}, Values: map[string]string{"stage": "Closed"}}, written, false},
		{"recent flag, but a value we wrote was changed: a rep's edit in a full-record webhook", loop.Change{SourceKind: "gohighlevel",
			Fields: map[string]any{"last_automation_source": "leadgate", "sync_timestamp": recent}, Values: map[string]string{"stage": "Closed", "first_name": "Jane"}}, written, false},
		{"recent flag and extra fields we never wrote", loop.Change{SourceKind: "gohighlevel",
			Fields: map[string]any{"last_automation_source": "leadgate", "sync_timestamp": recent}, Values: map[string]string{"stage": "SQL", "crm_owner": "ann"}}, written, true},
		{"flag without a timestamp", loop.Change{SourceKind: "activecampaign",
			Fields: map[string]any{"last_automation_source": "leadgate"}}, nil, false},
		{"HubSpot names our app", loop.Change{SourceKind: "hubspot",
			Fields: map[string]any{"changeSource": "API", "sourceId": "leadgate", "propertyName": "lifecyclestage"}}, nil, true},
		{"HubSpot names our app id", loop.Change{SourceKind: "hubspot",
			Fields: map[string]any{"changeSource": "INTEGRATION", "sourceId": "1160452"}}, nil, true},
		{"a rep in HubSpot's UI", loop.Change{SourceKind: "hubspot",
			Fields: map[string]any{"changeSource": "CRM_UI", "sourceId": "userId:215482"}, Values: map[string]string{"stage": "Closed"}}, written, false},
		{"values equal what we wrote", loop.Change{SourceKind: "activecampaign",
			Fields: map[string]any{"initiated_by": "api"}, Values: map[string]string{"stage": "sql", "first_name": "Jane "}}, written, true},
		{"one value differs: a human edit", loop.Change{SourceKind: "activecampaign",
			Values: map[string]string{"stage": "SQL", "first_name": "Janet"}}, written, false},
		{"a value we never wrote", loop.Change{SourceKind: "activecampaign",
			Values: map[string]string{"stage": "SQL", "company": "Acme"}}, written, false},
		{"nothing proposed and nothing flagged", loop.Change{SourceKind: "activecampaign"}, written, false},
		{"not a CRM source", loop.Change{SourceKind: "standard-webhooks",
			Fields: map[string]any{"last_automation_source": "leadgate", "sync_timestamp": recent}}, nil, false},
	}
	settings := models.LoopSettings{OwnSourceIDs: []string{"1160452"}}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			v := loop.IsEcho(tc.change, settings, tc.written, now)
			if v.Echo != tc.echo {
				t.Fatalf("IsEcho = %+v, want echo=%v", v, tc.echo)
			}
			if v.Echo && (v.Reason == "" || v.EventReason()[:16] != "loop_suppressed:") {
				t.Fatalf("an echo needs a reason: %+v", v)
			}
		})
	}
	off := models.LoopSettings{EchoDisabled: true}
	if v := loop.IsEcho(cases[0].change, off, nil, now); v.Echo {
		t.Fatal("echo suppression disabled, still an echo")
	}
	narrow := models.LoopSettings{EchoWindowSeconds: 60}
	if v := loop.IsEcho(cases[0].change, narrow, nil, now); v.Echo {
		t.Fatal("a 2-minute-old flag is outside a 1-minute window")
	}
}

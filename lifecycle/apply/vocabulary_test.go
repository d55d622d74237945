package apply_test

import (
	"fmt"
	"testing"

	"github.com/leadgate/leadgate/lifecycle"
	"github.com/leadgate/leadgate/lifecycle/apply"
	"github.com/leadgate/leadgate/models"
)

// hubspotDefaults is where HubSpot's standard lifecyclestage values land in the
// default pipeline (Discovered, Engaged, SQL, Closed) with no aliases written.
var hubspotDefaults = map[string]string{
	"subscriber": "Discovered", "lead": "Discovered", "marketingqualifiedlead": "Engaged", "salesqualifiedlead": "SQL",
	"opportunity": "SQL", "customer": "Closed", "evangelist": "Closed", "other": "Discovered",
}

func (e *env) hubspotSource(cfg models.SourceConfig) models.Source {
	e.t.Helper()
	src := models.Source{WorkspaceID: e.ws, Name: "HubSpot", Kind: "hubspot", Channel: "crm", Config: cfg, Enabled: true}
	if err := e.store.SourceCreate(e.ctx, &src); err != nil {
		e.t.Fatal(err)
	}
	return src
}

func TestHubSpotLifecycleStagesLandOnTheMappedStageForNewAndExistingContacts(t *testing.T) {
	e := newEnv(t)
	hs := e.hubspotSource(models.SourceConfig{})
	form := e.source(e.ws, "Form", "web_form", map[string]string{"form_submitted": "Discovered"})
	for value, stage := range hubspotDefaults {
		t.Run(value, func(t *testing.T) {
			newOne := fmt.Sprintf("new-%s@example.com", value)
			id := e.insert(hs, lead{Type: "contact.propertyChange", At: at(60), Email: newOne, Target: value})
			e.apply(id)
			if ev := e.event(id); ev.Status != models.EventApplied {
				t.Fatalf("new contact: event %s (%s), want applied", ev.Status, ev.Reason)
			}
			if got := e.contactByEmail(e.ws, newOne).Stage; got != stage {
				t.Fatalf("new contact: stage %q, want %q", got, stage)
			}

			existing := fmt.Sprintf("existing-%s@example.com", value)
			e.apply(e.insert(form, lead{Type: "form_submitted", At: at(0), Email: existing}))
			id = e.insert(hs, lead{Type: "contact.propertyChange", At: at(60), Email: existing, Target: value})
			e.apply(id)
			ev := e.event(id)
			if ev.Status == models.EventQuarantined || ev.Status == models.EventDropped {
				t.Fatalf("existing contact: event %s (%s)", ev.Status, ev.Reason)
			}
			if got := e.contactByEmail(e.ws, existing).Stage; got != stage {
				t.Fatalf("existing contact: stage %q, want %q (event %s: %s)", got, stage, ev.Status, ev.Reason)
			}
		})
	}
}

func TestAStageValueNamingNoStageGetsTheSameOutcomeWithOrWithoutAContact(t *testing.T) {
	e := newEnv(t)
	hs := e.hubspotSource(models.SourceConfig{})
	form := e.source(e.ws, "Form", "web_form", map[string]string{"form_submitted": "Discovered"})
	fresh := e.insert(hs, lead{Type: "contact.propertyChange", At: at(60), Email: "fresh@example.com", Target: "partner_tier_2"})
	e.apply(fresh)
	e.apply(e.insert(form, lead{Type: "form_submitted", At: at(0), Email: "known@example.com"}))
	known := e.insert(hs, lead{Type: "contact.propertyChange", At: at(60), Email: "known@example.com", Target: "partner_tier_2"})
	e.apply(known)
	for name, id := range map[string]string{"new contact": fresh, "existing contact": known} {
		if ev := e.event(id); ev.Status != models.EventQuarantined {
			t.Errorf("%s: event %s (%s), want quarantined as unknown_stage", name, ev.Status, ev.Reason)
		}
	}
	if n := e.count(`SELECT count(*) FROM dead_letters WHERE kind = ?`, lifecycle.KindUnknownStage); n != 2 {
		t.Fatalf("%d unknown_stage dead letters, want one per event", n)
	}
	if got := e.contactByEmail(e.ws, "known@example.com").Stage; got != "Discovered" {
		t.Fatalf("the existing contact moved to %q", got)
	}
}

func TestSourceStageAliasesWinOverTheProviderDefaults(t *testing.T) {
	e := newEnv(t)
	hs := e.hubspotSource(models.SourceConfig{StageAliases: map[string]string{"lead": "Engaged"}})
	id := e.insert(hs, lead{Type: "contact.propertyChange", At: at(60), Email: "a@example.com", Target: "LEAD"})
	e.apply(id)
	if got := e.contactByEmail(e.ws, "a@example.com").Stage; got != "Engaged" {
		t.Fatalf("stage %q, want the source's alias Engaged", got)
	}
	aliases, defaults := apply.SourceStageAliases(hs, lifecycle.DefaultRules())
	if defaults || aliases["lead"] != "Engaged" || len(aliases) != 1 {
		t.Fatalf("SourceStageAliases = %v (defaults %v), want the source's own", aliases, defaults)
	}
	aliases, defaults = apply.SourceStageAliases(models.Source{Kind: "hubspot"}, lifecycle.DefaultRules())
	if !defaults || len(aliases) != len(hubspotDefaults) {
		t.Fatalf("defaults = %v (%v), want HubSpot's %d values", aliases, defaults, len(hubspotDefaults))
	}
	for v, s := range hubspotDefaults {
		if aliases[v] != s {
			t.Errorf("default alias %s = %q, want %q", v, aliases[v], s)
		}
	}
}

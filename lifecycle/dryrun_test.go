package lifecycle

import (
	"reflect"
	"testing"
)

func historical(contact, id, eventType, target string, minute int) HistoricalEvent {
	return HistoricalEvent{ContactKey: contact, EventID: id,
		Proposal: Proposal{EventType: eventType, TargetStage: target, OccurredAt: at(minute)}}
}

func dryRunEvents() []HistoricalEvent {
	return []HistoricalEvent{
		// Jane: form, reply, qualified call; a CRM echo proposing Engaged
		// after SQL (a true regression); a late reply; a repeated delivery.
		historical("jane", "j4", "crm_stage_changed", "Engaged", 30),
		historical("jane", "j3", "call_connected", "SQL_VOICE_QUALIFIED", 20),
		historical("jane", "j1", "form_submitted", "", 0),
		historical("jane", "j2", "email_replied", "Engaged", 10),
		historical("jane", "j2", "email_replied", "Engaged", 10),
		// Bob: the payment arrives before the contact is created; once it
		// exists the payment (no stage, no fields) changes nothing.
		historical("bob", "b1", "payment_succeeded", "", 0),
		historical("bob", "b2", "form_submitted", "", 5),
		// Carl: a payment whose contact never appears.
		historical("carl", "c1", "payment_succeeded", "Closed", 0),
	}
}

func TestDryRun(t *testing.T) {
	t.Parallel()
	r := testRules(func(r *Rules) { r.RequiresContact = []string{"payment_succeeded"} })
	rep := DryRun(r, dryRunEvents())

	if rep.RulesVersion != 7 {
		t.Errorf("RulesVersion = %d, want 7", rep.RulesVersion)
	}
	wantStages := map[string]string{"bob": "Discovered", "carl": "", "jane": "SQL"}
	if got := rep.FinalStages(); !reflect.DeepEqual(got, wantStages) {
		t.Errorf("FinalStages() = %v, want %v", got, wantStages)
	}
	wantTotals := DryRunTotals{Contacts: 3, Events: 7, Duplicates: 1, Applied: 4, Unchanged: 1, Quarantined: 1, Waiting: 1}
	if rep.Totals != wantTotals {
		t.Errorf("Totals = %+v, want %+v", rep.Totals, wantTotals)
	}

	byKey := map[string]ContactReplay{}
	for _, c := range rep.Contacts {
		byKey[c.Key] = c
	}
	jane := byKey["jane"]
	wantTransitions := []Transition{
		{EventID: "j1", From: "", To: "Discovered", At: at(0), Verdict: Forward},
		{EventID: "j2", From: "Discovered", To: "Engaged", At: at(10), Verdict: Forward},
		{EventID: "j3", From: "Engaged", To: "SQL", At: at(20), Verdict: Forward},
	}
	if !reflect.DeepEqual(jane.Transitions, wantTransitions) {
		t.Errorf("jane transitions = %+v, want %+v", jane.Transitions, wantTransitions)
	}
	if len(jane.Quarantined) != 1 || jane.Quarantined[0].EventID != "j4" || jane.Quarantined[0].Kind != KindStateConflict {
		t.Errorf("jane quarantined = %+v, want j4 as state_conflict", jane.Quarantined)
	}
	if !jane.Exists || !jane.StageEnteredAt.Equal(at(20)) {
		t.Errorf("jane = %+v, want existing, in SQL since minute 20", jane)
	}

	bob := byKey["bob"]
	if !bob.Exists || len(bob.Waiting) != 0 || len(bob.Quarantined) != 0 {
		t.Errorf("bob = %+v, want the waiting payment applied once the contact exists", bob)
	}
	carl := byKey["carl"]
	if carl.Exists || len(carl.Waiting) != 1 || carl.Waiting[0].Kind != KindMissingContact {
		t.Errorf("carl = %+v, want no contact and one missing_contact wait", carl)
	}
}

func TestDryRunDoesNotDependOnInputOrder(t *testing.T) {
	t.Parallel()
	r := testRules(func(r *Rules) { r.RequiresContact = []string{"payment_succeeded"} })
	events := dryRunEvents()
	want := DryRun(r, events)
	reversed := make([]HistoricalEvent, len(events))
	for i, e := range events {
		reversed[len(events)-1-i] = e
	}
	if got := DryRun(r, reversed); !reflect.DeepEqual(got, want) {
		t.Errorf("DryRun(reversed) =\n %+v\nwant\n %+v", got, want)
	}
	if events[0].EventID != "j4" {
		t.Errorf("DryRun reordered the caller's slice")
	}
}

func TestDryRunShowsRuleChangeConsequences(t *testing.T) {
	t.Parallel()
	events := dryRunEvents()[:5] // jane only
	current := DryRun(testRules(nil), events)
	proposed := DryRun(testRules(func(r *Rules) { r.AllowRegression = true }), events)
	if current.FinalStages()["jane"] != "SQL" || proposed.FinalStages()["jane"] != "Engaged" {
		t.Errorf("final stages: current %v, proposed %v; want SQL then Engaged",
			current.FinalStages(), proposed.FinalStages())
	}
	if current.Totals.Quarantined != 1 || proposed.Totals.Quarantined != 0 {
		t.Errorf("quarantined: current %d, proposed %d; want 1 then 0", current.Totals.Quarantined, proposed.Totals.Quarantined)
	}
}

func TestDryRunTagsAndUnchanged(t *testing.T) {
	t.Parallel()
	r := testRules(func(r *Rules) { r.RequiredFields = map[string][]string{"SQL": {"budget"}} })
	events := []HistoricalEvent{
		historical("ann", "a1", "call", "SQL", 0),
		historical("ann", "a2", "call", "SQL", 5), // same stage, no new fields
	}
	rep := DryRun(r, events)
	ann := rep.Contacts[0]
	if !reflect.DeepEqual(ann.Tags, []string{"needs-data"}) {
		t.Errorf("tags = %v, want [needs-data]", ann.Tags)
	}
	if rep.Totals.Applied != 1 || rep.Totals.Unchanged != 1 {
		t.Errorf("totals = %+v, want 1 applied, 1 unchanged", rep.Totals)
	}
}

func TestDryRunHoldsEveryChangeOfAHeldContact(t *testing.T) {
	t.Parallel()
	hold := &Hold{Rule: "loop_breaker", Kind: "loop_suspected", Reason: "loop suspected"}
	events := []HistoricalEvent{
		historical("ann", "a1", "form_submitted", "Discovered", 0),
		historical("ann", "a2", "call_connected", "Engaged", 10),
		historical("bo", "b1", "form_submitted", "Discovered", 0),
	}
	events[0].Hold, events[1].Hold = hold, hold
	rep := DryRun(testRules(nil), events)
	if rep.Totals.Quarantined != 2 || rep.Totals.Applied != 1 {
		t.Fatalf("totals = %+v, want ann's 2 events held and bo's applied", rep.Totals)
	}
	ann := rep.Contacts[0]
	if ann.Key != "ann" || ann.FinalStage != "" || len(ann.Transitions) != 0 {
		t.Fatalf("ann = %+v, want no stage change", ann)
	}
	for _, v := range ann.Quarantined {
		if v.Kind != "loop_suspected" || v.Decision.Judged.Rule != "loop_breaker" || v.Decision.Judged.To == "" {
			t.Errorf("held verdict = %+v, want loop_suspected with the move it stopped", v)
		}
	}
	if rep.Contacts[1].FinalStage != "Discovered" {
		t.Errorf("bo = %+v, want Discovered", rep.Contacts[1])
	}
}

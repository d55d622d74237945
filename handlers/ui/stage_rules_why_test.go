package ui

import (
	"testing"
	"time"

	"github.com/leadgate/leadgate/lifecycle"
)

func TestDecisionWhySaysTheMoveTheRuleAndTheConsequence(t *testing.T) {
	t.Parallel()
	entered := time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)
	at := entered.Add(time.Hour)
	rules := func(edit func(*lifecycle.Rules)) lifecycle.Rules {
		r := lifecycle.DefaultRules()
		r.EventStages = map[string]string{"purchase": "Closed", "call_connected": "Engaged", "refund": "Engaged", "demo_booked": "SQL"}
		if edit != nil {
			edit(&r)
		}
		return r
	}
	noSkip := func(r *lifecycle.Rules) { r.AllowSkip = false }
	in := func(stage string) lifecycle.Contact {
		return lifecycle.Contact{Exists: true, Stage: stage, StageEnteredAt: entered, Fields: map[string]string{}}
	}
	event := func(eventType string, when time.Time) lifecycle.Proposal {
		return lifecycle.Proposal{EventType: eventType, OccurredAt: when}
	}
	tests := []struct {
		name    string
		rules   lifecycle.Rules
		contact lifecycle.Contact
		prop    lifecycle.Proposal
		want    string
	}{
		{"Advance", rules(noSkip), in("Engaged"), event("demo_booked", at),
			"Demo booked would move Engaged → SQL, so it is applied"},
		{"SkipAllowed", rules(nil), in("Engaged"), event("purchase", at),
			"Purchase would jump Engaged → Closed, skipping SQL; skipping is allowed, so it is applied"},
		{"SkipRefused", rules(noSkip), in("Engaged"), event("purchase", at),
			"Purchase would jump Engaged → Closed, skipping SQL; skipping is off, so it goes to dead letters"},
		{"SkipRefusedKeepsFields", rules(func(r *lifecycle.Rules) { noSkip(r); r.OnStateConflict = lifecycle.PolicyApplyFieldsKeepStage }), in("Discovered"), event("purchase", at),
			"Purchase would jump Discovered → Closed, skipping Engaged and SQL; skipping is off, so only its fields are applied"},
		{"Regression", rules(nil), in("SQL"), event("refund", at),
			"Refund would move SQL back to Engaged; moving back is off, so it goes to dead letters"},
		{"RegressionAllowed", rules(func(r *lifecycle.Rules) { r.AllowRegression = true }), in("SQL"), event("refund", at),
			"Refund would move SQL back to Engaged; moving back is allowed, so it is applied"},
		{"LateEvent", rules(nil), in("SQL"), event("refund", entered.Add(-time.Hour)),
			"Refund would move SQL back to Engaged; it happened before the contact entered SQL (a late event), so only its fields are applied"},
		{"UnknownStage", rules(nil), in("SQL"), lifecycle.Proposal{EventType: "deal_won", TargetStage: "Won", OccurredAt: at},
			"Deal won names the stage “Won”, which is neither a stage nor an alias in these rules, so it goes to dead letters"},
		{"Unchanged", rules(nil), in("Engaged"), event("call_connected", at),
			"Call connected would keep the contact in Engaged, where it already is, so only its fields are applied"},
		{"NoStageProposed", rules(nil), in("Engaged"), event("page_view", at),
			"Page view proposes no stage, so only its fields are applied"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if got := decisionWhy(tt.rules.Decide(tt.contact, tt.prop)); got != tt.want {
				t.Errorf("decisionWhy =\n %q\nwant\n %q", got, tt.want)
			}
		})
	}
}

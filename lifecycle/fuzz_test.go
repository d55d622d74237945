package lifecycle

import (
	"encoding/json"
	"errors"
	"testing"
	"time"
)

// FuzzParseRules: ParseRules never panics, fails only with *ValidationError,
// and whatever it accepts validates and survives a JSON round trip.
func FuzzParseRules(f *testing.F) {
	f.Add([]byte(contractBody))
	f.Add([]byte(fullRules))
	f.Add([]byte(`{}`))
	f.Add([]byte(`{"aliases":{"x":"SQL","X":"sql"}}`))
	f.Add([]byte(`{"stages":["A"],"terminal":[],"allowed_backward":[{"from":"A","to":"A"}]}`))
	f.Add([]byte(`{"score":{"field_points":[{"field":"n","op":"gte","value":"1e999"}]}}`))
	f.Add([]byte(`{"side_effects":[{"on":"enter:","action":"x"}]}`))
	f.Add([]byte(`null`))
	f.Fuzz(func(t *testing.T, data []byte) {
		r, err := ParseRules(data)
		if err != nil {
			var ve *ValidationError
			if !errors.As(err, &ve) {
				t.Fatalf("ParseRules error %T %v is not a *ValidationError", err, err)
			}
			return
		}
		if err := r.Validate(); err != nil {
			t.Fatalf("parsed rules do not validate: %v", err)
		}
		out, err := json.Marshal(r)
		if err != nil {
			t.Fatalf("Marshal parsed rules: %v", err)
		}
		again, err := ParseRules(out)
		if err != nil {
			t.Fatalf("re-parse %s: %v", out, err)
		}
		out2, err := json.Marshal(again)
		if err != nil {
			t.Fatalf("Marshal re-parsed rules: %v", err)
		}
		if string(out) != string(out2) {
			t.Fatalf("round trip changed the rules:\n %s\n %s", out, out2)
		}
	})
}

// FuzzDecide: for any valid rules and any proposal, Decide never panics and
// its decisions are internally consistent.
func FuzzDecide(f *testing.F) {
	f.Add([]byte(contractBody), "SQL", int64(0), "Engaged", "form_submitted", int64(60))
	f.Add([]byte(fullRules), "Lost", int64(0), "mql", "call_connected", int64(-60))
	f.Add([]byte(`{"allow_skip":false,"allow_regression":true}`), "", int64(0), "", "x", int64(0))
	f.Fuzz(func(t *testing.T, rules []byte, stage string, enteredSec int64, target, eventType string, deltaSec int64) {
		r, err := ParseRules(rules)
		if err != nil {
			return
		}
		entered := time.Unix(enteredSec%1e10, 0)
		c := Contact{Exists: stage != "", Stage: stage, StageEnteredAt: entered}
		p := Proposal{EventType: eventType, TargetStage: target, OccurredAt: entered.Add(time.Duration(deltaSec%1e6) * time.Second)}
		d := r.Decide(c, p)
		if d.Reason == "" {
			t.Fatalf("decision without reason: %+v", d)
		}
		switch d.Outcome {
		case Applied:
			if _, ok := r.Canonical(d.NewStage); !ok || !d.ApplyFields || !d.EnteredAt.Equal(p.OccurredAt) {
				t.Fatalf("applied decision is inconsistent: %+v", d)
			}
			cur, hasCur := r.Canonical(c.Stage)
			if hasCur && d.Stage == Forward && !r.IsTerminal(d.NewStage) && r.Rank(d.NewStage) <= r.Rank(cur) {
				t.Fatalf("forward move %s -> %s does not go forward", cur, d.NewStage)
			}
			if hasCur && d.Stage == Regression && (!r.AllowRegression || r.IsTerminal(cur)) {
				t.Fatalf("regression applied without allow_regression: %+v", d)
			}
		case Quarantined:
			if d.DeadLetterKind == "" || d.ApplyFields || d.NewStage != "" {
				t.Fatalf("quarantined decision is inconsistent: %+v", d)
			}
		case Dropped, Wait:
			if d.ApplyFields || d.NewStage != "" {
				t.Fatalf("%s decision applies something: %+v", d.Outcome, d)
			}
		case Unchanged:
			if d.NewStage != "" || !d.ApplyFields {
				t.Fatalf("unchanged decision is inconsistent: %+v", d)
			}
		default:
			t.Fatalf("unknown outcome %q", d.Outcome)
		}
	})
}

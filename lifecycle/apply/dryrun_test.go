package apply_test

import (
	"fmt"
	"math/rand/v2"
	"sort"
	"testing"
	"time"

	"github.com/leadgate/leadgate/lifecycle"
	"github.com/leadgate/leadgate/lifecycle/apply"
	"github.com/leadgate/leadgate/models"
)

// TestDryRunMatchesApplying: events applied in one workspace under rules A
// are dry-run under rules B; the same events applied for real under B in a
// fresh workspace end in exactly the stages (and dead letters) the dry-run
// predicted, and A's workspace is left untouched by the dry-run.
func TestDryRunMatchesApplying(t *testing.T) {
	e := newEnv(t)
	rulesA := lifecycle.DefaultRules()
	rulesB := lifecycle.DefaultRules()
	rulesB.AllowSkip = false
	rulesB.AllowRegression = true
	rulesB.RequiredFields = map[string][]string{"SQL": {"budget"}}
	rulesB.OnMissingField = lifecycle.PolicyDeadLetter
	rulesB.AllowedBackward = []lifecycle.Move{{From: "Lost", To: "Engaged"}}

	wsA, wsB := e.ws, e.workspace("fresh")
	e.saveRules(wsA, rulesA)
	e.saveRules(wsB, rulesB)
	srcA := e.source(wsA, "Web form", "web_form", nil)
	srcB := e.source(wsB, "Web form", "web_form", nil)

	leads := dryRunLeads(40, 7)
	for _, l := range leads {
		e.apply(e.insert(srcA, l))
	}
	snapshot := e.count(`SELECT count(*) + coalesce(sum(version), 0) FROM contacts WHERE workspace_id = ?`, wsA)

	got, err := apply.DryRun(e.ctx, e.store, wsA, rulesB, time.Now().Add(-time.Hour))
	if err != nil {
		t.Fatalf("dry-run: %v", err)
	}
	if got.Events != len(leads) {
		t.Errorf("dry-run read %d events, want %d", got.Events, len(leads))
	}
	if n := e.count(`SELECT count(*) + coalesce(sum(version), 0) FROM contacts WHERE workspace_id = ?`, wsA); n != snapshot {
		t.Errorf("the dry-run wrote to workspace A (contacts+versions %d -> %d)", snapshot, n)
	}

	// Apply the same events under B in a fresh workspace, in the order they happened.
	ordered := append([]lead(nil), leads...)
	sort.SliceStable(ordered, func(i, j int) bool { return ordered[i].At.Before(ordered[j].At) })
	for _, l := range ordered {
		e.apply(e.insert(srcB, l))
	}

	emails := map[string]bool{}
	for _, l := range leads {
		emails[l.Email] = true
	}
	diffs, changed := 0, 0
	for email := range emails {
		actual := ""
		if c, err := e.store.ContactFindByEmail(e.ctx, wsB, email); err == nil {
			actual = c.Stage
		}
		predicted := got.FinalStages["email:"+email]
		if predicted != actual {
			diffs++
			t.Errorf("%s: dry-run says %q, applying under B gave %q", email, predicted, actual)
		}
		if a, err := e.store.ContactFindByEmail(e.ctx, wsA, email); err == nil && a.Stage != predicted {
			changed++
		}
	}
	if changed == 0 {
		t.Errorf("rules B change no contact's stage; the test would prove nothing")
	}
	if len(got.StageChanges) != changed {
		t.Errorf("dry-run reports %d stage changes, comparing with A's contacts gives %d", len(got.StageChanges), changed)
	}
	openB := e.count(`SELECT count(*) FROM dead_letters WHERE workspace_id = ? AND status = 'open'`, wsB)
	if int64(got.Totals.Quarantined) != openB || int64(len(got.Quarantined)) != openB {
		t.Errorf("dry-run quarantines %d events, applying under B dead-lettered %d", got.Totals.Quarantined, openB)
	}
	if openB == 0 {
		t.Errorf("rules B quarantine nothing; the test would prove nothing")
	}
	t.Logf("%d contacts, %d events: %d stage changes, %d quarantined under B, %d mismatches", len(emails), len(leads), changed, openB, diffs)
	var stats models.Stats
	if stats, err = e.store.StatsGet(e.ctx, wsB); err != nil || stats.Events.Unresolved != 0 {
		t.Errorf("workspace B unresolved = %d (%v), want 0", stats.Events.Unresolved, err)
	}
}

// dryRunLeads generates a deterministic mix of forward moves, skips,
// regressions, late arrivals, terminal moves and missing fields.
func dryRunLeads(contacts int, seed uint64) []lead {
	rng := rand.New(rand.NewPCG(seed, seed))
	stages := []string{"Discovered", "Engaged", "SQL", "Closed", "Lost"}
	var out []lead
	for i := range contacts {
		email := fmt.Sprintf("dry%02d@example.com", i)
		n := 2 + rng.IntN(4)
		for k := range n {
			l := lead{Type: "stage_update", Email: email, Target: stages[rng.IntN(len(stages))],
				At: at(i*100 + k*10 + rng.IntN(15))} // some events overtake the one before
			if rng.IntN(3) == 0 {
				l.Fields = map[string]any{"budget": "10k"}
			}
			if rng.IntN(6) == 0 {
				l.Target = "" // fields only
			}
			out = append(out, l)
		}
	}
	return out
}

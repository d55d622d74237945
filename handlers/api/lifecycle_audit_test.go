package api_test

import (
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/leadgate/leadgate/models"
)

// TestLifecycleAuditTrail: every operator action (correction, stage change,
// replay in each mode, discard, merge) and every rule change, made through
// the API, lands in the audit history with actor, time, before and after.
func TestLifecycleAuditTrail(t *testing.T) {
	t.Parallel()
	e := newLCEnv(t)
	t0 := time.Date(2026, 10, 31, 8, 0, 0, 0, time.UTC)
	e.applied("form_submitted", "ana@example.com", "", t0, map[string]any{"industry": "Retail"})
	c, err := e.store.ContactFindByEmail(e.ctx, e.ws, "ana@example.com")
	if err != nil {
		t.Fatal(err)
	}

	t.Run("RuleChange", func(t *testing.T) {
		status, body := e.call(http.MethodPut, "/stages", map[string]any{"stages": []string{"Discovered", "Engaged", "SQL", "Closed"},
			"allow_regression": false, "on_state_conflict": "dead_letter", "requires_existing_contact": []string{"payment_succeeded"}})
		if status != http.StatusOK || body["version"] != float64(1) {
			t.Fatalf("PUT /stages = %d %v, want 200 version 1", status, body)
		}
		e.wantAudit("stage_rules.update", map[string]any{"version": 0, "requires_existing_contact": "[]"},
			map[string]any{"version": 1, "requires_existing_contact": "[payment_succeeded]"})
		if status, _ := e.call(http.MethodPut, "/stages", map[string]any{"stages": []string{"A", "B"}, "on_state_conflict": "explode"}); status != http.StatusBadRequest {
			t.Errorf("invalid rules answered %d, want 400", status)
		}
		if _, n := e.lastAudit("stage_rules.update"); n != 1 {
			t.Errorf("stage_rules.update rows = %d after a rejected change, want 1", n)
		}
	})

	t.Run("Correction", func(t *testing.T) {
		status, body := e.call(http.MethodPost, "/contacts/"+c.ID+"/corrections", map[string]string{"field": "industry", "value": "Fintech"})
		if status != http.StatusOK {
			t.Fatalf("correction = %d %v", status, body)
		}
		e.wantAudit("contact.correct_field", map[string]any{"industry": "Retail"}, map[string]any{"industry": "Fintech"})
	})

	t.Run("StageChange", func(t *testing.T) {
		status, body := e.call(http.MethodPost, "/contacts/"+c.ID+"/stage", map[string]string{"stage": "Closed", "reason": "signed on the phone"})
		if status != http.StatusOK {
			t.Fatalf("stage change = %d %v", status, body)
		}
		a := e.wantAudit("contact.set_stage", map[string]any{"stage": "Discovered"}, map[string]any{"stage": "Closed", "reason": "signed on the phone"})
		if a.SubjectID != c.ID {
			t.Errorf("set_stage subject = %s, want %s", a.SubjectID, c.ID)
		}
	})

	// Three true regressions (newer events proposing Engaged while Closed)
	// become dead letters to replay, one per mode, and one more to discard.
	dls := map[string]int64{}
	for i, name := range []string{"as_is", "keep", "force", "discard"} {
		id := e.applied("email_replied", "ana@example.com", "", time.Now().UTC().Add(time.Duration(i)*time.Second), map[string]any{"note": name})
		d, err := e.store.DeadLetterList(e.ctx, models.DeadLetterFilter{WorkspaceID: e.ws}, models.Page{Limit: 50})
		if err != nil || len(d) == 0 || d[0].EventID == nil || *d[0].EventID != id {
			t.Fatalf("regression %s: dead letters %+v (%v), want one for event %s", name, d, err, id)
		}
		dls[name] = d[0].ID
	}

	replays := []struct {
		name, mode, stage string
		eventStatus       string
		contactStage      string
	}{
		{"as_is", "apply_as_is", "", models.EventQuarantined, "Closed"}, // still a regression: a new dead letter
		{"keep", "apply_fields_keep_stage", "", models.EventApplied, "Closed"},
		{"force", "force_stage", "Engaged", models.EventApplied, "Engaged"},
	}
	for _, r := range replays {
		t.Run("Replay_"+r.mode, func(t *testing.T) {
			status, body := e.call(http.MethodPost, fmt.Sprintf("/dead-letters/%d/replay", dls[r.name]), map[string]string{"mode": r.mode, "stage": r.stage})
			if status != http.StatusOK {
				t.Fatalf("replay %s = %d %v", r.mode, status, body)
			}
			ev, _ := body["event"].(map[string]any)
			if ev["status"] != r.eventStatus {
				t.Errorf("replayed event status = %v, want %s", ev["status"], r.eventStatus)
			}
			e.wantAudit("dead_letter.replay", map[string]any{"status": "open", "kind": "state_conflict"},
				map[string]any{"status": "replayed", "mode": r.mode, "event_status": r.eventStatus, "stage": r.stage})
			got, _ := e.store.ContactGet(e.ctx, e.ws, c.ID)
			if got.Stage != r.contactStage {
				t.Errorf("stage after replay %s = %s, want %s", r.mode, got.Stage, r.contactStage)
			}
			if status, _ := e.call(http.MethodPost, fmt.Sprintf("/dead-letters/%d/replay", dls[r.name]), map[string]string{"mode": r.mode}); status != http.StatusNotFound {
				t.Errorf("second replay answered %d, want 404 (no longer open)", status)
			}
		})
	}

	t.Run("Discard", func(t *testing.T) {
		status, body := e.call(http.MethodPost, fmt.Sprintf("/dead-letters/%d/discard", dls["discard"]), map[string]string{"note": "noise"})
		if status != http.StatusOK {
			t.Fatalf("discard = %d %v", status, body)
		}
		e.wantAudit("dead_letter.discard", map[string]any{"status": "open", "kind": "state_conflict"}, map[string]any{"status": "discarded", "note": "noise"})
	})

	t.Run("Merge", func(t *testing.T) {
		e.applied("call_completed", "", "+14155550134", time.Now().UTC(), nil)
		other, err := e.store.ContactFindByPhone(e.ctx, e.ws, "+14155550134")
		if err != nil {
			t.Fatal(err)
		}
		status, body := e.call(http.MethodPost, "/contacts/"+c.ID+"/merge", map[string]string{"merge_id": other.ID})
		if status != http.StatusOK {
			t.Fatalf("merge = %d %v", status, body)
		}
		e.wantAudit("contact.merge_manual", map[string]any{"loser": other.ID}, map[string]any{"survivor": c.ID})
		got, _ := e.store.ContactGet(e.ctx, e.ws, other.ID)
		if got.MergedInto == nil || *got.MergedInto != c.ID {
			t.Errorf("merged contact merged_into = %v, want %s", got.MergedInto, c.ID)
		}
	})
}

package actions_test

import (
	"context"
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/leadgate/leadgate/actions"
	"github.com/leadgate/leadgate/internal/testkit"
	"github.com/leadgate/leadgate/lifecycle"
	"github.com/leadgate/leadgate/lifecycle/apply"
	"github.com/leadgate/leadgate/models/modelstest"
)

func TestSaveStageRules(t *testing.T) {
	ctx := context.Background()
	st := modelstest.Store(t)
	a := actions.StageRules{Store: st}

	bad := lifecycle.DefaultRules()
	bad.Aliases = map[string]string{"mql": "Nowhere"}
	_, err := a.Save(ctx, 1, "tester", bad)
	var field *actions.FieldError
	if !errors.As(err, &field) || field.Field != "aliases.mql" {
		t.Fatalf("invalid rules: %v, want a field error on aliases.mql", err)
	}

	rules := lifecycle.DefaultRules()
	rules.Stages = append(rules.Stages, "Won")
	for want := 1; want <= 2; want++ {
		saved, err := a.Save(ctx, 1, "tester", rules)
		if err != nil {
			t.Fatal(err)
		}
		if saved.Version != want {
			t.Fatalf("saved version %d, want %d", saved.Version, want)
		}
	}
	inForce, err := apply.LoadRules(ctx, st, 1)
	if err != nil {
		t.Fatal(err)
	}
	if inForce.Version != 2 || len(inForce.Stages) != len(rules.Stages) {
		t.Errorf("rules in force: v%d %v", inForce.Version, inForce.Stages)
	}
	if n := audits(t, st, "stage_rules.update", "2"); n != 1 {
		t.Errorf("stage_rules.update audit entries for v2: %d, want 1", n)
	}
}

// TestSaveStageRulesLosesTheRace: a save that picks the version another transaction is committing gets a
// conflict on "version", not a server error.
func TestSaveStageRulesLosesTheRace(t *testing.T) {
	ctx := context.Background()
	st := modelstest.Store(t)
	body, err := json.Marshal(lifecycle.DefaultRules())
	if err != nil {
		t.Fatal(err)
	}
	other := st.DB().Begin()
	t.Cleanup(func() { other.Rollback() })
	if err := other.Exec(`INSERT INTO stage_rules (workspace_id, version, rules, created_by, created_at) VALUES (1, 1, ?, 'other', now())`, string(body)).Error; err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		_, err := actions.StageRules{Store: st}.Save(ctx, 1, "tester", lifecycle.DefaultRules())
		done <- err
	}()
	// The save waits on the other transaction's version 1 until that commits.
	testkit.Eventually(t, 10*time.Second, "the save waits on the other transaction", func() bool {
		var n int64
		st.DB().Raw(`SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'`).Scan(&n)
		return n > 0
	})
	if err := other.Commit().Error; err != nil {
		t.Fatal(err)
	}
	err = <-done
	var conflict *actions.ConflictError
	if !errors.As(err, &conflict) || conflict.Field != "version" {
		t.Fatalf("losing save: %v, want a conflict on version", err)
	}
}

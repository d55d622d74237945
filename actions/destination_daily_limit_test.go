package actions_test

import (
	"context"
	"errors"
	"testing"

	"github.com/leadgate/leadgate/actions"
	"github.com/leadgate/leadgate/crm/syncer"
	"github.com/leadgate/leadgate/models/modelstest"
)

// An account's own daily quota is a setting an operator gives; backfill is paced to it.
func TestADestinationTakesItsAccountsDailyQuota(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st := modelstest.Store(t)
	act := &actions.Destinations{Store: st, Connector: &syncer.Connector{Store: st}}
	name, kind := "Sandbox", "sandbox"
	quota := func(n int) *int { return &n }
	id, err := act.CreateDestination(ctx, 1, "ops@example.com", actions.DestinationInput{Name: &name, Kind: &kind, DailyLimit: quota(1_000_000)})
	if err != nil {
		t.Fatalf("create: %v", err)
	}
	d, err := st.DestinationByID(ctx, id)
	if err != nil || d.Config.DailyLimit != 1_000_000 {
		t.Fatalf("stored daily_limit %d (%v), want 1000000", d.Config.DailyLimit, err)
	}
	for _, bad := range []int{-2, 100_000_001} {
		_, err := act.UpdateDestination(ctx, d, "ops@example.com", actions.DestinationInput{DailyLimit: quota(bad)})
		var field *actions.FieldError
		if !errors.As(err, &field) || field.Field != "daily_limit" {
			t.Errorf("daily_limit %d: err %v, want a field error on daily_limit", bad, err)
		}
	}
	off, err := act.UpdateDestination(ctx, d, "ops@example.com", actions.DestinationInput{DailyLimit: quota(-1)})
	if err != nil || off.Config.DailyLimit != -1 {
		t.Errorf("daily_limit -1 (no pacing): %+v, %v", off.Config, err)
	}
}

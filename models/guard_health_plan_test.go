package models

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/leadgate/leadgate/internal/testkit"
)

// The health alarms read the ages of a workspace's unfinished outbox rows once a minute. However many
// rows the outbox has delivered, that read visits the unfinished ones only; before, it visited every
// row of the workspace.
func TestHealthReadsOnlyUnfinishedOutboxRows(t *testing.T) {
	ctx := context.Background()
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	st, err := Open(ctx, testkit.MigratedDatabase(t), log)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	if err := st.Migrate(ctx, log); err != nil {
		t.Fatal(err)
	}
	db := st.DB()
	const delivered = 50000
	if err := db.Exec(`INSERT INTO outbox (workspace_id, kind, stable_id, payload, status, created_at)
		SELECT 1, 'crm_upsert', 'delivered-' || g, '{"email":"someone@example.com","stage":"Engaged"}', 'sent', now() - interval '1 day'
		FROM generate_series(1, ?) g`, delivered).Error; err != nil {
		t.Fatal(err)
	}
	if err := db.Exec(`INSERT INTO outbox (workspace_id, kind, stable_id, payload, status, created_at) VALUES
		(1, 'crm_upsert', 'waiting-1', '{}', 'pending', now() - interval '90 seconds'),
		(1, 'side_effect', 'waiting-2', '{}', 'retrying', now() - interval '5 minutes')`).Error; err != nil {
		t.Fatal(err)
	}
	var plan []byte
	if err := db.Raw(`EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) `+healthOutboxSQL, 1).Row().Scan(&plan); err != nil {
		t.Fatal(err)
	}
	var out []struct {
		Plan struct {
			Hit  int64 `json:"Shared Hit Blocks"`
			Read int64 `json:"Shared Read Blocks"`
		} `json:"Plan"`
	}
	if err := json.Unmarshal(plan, &out); err != nil || len(out) != 1 {
		t.Fatalf("plan %s: %v", plan, err)
	}
	if pages := out[0].Plan.Hit + out[0].Plan.Read; pages > 20 {
		t.Errorf("the health read visited %d pages for 2 unfinished rows among %d, want a few\n%s", pages, delivered, plan)
	}
	m, err := st.HealthMeasure(ctx, 1, time.Now(), 1)
	if err != nil {
		t.Fatal(err)
	}
	if m.SyncLag == nil || *m.SyncLag < 80 || *m.SyncLag > 200 {
		t.Errorf("sync lag %v, want about 90 s (the pending crm_upsert)", m.SyncLag)
	}
	if m.OutboxOldest == nil || *m.OutboxOldest < 290 || *m.OutboxOldest > 400 {
		t.Errorf("oldest outbox row %v, want about 300 s (the retrying side effect)", m.OutboxOldest)
	}
}

package models

import (
	"context"
	"testing"
	"time"
)

// The health alarms read the ages of a workspace's unfinished outbox rows once a minute. However many
// rows the outbox has delivered, that read visits the unfinished ones only; before, it visited every
// row of the workspace.
func TestHealthReadsOnlyUnfinishedOutboxRows(t *testing.T) {
	ctx := context.Background()
	st := migratedStore(t)
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
	if pages := readPlan(t, plan).Pages; pages > 20 {
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

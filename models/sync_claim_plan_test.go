package models

import (
	"context"
	"errors"
	"testing"
	"time"
)

// A sync claim reads the items it takes, however long the queue has grown since its statistics were
// taken (never analyzed, as on a new install whose sandbox falls behind its first burst). Before, at
// 300,000 items the planner took every pending item of the destination through another index and
// sorted them all for each claim of twenty (6,839 pages read).
func TestSyncClaimReadsOnlyTheItemsItTakes(t *testing.T) {
	ctx := context.Background()
	st := migratedStore(t)
	db := st.DB()
	var dest int64
	if err := db.Raw(`INSERT INTO destinations (workspace_id, name, kind) VALUES (1, 'plan', 'sandbox') RETURNING id`).Scan(&dest).Error; err != nil {
		t.Fatal(err)
	}
	const queued = 300000
	if err := db.Exec(`INSERT INTO sync_queue (destination_id, contact_id, workspace_id, version, next_attempt_at)
		SELECT ?, gen_random_uuid(), 1, 1, now() - make_interval(secs => g) FROM generate_series(1, ?) g`, dest, queued).Error; err != nil {
		t.Fatal(err)
	}
	// EXPLAIN ANALYZE runs the claim; rolled back, it leaves the queue as it was.
	errRollBack := errors.New("roll back")
	err := st.Tx(ctx, func(tx *Store) error {
		if err := tx.planInClaimOrder(ctx); err != nil {
			return err
		}
		var plan []byte
		if err := tx.db.WithContext(ctx).Raw(`EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) `+syncClaimSQL,
			60.0, dest, true, AnyLane, AnyLane, 20).Row().Scan(&plan); err != nil {
			return err
		}
		p := readPlan(t, plan)
		if p.Rows != 20 {
			t.Errorf("claimed %d items, want 20", p.Rows)
		}
		if p.Pages > 300 {
			t.Errorf("a claim of 20 read %d pages of a %d-item queue, want about the items it takes\n%s", p.Pages, queued, plan)
		}
		return errRollBack
	})
	if !errors.Is(err, errRollBack) {
		t.Fatal(err)
	}
	items, err := st.SyncClaim(ctx, dest, 20, time.Minute, true, AnyLane)
	if err != nil {
		t.Fatal(err)
	}
	if len(items) != 20 {
		t.Fatalf("SyncClaim took %d items, want 20", len(items))
	}
	var earliest []string
	if err := db.Raw(`SELECT contact_id::text FROM sync_queue WHERE destination_id = ? ORDER BY next_attempt_at LIMIT 20`, dest).Scan(&earliest).Error; err != nil {
		t.Fatal(err)
	}
	want := map[string]bool{}
	for _, c := range earliest {
		want[c] = true
	}
	for _, it := range items {
		if !want[it.ContactID] {
			t.Fatalf("SyncClaim took %s, which is not among the 20 items due first", it.ContactID)
		}
	}
}

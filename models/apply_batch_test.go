package models

import (
	"context"
	"testing"
	"time"
)

// TestBatchLookupsReadOnlyTheirKeys: on an inbox that grew without fresh statistics (never analyzed, as
// on a new install taking its first burst, or a backlog growing faster than autovacuum), looking up the
// pending events and the contact of one email or phone reads a handful of index and heap pages, not the
// backlog. Before, the planner, believing the tables tiny, led these lookups with any index on
// workspace_id and filtered the whole workspace's backlog for every key of every batch.
func TestBatchLookupsReadOnlyTheirKeys(t *testing.T) {
	ctx := context.Background()
	st := migratedStore(t)
	db := st.DB()
	var src int64
	if err := db.Raw(`INSERT INTO sources (workspace_id, name, kind, token) VALUES (1, 'form', 'token', 'src_plan') RETURNING id`).Scan(&src).Error; err != nil {
		t.Fatal(err)
	}
	// Statistics are taken now, on empty tables; then the backlog arrives.
	if err := db.Exec(`ANALYZE events; ANALYZE contacts`).Error; err != nil {
		t.Fatal(err)
	}
	const backlog = 20000
	if err := db.Exec(`INSERT INTO events (id, workspace_id, source_id, idempotency_key, occurred_at, status, email, phone)
		SELECT gen_random_uuid(), 1, ?, 'k:' || g, now(), 'pending', 'p' || g || '@example.com', '+1415' || lpad(g::text, 7, '0')
		FROM generate_series(1, ?) g`, src, backlog).Error; err != nil {
		t.Fatal(err)
	}
	if err := db.Exec(`INSERT INTO contacts (id, workspace_id, email, phone, first_seen_at, last_activity_at)
		SELECT gen_random_uuid(), 1, 'p' || g || '@example.com', '+1415' || lpad(g::text, 7, '0'), now(), now()
		FROM generate_series(1, ?) g`, backlog).Error; err != nil {
		t.Fatal(err)
	}
	var keys IdentityKeys
	keys.AddEmail(1, "p777@example.com")
	keys.AddPhone(1, "+14150000777")
	for _, q := range []struct {
		name string
		sql  string
		args []any
	}{
		{"pending events of the keys", pendingForKeysSQL, []any{keys.EmailWorkspaces, keys.Emails, keys.PhoneWorkspaces, keys.Phones,
			time.Now(), []string{}, 50}},
		{"contacts owning the keys", contactsByKeysSQL(true), []any{keys.EmailWorkspaces, keys.Emails, keys.PhoneWorkspaces, keys.Phones}},
	} {
		err := st.Tx(ctx, func(tx *Store) error {
			if err := tx.PlanForBatch(ctx); err != nil {
				return err
			}
			var plan []byte
			if err := tx.pool().QueryRowContext(ctx, `EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) `+q.sql, q.args...).Scan(&plan); err != nil {
				return err
			}
			p := readPlan(t, plan)
			if p.Rows != 2 {
				t.Errorf("%s: %d rows, want 2 (the one row found by its email and by its phone; the caller keeps one)", q.name, p.Rows)
			}
			if p.Pages > 40 {
				t.Errorf("%s: read %d pages for 2 keys among %d rows, want a few: the lookup scans the backlog\n%s", q.name, p.Pages, backlog, plan)
			}
			return nil
		})
		if err != nil {
			t.Fatalf("%s: %v", q.name, err)
		}
	}
}

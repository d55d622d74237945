package models

import (
	"context"
	"encoding/json"
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

// The rejection rate is the share rejected among the last hour's events, the latest RejectionWindow at
// most: a busy hour costs the once-a-minute read no more than a quiet one, and what was rejected before
// the window no longer counts.
func TestRejectionRateReadsTheLatestEventsOfTheHourOnly(t *testing.T) {
	ctx := context.Background()
	st := migratedStore(t)
	db := st.DB()
	var source int64
	if err := db.Raw(`INSERT INTO sources (workspace_id, name, kind, channel, token) VALUES (1, 'form', 'token', 'web_form', 'tok') RETURNING id`).Scan(&source).Error; err != nil {
		t.Fatal(err)
	}
	events := func(n int, status string, ageFrom, ageTo time.Duration) {
		t.Helper()
		if err := db.Exec(`INSERT INTO events (id, workspace_id, source_id, idempotency_key, occurred_at, received_at, status)
			SELECT gen_random_uuid(), 1, ?, gen_random_uuid()::text, now(), now() - make_interval(secs => ?::float8 + ?::float8 * g), ?
			FROM generate_series(1, ?) g`, source, ageFrom.Seconds(), (ageTo-ageFrom).Seconds()/float64(n), status, n).Error; err != nil {
			t.Fatal(err)
		}
	}
	// 40,000 events in the hour: the older 30,000 half rejected, the latest 10,000 one in ten rejected.
	events(15000, EventRejected, 30*time.Minute, 50*time.Minute)
	events(15000, EventApplied, 30*time.Minute, 50*time.Minute)
	events(1000, EventRejected, time.Minute, 20*time.Minute)
	events(9000, EventApplied, time.Minute, 20*time.Minute)
	events(5000, EventRejected, 2*time.Hour, 3*time.Hour) // before the hour

	m, err := st.HealthMeasure(ctx, 1, time.Now(), 20)
	if err != nil {
		t.Fatal(err)
	}
	if m.RejectionRate == nil || *m.RejectionRate < 9.99 || *m.RejectionRate > 10.01 {
		t.Errorf("rejection rate %v, want 10%% (the latest 10,000 events)", m.RejectionRate)
	}
	var plan []byte
	if err := db.Raw(`EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) `+healthRejectionsSQL, 1, time.Now().Add(-time.Hour), RejectionWindow).Row().Scan(&plan); err != nil {
		t.Fatal(err)
	}
	if rows := readPlan(t, plan).Rows; rows != 1 {
		t.Fatalf("the read returned %d rows, want 1", rows)
	}
	var leafRows int
	var walk func(n map[string]any)
	walk = func(n map[string]any) {
		if n["Node Type"] == "Limit" {
			leafRows = int(n["Actual Rows"].(float64))
		}
		for _, c := range asPlans(n["Plans"]) {
			walk(c)
		}
	}
	var doc []struct {
		Plan map[string]any `json:"Plan"`
	}
	if err := json.Unmarshal(plan, &doc); err != nil {
		t.Fatal(err)
	}
	walk(doc[0].Plan)
	if leafRows != RejectionWindow {
		t.Errorf("the read counted %d events, want the latest %d\n%s", leafRows, RejectionWindow, plan)
	}

	// A quiet hour is counted whole.
	quiet := migratedStore(t)
	st = quiet
	db = quiet.DB()
	if err := db.Raw(`INSERT INTO sources (workspace_id, name, kind, channel, token) VALUES (1, 'form', 'token', 'web_form', 'tok') RETURNING id`).Scan(&source).Error; err != nil {
		t.Fatal(err)
	}
	events(30, EventApplied, time.Minute, 50*time.Minute)
	events(10, EventRejected, 40*time.Minute, 55*time.Minute)
	if m, err = st.HealthMeasure(ctx, 1, time.Now(), 20); err != nil {
		t.Fatal(err)
	}
	if m.RejectionRate == nil || *m.RejectionRate != 25 {
		t.Errorf("rejection rate of a quiet hour %v, want 25%% (10 of 40)", m.RejectionRate)
	}
}

func asPlans(v any) []map[string]any {
	list, _ := v.([]any)
	out := make([]map[string]any, 0, len(list))
	for _, x := range list {
		if m, ok := x.(map[string]any); ok {
			out = append(out, m)
		}
	}
	return out
}

package jobs

import (
	"context"
	"io"
	"log/slog"
	"sort"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/leadgate/leadgate/models"
	"github.com/leadgate/leadgate/models/modelstest"
)

// seedBacklog inserts n expired idempotency records and n old resolved events
// with payloads, through SQL so that seeding a large backlog is fast.
func seedBacklog(t *testing.T, st *models.Store, n int) int64 {
	t.Helper()
	db := st.DB()
	var srcID int64
	if err := db.Raw(`INSERT INTO sources (workspace_id, name, kind, token) VALUES (1, 'old', 'token', 'src_old') RETURNING id`).Scan(&srcID).Error; err != nil {
		t.Fatal(err)
	}
	err := db.Exec(`INSERT INTO events (id, workspace_id, source_id, idempotency_key, occurred_at, received_at, status, payload)
		SELECT gen_random_uuid(), 1, ?, 'old:' || g, now() - interval '200 days', now() - interval '200 days', 'applied', '{"email":"old@example.com"}'
		FROM generate_series(1, ?) g`, srcID, n).Error
	if err != nil {
		t.Fatal(err)
	}
	err = db.Exec(`INSERT INTO idempotency_keys (workspace_id, key, event_id, source_id, created_at)
		SELECT 1, 'old:' || g, gen_random_uuid(), ?, now() - interval '60 days' FROM generate_series(1, ?) g`, srcID, n).Error
	if err != nil {
		t.Fatal(err)
	}
	return srcID
}

// ingestLoad stores unique single-event deliveries from several goroutines
// for d and returns the latencies of the store step.
func ingestLoad(ctx context.Context, t *testing.T, st *models.Store, srcID int64, d time.Duration) []time.Duration {
	var mu sync.Mutex
	var lat []time.Duration
	var failures atomic.Int64
	deadline := time.Now().Add(d)
	var wg sync.WaitGroup
	for w := 0; w < 8; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for time.Now().Before(deadline) {
				id := uuid.NewString()
				item := models.IngestItem{Key: "load:" + id, Event: models.Event{ID: id, WorkspaceID: 1, SourceID: srcID,
					OccurredAt: time.Now(), Status: models.EventRejected, Fields: []byte(`{}`), Attribution: []byte(`{}`)}}
				start := time.Now()
				if _, err := st.IngestStore(ctx, []models.IngestItem{item}, time.Hour); err != nil {
					failures.Add(1)
					continue
				}
				mu.Lock()
				lat = append(lat, time.Since(start))
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	if failures.Load() > 0 {
		t.Errorf("%d ingest stores failed under load", failures.Load())
	}
	return lat
}

func percentile(lat []time.Duration, p float64) time.Duration {
	if len(lat) == 0 {
		return 0
	}
	sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
	return lat[int(float64(len(lat)-1)*p)]
}

// TestRetentionPurgesBacklogWhileIngestRuns: a large expired backlog is
// deleted in small batches while ingest keeps storing; nothing recent, unresolved
// or dead-lettered is touched. The p99 figures are logged for docs, not asserted.
func TestRetentionPurgesBacklogWhileIngestRuns(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st := modelstest.Store(t)
	const backlog = 100_000
	srcID := seedBacklog(t, st, backlog)

	before := ingestLoad(ctx, t, st, srcID, 2*time.Second)

	r := &Retention{Store: st, Log: slog.New(slog.NewTextHandler(io.Discard, nil)), Idempotency: 30 * 24 * time.Hour, Payloads: 90 * 24 * time.Hour}
	type result struct {
		keys, payloads int64
		err            error
		took           time.Duration
	}
	done := make(chan result, 1)
	go func() {
		start := time.Now()
		k, p, err := r.Run(ctx)
		done <- result{k, p, err, time.Since(start)}
	}()
	during := ingestLoad(ctx, t, st, srcID, 2*time.Second)
	res := <-done
	if res.err != nil {
		t.Fatal(res.err)
	}
	if res.keys != backlog || res.payloads != backlog {
		t.Fatalf("purged %d keys and %d payloads, want %d each", res.keys, res.payloads, backlog)
	}
	var left int64
	st.DB().Raw(`SELECT count(*) FROM idempotency_keys WHERE key LIKE 'load:%'`).Scan(&left)
	if left != int64(len(before)+len(during)) {
		t.Fatalf("recent idempotency keys: %d, want %d (retention must not touch them)", left, len(before)+len(during))
	}
	t.Logf("retention purged %d keys + %d payloads in %s; ingest store p50/p99 before: %s/%s (%d ops), during: %s/%s (%d ops)",
		res.keys, res.payloads, res.took.Round(time.Millisecond),
		percentile(before, .5), percentile(before, .99), len(before), percentile(during, .5), percentile(during, .99), len(during))
}

// TestRetentionKeepsOpenDeadLettersAndUnresolvedEvents spells out what is never purged.
func TestRetentionKeepsOpenDeadLettersAndUnresolvedEvents(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st := modelstest.Store(t)
	srcID := seedBacklog(t, st, 10)
	db := st.DB()
	var pendingID, dlEventID string
	db.Raw(`SELECT id FROM events ORDER BY id LIMIT 1`).Scan(&pendingID)
	db.Raw(`SELECT id FROM events ORDER BY id DESC LIMIT 1`).Scan(&dlEventID)
	db.Exec(`UPDATE events SET status = 'pending' WHERE id = ?`, pendingID)
	if _, err := st.DeadLetterAdd(ctx, models.DeadLetter{WorkspaceID: 1, Kind: "state_conflict", Reason: "test", EventID: &dlEventID, SourceID: &srcID}); err != nil {
		t.Fatal(err)
	}
	r := &Retention{Store: st, Log: slog.New(slog.NewTextHandler(io.Discard, nil)), Payloads: 24 * time.Hour, Batch: 3}
	_, payloads, err := r.Run(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if payloads != 8 {
		t.Fatalf("purged %d payloads, want 8 (10 minus one unresolved and one open dead letter)", payloads)
	}
	for _, id := range []string{pendingID, dlEventID} {
		var has bool
		db.Raw(`SELECT payload IS NOT NULL FROM events WHERE id = ?`, id).Scan(&has)
		if !has {
			t.Errorf("event %s lost its payload", id)
		}
	}
	var keys int64
	db.Raw(`SELECT count(*) FROM idempotency_keys`).Scan(&keys)
	if keys != 0 {
		t.Fatalf("idempotency keys: %d left, want 0 (60 days old is past the 30-day default)", keys)
	}
}

// TestRetentionNeverGoesBelowTheSenderRetryHorizon: a too-short setting is raised to the floor.
func TestRetentionNeverGoesBelowTheSenderRetryHorizon(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st := modelstest.Store(t)
	srcID := seedBacklog(t, st, 0)
	st.DB().Exec(`INSERT INTO idempotency_keys (workspace_id, key, event_id, source_id, created_at) VALUES (1, 'recent', gen_random_uuid(), ?, now() - interval '3 days')`, srcID)
	r := &Retention{Store: st, Log: slog.New(slog.NewTextHandler(io.Discard, nil)), Idempotency: time.Hour}
	keys, _, err := r.Run(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if keys != 0 {
		t.Fatalf("purged %d keys of 3 days old with a 1h setting; the floor is %s", keys, MinIdempotencyRetention)
	}
}

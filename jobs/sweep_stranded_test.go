package jobs

import (
	"context"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/hibiken/asynq"
	"github.com/redis/go-redis/v9"

	"github.com/leadgate/leadgate/internal/testkit"
)

// TestSweepOfALargeBacklogWakesTheDrainersOnceAndReturns: with more stranded events than one page
// (1,500), a sweep returns promptly, leaving one batch trigger for all of them and a task of its own
// for each event that waits for hydration. (The sweep used to re-read its first page for as long as
// the backlog lasted: it never returned while more than a page was stranded.)
func TestSweepOfALargeBacklogWakesTheDrainersOnceAndReturns(t *testing.T) {
	st := retentionStore(t)
	db := st.DB()
	var srcID int64
	if err := db.Raw(`INSERT INTO sources (workspace_id, name, kind, token) VALUES (1, 'form', 'token', 'src_sweep') RETURNING id`).Scan(&srcID).Error; err != nil {
		t.Fatal(err)
	}
	err := db.Exec(`INSERT INTO events (id, workspace_id, source_id, idempotency_key, occurred_at, received_at, status, email)
		SELECT gen_random_uuid(), 1, ?, 'k:' || g, now(), now() - interval '1 minute', 'pending', 'p' || g || '@example.com'
		FROM generate_series(1, 1500) g`, srcID).Error
	if err != nil {
		t.Fatal(err)
	}
	err = db.Exec(`INSERT INTO events (id, workspace_id, source_id, idempotency_key, occurred_at, received_at, status, hydration)
		SELECT gen_random_uuid(), 1, ?, 'h:' || g, now(), now() - interval '1 minute', 'pending', '{"provider":"meta","id":"1"}'
		FROM generate_series(1, 3) g`, srcID).Error
	if err != nil {
		t.Fatal(err)
	}
	opt, err := redis.ParseURL(testkit.RedisDB(t))
	if err != nil {
		t.Fatal(err)
	}
	rdb := redis.NewClient(opt)
	t.Cleanup(func() { rdb.Close() })
	client := asynq.NewClientFromRedisClient(rdb)
	sweep := &SweepStranded{Store: st, Queue: Queue{Client: client}, Log: slog.New(slog.NewTextHandler(io.Discard, nil)), Grace: 20 * time.Second}

	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	for range 2 {
		n, err := sweep.Sweep(ctx)
		if err != nil {
			t.Fatalf("sweep: %v", err)
		}
		if n != 1000+3 {
			t.Errorf("sweep found %d, want 1003 (the claimable ones counted up to 1000, plus the 3 waiting for hydration)", n)
		}
	}
	tasks, err := asynq.NewInspectorFromRedisClient(rdb).ListPendingTasks(QueueApply, asynq.PageSize(100))
	if err != nil {
		t.Fatal(err)
	}
	triggers, own := 0, 0
	for _, ti := range tasks {
		switch ti.Type {
		case TypeApplyBatch:
			triggers++
		case TypeApplyEvent:
			own++
		}
	}
	if triggers != 1 || own != 3 {
		t.Errorf("tasks after two sweeps: %d triggers and %d event tasks, want 1 and 3", triggers, own)
	}
}

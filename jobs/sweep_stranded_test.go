package jobs

import (
	"context"
	"io"
	"log/slog"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hibiken/asynq"
	"github.com/jackc/pgx/v5"
	"github.com/redis/go-redis/v9"

	"github.com/leadgate/leadgate/internal/testkit"
	"github.com/leadgate/leadgate/lifecycle/apply"
	"github.com/leadgate/leadgate/models"
	"github.com/leadgate/leadgate/models/modelstest"
)

// TestSweepOfALargeBacklogWakesTheDrainersOnceAndReturns: with more stranded events than one page
// (1,500), a sweep returns promptly, leaving one batch trigger for all of them and a task of its own
// for each event that waits for hydration. (The sweep used to re-read its first page for as long as
// the backlog lasted: it never returned while more than a page was stranded.)
func TestSweepOfALargeBacklogWakesTheDrainersOnceAndReturns(t *testing.T) {
	t.Parallel()
	st := modelstest.Store(t)
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

// claimTracer counts the inbox claims that have returned.
type claimTracer struct{ claims atomic.Int32 }

func (c *claimTracer) TraceQueryStart(ctx context.Context, _ *pgx.Conn, d pgx.TraceQueryStartData) context.Context {
	if strings.Contains(d.SQL, "FOR UPDATE SKIP LOCKED") && strings.Contains(d.SQL, "FROM events") {
		return context.WithValue(ctx, claimTracer{}, true)
	}
	return ctx
}

func (c *claimTracer) TraceQueryEnd(ctx context.Context, _ *pgx.Conn, _ pgx.TraceQueryEndData) {
	if ctx.Value(claimTracer{}) != nil {
		c.claims.Add(1)
	}
}

// Events stored while their batch trigger was lost (Redis down at the announcement, a trigger lost with
// Redis data) wait for nobody while the worker's drainer idles; the stranded sweep leaves one trigger,
// a worker's asynq server hands it to the drainer, and every event is applied.
func TestTheSweepGetsEventsAppliedWhoseBatchTriggerWasLost(t *testing.T) {
	t.Parallel()
	dsn := testkit.MigratedDatabase(t)
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	tracer := &claimTracer{}
	st, err := models.Open(ctx, dsn, log, models.WithQueryTracer(tracer))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	if err := st.Migrate(ctx, log); err != nil {
		t.Fatal(err)
	}
	opt, err := redis.ParseURL(testkit.RedisDB(t))
	if err != nil {
		t.Fatal(err)
	}
	rdb := redis.NewClient(opt)
	t.Cleanup(func() { rdb.Close() })
	queue := Queue{Client: asynq.NewClientFromRedisClient(rdb)}

	// The worker: its drainer looks for unannounced work only once an hour, so only a trigger wakes it.
	drainer := &apply.Drainer{Applier: &apply.Applier{Store: st, Queue: queue, Log: log}, Poll: time.Hour}
	dctx, stopDrainer := context.WithCancel(ctx)
	drained := make(chan struct{})
	go func() { drainer.Run(dctx); close(drained) }()
	t.Cleanup(func() { stopDrainer(); <-drained })
	testkit.Eventually(t, 30*time.Second, "the idle drainer's first claim returns", func() bool { return tracer.claims.Load() >= 1 })

	db := st.DB()
	var srcID int64
	if err := db.Raw(`INSERT INTO sources (workspace_id, name, kind, token) VALUES (1, 'form', 'token', 'src_lost') RETURNING id`).Scan(&srcID).Error; err != nil {
		t.Fatal(err)
	}
	const n = 250
	err = db.Exec(`INSERT INTO events (id, workspace_id, source_id, idempotency_key, occurred_at, received_at, status, email)
		SELECT gen_random_uuid(), 1, ?, 'lost:' || g, now(), now() - interval '1 minute', 'pending', 'lost' || g || '@example.com'
		FROM generate_series(1, ?) g`, srcID, n).Error
	if err != nil {
		t.Fatal(err)
	}
	pending := func() int64 {
		var left int64
		if err := db.Raw(`SELECT count(*) FROM events WHERE source_id = ? AND status = 'pending'`, srcID).Scan(&left).Error; err != nil {
			t.Fatal(err)
		}
		return left
	}
	if claims := tracer.claims.Load(); claims != 1 || pending() != n {
		t.Fatalf("before the sweep: %d claims, %d of %d pending; want the idle drainer to have claimed nothing since", claims, pending(), n)
	}

	sweep := &SweepStranded{Store: st, Queue: queue, Log: log, Grace: 20 * time.Second}
	if found, err := sweep.Sweep(ctx); err != nil || found != n {
		t.Fatalf("sweep = %d, %v; want the %d stranded events", found, err, n)
	}
	srv := asynq.NewServerFromRedisClient(rdb, asynq.Config{Concurrency: 2, Queues: Queues, LogLevel: asynq.FatalLevel})
	mux := asynq.NewServeMux()
	mux.Handle(TypeApplyBatch, &ApplyBatch{Drainer: drainer})
	if err := srv.Start(mux); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Shutdown)
	testkit.Eventually(t, 45*time.Second, "every stranded event is applied", func() bool { return pending() == 0 })
	var applied int64
	if err := db.Raw(`SELECT count(*) FROM events WHERE source_id = ? AND status = 'applied'`, srcID).Scan(&applied).Error; err != nil {
		t.Fatal(err)
	}
	var contacts int64
	if err := db.Raw(`SELECT count(*) FROM contacts WHERE email LIKE 'lost%@example.com'`).Scan(&contacts).Error; err != nil {
		t.Fatal(err)
	}
	if applied != n || contacts != n {
		t.Fatalf("%d events applied and %d contacts, want %d of each", applied, contacts, n)
	}
}

package jobs_test

import (
	"context"
	"io"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/hibiken/asynq"
	"github.com/redis/go-redis/v9"

	"github.com/leadgate/leadgate/internal/testkit"
	"github.com/leadgate/leadgate/jobs"
	"github.com/leadgate/leadgate/models"
)

// TestTwoSchedulerReplicasProduceEachJobOnce: two schedulers share a database
// and Redis; only the one holding the Postgres advisory lock enqueues, so a
// job due every second is produced about once a second, not twice.
func TestTwoSchedulerReplicasProduceEachJobOnce(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	dbURL := testkit.MigratedDatabase(t)
	redisURL := testkit.RedisDB(t)
	ropt, err := asynq.ParseRedisURI(redisURL)
	if err != nil {
		t.Fatal(err)
	}
	const queue = "scheduler_test"
	task := func() *asynq.Task { return asynq.NewTask("test:tick", nil, asynq.Queue(queue)) }
	var wg sync.WaitGroup
	runCtx, stop := context.WithTimeout(ctx, 6500*time.Millisecond)
	defer stop()
	for range 2 {
		st, err := models.Open(ctx, dbURL, log) // each replica has its own pool, as separate processes would
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { st.Close() })
		sqlDB, err := st.SQL()
		if err != nil {
			t.Fatal(err)
		}
		s := &jobs.Scheduler{DB: sqlDB, Redis: ropt, Log: log, Poll: 200 * time.Millisecond, Check: 100 * time.Millisecond, Takeover: 300 * time.Millisecond,
			Periodic: []jobs.Periodic{{Spec: "@every 1s", Task: task}}}
		wg.Add(1)
		go func() { defer wg.Done(); _ = s.Run(runCtx) }()
	}
	wg.Wait()

	opt, _ := redis.ParseURL(redisURL)
	rdb := redis.NewClient(opt)
	defer rdb.Close()
	info, err := asynq.NewInspectorFromRedisClient(rdb).GetQueueInfo(queue)
	if err != nil {
		t.Fatal(err)
	}
	// About 6 ticks in 6.5 s from one leader; two leaders would make about 12.
	if info.Size < 4 || info.Size > 8 {
		t.Fatalf("%d ticks enqueued in 6.5 s by two replicas; want one leader's worth (about 6)", info.Size)
	}
}

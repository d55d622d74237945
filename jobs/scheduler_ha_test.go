//go:build proof

package jobs_test

import (
	"context"
	"io"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/hibiken/asynq"

	"github.com/leadgate/leadgate/internal/redisconn"
	"github.com/leadgate/leadgate/internal/testkit"
	"github.com/leadgate/leadgate/jobs"
	"github.com/leadgate/leadgate/models"
)

// activity records when each scheduler logged "scheduler: active" and "scheduler: inactive".
type activity struct {
	mu    sync.Mutex
	spans map[int][][2]time.Time // per scheduler: [start, end]; end zero while active
}

func (a *activity) handler(id int) slog.Handler { return &activityHandler{a: a, id: id} }

type activityHandler struct {
	a  *activity
	id int
}

func (h *activityHandler) Enabled(context.Context, slog.Level) bool { return true }
func (h *activityHandler) WithAttrs([]slog.Attr) slog.Handler       { return h }
func (h *activityHandler) WithGroup(string) slog.Handler            { return h }
func (h *activityHandler) Handle(_ context.Context, r slog.Record) error {
	h.a.mu.Lock()
	defer h.a.mu.Unlock()
	sp := h.a.spans[h.id]
	switch r.Message {
	case "scheduler: active":
		h.a.spans[h.id] = append(sp, [2]time.Time{time.Now()})
	case "scheduler: inactive":
		sp[len(sp)-1][1] = time.Now()
	}
	return nil
}

// overlaps returns every pair of spans of different schedulers that intersect (an open span runs to now).
func (a *activity) overlaps() [][2][2]time.Time {
	a.mu.Lock()
	defer a.mu.Unlock()
	end := func(s [2]time.Time) time.Time {
		if s[1].IsZero() {
			return time.Now()
		}
		return s[1]
	}
	var out [][2][2]time.Time
	for i, si := range a.spans {
		for j, sj := range a.spans {
			if i >= j {
				continue
			}
			for _, x := range si {
				for _, y := range sj {
					if x[0].Before(end(y)) && y[0].Before(end(x)) {
						out = append(out, [2][2]time.Time{x, y})
					}
				}
			}
		}
	}
	return out
}

// ended reports whether scheduler id was active and is no longer.
func (a *activity) ended(id int) bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	sp := a.spans[id]
	return len(sp) > 0 && !sp[len(sp)-1][1].IsZero()
}

// activeNow is the schedulers with an open span.
func (a *activity) activeNow() (ids []int) {
	a.mu.Lock()
	defer a.mu.Unlock()
	for id, sp := range a.spans {
		if len(sp) > 0 && sp[len(sp)-1][1].IsZero() {
			ids = append(ids, id)
		}
	}
	return ids
}

// After the Postgres primary is promoted away, the lock it held is gone with it: a scheduler takes it
// again on the promoted standby (reached through the multi-host URL), and at no moment are two
// schedulers active.
func TestTheSchedulerLockIsReTakenOnThePromotedPrimaryWithNeverTwoActive(t *testing.T) {
	pair := testkit.PostgresPair(t)
	ropt, err := asynq.ParseRedisURI(testkit.RedisDB(t))
	if err != nil {
		t.Fatal(err)
	}
	act := &activity{spans: map[int][][2]time.Time{}}
	ctx, stop := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	defer wg.Wait()
	defer stop()
	task := func() *asynq.Task { return asynq.NewTask("test:tick", nil, asynq.Queue("scheduler_ha_test")) }
	for id := range 2 {
		st, err := models.Open(ctx, pair.URL("postgres"), slog.New(slog.NewTextHandler(io.Discard, nil)))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { st.Close() })
		sqlDB, err := st.SQL()
		if err != nil {
			t.Fatal(err)
		}
		s := &jobs.Scheduler{DB: sqlDB, Redis: ropt, Log: slog.New(act.handler(id)), Poll: 200 * time.Millisecond,
			Check: 200 * time.Millisecond, Periodic: []jobs.Periodic{{Spec: "@every 1s", Task: task}}}
		wg.Go(func() { _ = s.Run(ctx) })
	}
	testkit.Eventually(t, 30*time.Second, "one scheduler active", func() bool { return len(act.activeNow()) == 1 })
	first := act.activeNow()[0]
	promote, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	if err := pair.Promote(promote); err != nil {
		t.Fatal(err)
	}
	testkit.Eventually(t, 30*time.Second, "a scheduler active again after the promotion", func() bool {
		return act.ended(first) && len(act.activeNow()) == 1
	})
	time.Sleep(2 * time.Second) // let a second, wrong, leader show itself if there were one
	if o := act.overlaps(); len(o) > 0 {
		t.Fatalf("two schedulers were active at once: %v", o)
	}
	if n := len(act.activeNow()); n != 1 {
		t.Fatalf("%d schedulers active after the promotion, want 1", n)
	}
}

// Through Sentinel (across a failover) and on a Cluster, the scheduler's periodic tasks reach the queue.
func TestTheSchedulerEnqueuesThroughRedisSentinelAcrossAFailoverAndOnACluster(t *testing.T) {
	set := testkit.RedisSentinel(t)
	cluster := testkit.RedisCluster(t)
	for _, c := range []struct {
		name, url string
		failover  bool
	}{{"sentinel", set.URL(0), true}, {"cluster", cluster.URL(), false}} {
		t.Run(c.name, func(t *testing.T) {
			target, err := redisconn.Parse(c.url)
			if err != nil {
				t.Fatal(err)
			}
			st, err := models.Open(context.Background(), testkit.MigratedDatabase(t), slog.New(slog.NewTextHandler(io.Discard, nil)))
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { st.Close() })
			sqlDB, err := st.SQL()
			if err != nil {
				t.Fatal(err)
			}
			const queue = "scheduler_ha_test"
			ctx, stop := context.WithCancel(context.Background())
			var wg sync.WaitGroup
			defer wg.Wait()
			defer stop()
			s := &jobs.Scheduler{DB: sqlDB, Redis: target.Asynq(), Log: slog.New(slog.NewTextHandler(io.Discard, nil)),
				Poll: 200 * time.Millisecond, Check: 200 * time.Millisecond,
				Periodic: []jobs.Periodic{{Spec: "@every 1s", Task: func() *asynq.Task { return asynq.NewTask("test:tick", nil, asynq.Queue(queue)) }}}}
			wg.Go(func() { _ = s.Run(ctx) })
			rdb := target.Client(4)
			defer rdb.Close()
			ins := asynq.NewInspectorFromRedisClient(rdb)
			size := func() int {
				info, err := ins.GetQueueInfo(queue)
				if err != nil {
					return 0
				}
				return info.Size
			}
			testkit.Eventually(t, 30*time.Second, "ticks enqueued", func() bool { return size() >= 2 })
			if !c.failover {
				return
			}
			fctx, cancel := context.WithTimeout(ctx, time.Minute)
			defer cancel()
			if _, _, err := set.Failover(fctx); err != nil {
				t.Fatal(err)
			}
			before := size()
			testkit.Eventually(t, 30*time.Second, "ticks enqueued on the promoted master", func() bool { return size() >= before+2 })
		})
	}
}

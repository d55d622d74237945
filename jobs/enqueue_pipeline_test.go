package jobs

import (
	"context"
	"fmt"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hibiken/asynq"
	"github.com/redis/go-redis/v9"

	"github.com/leadgate/leadgate/internal/testkit"
)

// holdFirstScript delays the next script call sent on its own after it is armed, so that the calls
// behind it queue up; holding is closed when that delay starts.
type holdFirstScript struct {
	armed   atomic.Bool
	hold    time.Duration
	holding chan struct{}
}

func holdNextScript(hold time.Duration) *holdFirstScript {
	h := &holdFirstScript{hold: hold, holding: make(chan struct{})}
	h.armed.Store(true)
	return h
}

func (h *holdFirstScript) DialHook(next redis.DialHook) redis.DialHook { return next }
func (h *holdFirstScript) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		if cmd.Name() == "evalsha" && h.armed.CompareAndSwap(true, false) {
			close(h.holding)
			time.Sleep(h.hold)
		}
		return next(ctx, cmd)
	}
}
func (h *holdFirstScript) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return next
}

func pendingApplyTasks(t *testing.T, rdb redis.UniversalClient) map[string]bool {
	t.Helper()
	ins := asynq.NewInspectorFromRedisClient(rdb)
	tasks, err := ins.ListPendingTasks(QueueApply, asynq.PageSize(1000))
	if err != nil {
		t.Fatalf("list pending apply tasks: %v", err)
	}
	ids := map[string]bool{}
	for _, task := range tasks {
		ids[task.ID] = true
	}
	return ids
}

// Enqueues made while a script call is out wait for it and then go to Redis together in one pipeline;
// every task is enqueued exactly once, and a repeated enqueue of one event still collapses into its task.
func TestConcurrentEnqueuesShareARoundTrip(t *testing.T) {
	t.Parallel()
	opts, err := redis.ParseURL(testkit.RedisDB(t))
	if err != nil {
		t.Fatal(err)
	}
	rdb := redis.NewClient(opts)
	t.Cleanup(func() { _ = rdb.Close() })
	hold := &holdFirstScript{hold: time.Second, holding: make(chan struct{})}
	rdb.AddHook(hold)
	pipe := &EnqueuePipeline{UniversalClient: rdb, InFlight: 1}
	defer pipe.Stop()
	q := Queue{Client: asynq.NewClientFromRedisClient(pipe)}
	if err := q.EnqueueApply(context.Background(), "warm-up"); err != nil { // publishes the queue, loads the script
		t.Fatal(err)
	}
	hold.armed.Store(true)
	warm := pipe.RoundTrips()

	// The first enqueue goes out alone and is held; the others are made while it is out.
	const n = 100
	var wg sync.WaitGroup
	errs := make([]error, n)
	enqueue := func(i int) { errs[i] = q.EnqueueApply(context.Background(), fmt.Sprintf("event-%03d", i)) }
	wg.Go(func() { enqueue(0) })
	<-hold.holding
	for i := 1; i < n; i++ {
		wg.Go(func() { enqueue(i) })
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("enqueue %d: %v", i, err)
		}
	}
	if trips := pipe.RoundTrips() - warm; trips < 1 || trips > 2 {
		t.Errorf("%d enqueues took %d round trips, want at most 2 (the held one, then the rest together)", n, trips)
	}
	if err := q.EnqueueApply(context.Background(), "event-042"); err != nil {
		t.Fatalf("a repeated enqueue of one event: %v", err)
	}
	got := pendingApplyTasks(t, rdb)
	if len(got) != n+1 {
		t.Fatalf("%d apply tasks pending, want %d", len(got), n)
	}
	for i := range n {
		if id := fmt.Sprintf("apply:event-%03d", i); !got[id] {
			t.Fatalf("task %s missing", id)
		}
	}
}

// On a Redis that has never seen asynq's scripts, pipelined calls are answered NOSCRIPT and each caller
// falls back to EVAL: nothing is lost. After Stop, calls go straight to Redis.
func TestPipelinedEnqueuesLoadTheirScriptOnAFreshRedis(t *testing.T) {
	t.Parallel()
	srv := testkit.RedisServer(t)
	rdb := redis.NewClient(&redis.Options{Addr: srv.Addr()})
	t.Cleanup(func() { _ = rdb.Close() })
	rdb.AddHook(holdNextScript(200 * time.Millisecond))
	pipe := &EnqueuePipeline{UniversalClient: rdb, InFlight: 1}
	q := Queue{Client: asynq.NewClientFromRedisClient(pipe)}
	// A call held out keeps the enqueues below queued, so that they go out in one pipeline before
	// Redis has seen their script.
	held := make(chan error, 1)
	go func() {
		held <- pipe.EvalSha(context.Background(), "ffffffffffffffffffffffffffffffffffffffff", []string{"k"}).Err()
	}()
	time.Sleep(50 * time.Millisecond)

	const n = 30
	var wg sync.WaitGroup
	errs := make([]error, n)
	for i := range n {
		wg.Go(func() { errs[i] = q.EnqueueApply(context.Background(), fmt.Sprintf("fresh-%02d", i)) })
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("enqueue %d on a fresh Redis: %v", i, err)
		}
	}
	if err := <-held; err == nil || !strings.HasPrefix(err.Error(), "NOSCRIPT") {
		t.Fatalf("the held call of an unknown script answered %v, want NOSCRIPT", err)
	}
	if trips := pipe.RoundTrips(); trips > 3 {
		t.Errorf("%d enqueues took %d pipelined round trips, want at most 3", n, trips)
	}
	pipe.Stop()
	before := pipe.RoundTrips()
	if err := q.EnqueueApply(context.Background(), "after-stop"); err != nil {
		t.Fatalf("enqueue after Stop: %v", err)
	}
	if pipe.RoundTrips() != before+1 {
		t.Errorf("an enqueue after Stop made %d round trips, want 1", pipe.RoundTrips()-before)
	}
	if got := pendingApplyTasks(t, rdb); len(got) != n+1 {
		t.Fatalf("%d apply tasks pending, want %d", len(got), n+1)
	}
}

// A caller whose context ends while its call waits gets its context's error at once.
func TestAnEnqueueWaitingBehindAStuckRedisHonoursItsContext(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0") // accepts, never answers
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			t.Cleanup(func() { _ = c.Close() })
		}
	}()
	rdb := redis.NewClient(&redis.Options{Addr: ln.Addr().String(), ReadTimeout: 5 * time.Second, MaxRetries: -1})
	t.Cleanup(func() { _ = rdb.Close() })
	pipe := &EnqueuePipeline{UniversalClient: rdb, InFlight: 1}
	go func() { _ = pipe.EvalSha(context.Background(), "0000", []string{"k"}) }() // holds the only sender loop
	time.Sleep(50 * time.Millisecond)
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	began := time.Now()
	err = pipe.EvalSha(ctx, "0000", []string{"k"}).Err()
	if err != context.DeadlineExceeded {
		t.Fatalf("waiting call returned %v, want its context's deadline", err)
	}
	if took := time.Since(began); took > 2*time.Second {
		t.Fatalf("waiting call returned after %s, not when its context ended (100 ms)", took)
	}
}

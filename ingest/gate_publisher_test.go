package ingest

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/leadgate/leadgate/internal/testkit"
)

func gateRedis(t *testing.T) *redis.Client {
	t.Helper()
	opts, err := redis.ParseURL(testkit.RedisDB(t))
	if err != nil {
		t.Fatal(err)
	}
	rdb := redis.NewClient(opts)
	t.Cleanup(func() { _ = rdb.Close() })
	return rdb
}

func gateEntriesN(n int, ttl time.Duration) []gateEntry {
	out := make([]gateEntry, n)
	for i := range out {
		out[i] = gateEntry{key: fmt.Sprintf("lg:idem:1:k%d", i), value: fmt.Sprintf("event-%d|k%d", i, i), ttl: ttl}
	}
	return out
}

// Keys handed over are on the gate, with their values and expiry, once the publisher is closed: Close
// writes whatever is still queued.
func TestGatePublisherWritesEveryKeyHandedOverBeforeItCloses(t *testing.T) {
	rdb := gateRedis(t)
	p := &GatePublisher{Redis: rdb, MaxBatch: 7}
	entries := gateEntriesN(100, time.Hour)
	for _, e := range entries {
		if dropped := p.Publish(e); dropped != 0 {
			t.Fatalf("Publish dropped %d keys with an empty queue", dropped)
		}
	}
	p.Close()
	for _, e := range entries {
		got, err := rdb.Get(context.Background(), e.key).Result()
		if err != nil || got != e.value {
			t.Fatalf("gate %s = %q, %v; want %q", e.key, got, err, e.value)
		}
		if ttl := rdb.TTL(context.Background(), e.key).Val(); ttl <= 59*time.Minute || ttl > time.Hour {
			t.Fatalf("gate %s expires in %s, want about 1h", e.key, ttl)
		}
	}
	if p.Dropped() != 0 {
		t.Fatalf("Dropped = %d, want 0", p.Dropped())
	}
	if dropped := p.Publish(gateEntriesN(3, time.Hour)...); dropped != 3 || p.Dropped() != 3 {
		t.Fatalf("Publish after Close dropped %d (total %d), want 3", dropped, p.Dropped())
	}
}

// A sender never waits on the gate: when Redis does not answer and the queue is full, keys are dropped
// and counted, and Publish returns at once.
func TestGatePublisherDropsKeysRatherThanHoldSenders(t *testing.T) {
	opts, err := redis.ParseURL(testkit.RedisDB(t))
	if err != nil {
		t.Fatal(err)
	}
	proxy := testkit.NewProxy(t, opts.Addr)
	opts.Addr, opts.MaxRetries = proxy.Addr(), -1
	opts.DialTimeout, opts.ReadTimeout, opts.WriteTimeout = 200*time.Millisecond, 200*time.Millisecond, 200*time.Millisecond
	rdb := redis.NewClient(opts)
	t.Cleanup(func() { _ = rdb.Close() })
	proxy.Cut()
	p := &GatePublisher{Redis: rdb, Queue: 4, MaxBatch: 2, Timeout: 300 * time.Millisecond}
	began := time.Now()
	dropped := 0
	for _, e := range gateEntriesN(50, time.Hour) {
		dropped += p.Publish(e)
	}
	if took := time.Since(began); took > 2*time.Second {
		// Not a timing target: hand-overs that waited for the queue would take ~7 s here (24 failed
		// writes of 300 ms each); non-blocking ones take microseconds.
		t.Fatalf("50 Publish calls took %s with Redis unreachable", took)
	}
	if dropped < 50-4-2 {
		t.Fatalf("%d of 50 keys dropped with a queue of 4, want at least 44", dropped)
	}
	p.Close()
	if got := p.Dropped(); got != 50 {
		t.Fatalf("Dropped = %d after Redis refused every write, want all 50", got)
	}
}

// pipelineCounter counts the pipelines of SET commands a Redis client sends (a new connection's
// handshake is a pipeline too).
type pipelineCounter struct{ n atomic.Int64 }

func (c *pipelineCounter) DialHook(next redis.DialHook) redis.DialHook          { return next }
func (c *pipelineCounter) ProcessHook(next redis.ProcessHook) redis.ProcessHook { return next }
func (c *pipelineCounter) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		if len(cmds) > 0 && cmds[0].Name() == "set" {
			c.n.Add(1)
		}
		return next(ctx, cmds)
	}
}

// Keys handed over a little apart, as deliveries arrive at a moderate rate, share a pipeline instead of
// costing a round trip each.
func TestGatePublisherGathersKeysThatArriveWithinItsLinger(t *testing.T) {
	rdb := gateRedis(t)
	var pipelines pipelineCounter
	rdb.AddHook(&pipelines)
	p := &GatePublisher{Redis: rdb, Linger: time.Second}
	entries := gateEntriesN(20, time.Hour)
	for _, e := range entries {
		p.Publish(e)
		time.Sleep(time.Millisecond)
	}
	p.Close()
	for _, e := range entries {
		if got, err := rdb.Get(context.Background(), e.key).Result(); err != nil || got != e.value {
			t.Fatalf("gate %s = %q, %v; want %q", e.key, got, err, e.value)
		}
	}
	if n := pipelines.n.Load(); n > 2 {
		t.Fatalf("20 keys a millisecond apart went out in %d pipelines, want at most 2", n)
	}
}

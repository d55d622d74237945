package ratelimit_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/leadgate/leadgate/crm/crmfake"
	"github.com/leadgate/leadgate/crm/ratelimit"
	"github.com/leadgate/leadgate/internal/testkit"
)

// newRedis connects to the local Redis; each test uses its own random key prefix and deletes its keys.
func newRedis(t testing.TB) (*redis.Client, string) {
	t.Helper()
	rdb := redis.NewClient(&redis.Options{Addr: "127.0.0.1:6379"})
	ctx := context.Background()
	if err := rdb.Ping(ctx).Err(); err != nil {
		t.Fatalf("redis on 127.0.0.1:6379: %v", err)
	}
	var b [6]byte
	_, _ = rand.Read(b[:])
	prefix := "test:ratelimit:" + hex.EncodeToString(b[:]) + ":"
	t.Cleanup(func() {
		keys, _ := rdb.Keys(ctx, prefix+"*").Result()
		if len(keys) > 0 {
			rdb.Del(ctx, keys...)
		}
		rdb.Close()
	})
	return rdb, prefix
}

// TestNeverMoreThanLimitInAnyWindowAcrossReplicas runs two limiter instances (as two replicas would, each
// with its own Redis connection) with three goroutines each, hammering one destination for 2.5 s.
func TestNeverMoreThanLimitInAnyWindowAcrossReplicas(t *testing.T) {
	const limit = 5
	rdb, prefix := newRedis(t)
	other := redis.NewClient(&redis.Options{Addr: "127.0.0.1:6379"})
	t.Cleanup(func() { other.Close() })

	var limiters []*ratelimit.Limiter
	for _, c := range []*redis.Client{rdb, other} {
		l, err := ratelimit.New(c, ratelimit.Config{Prefix: prefix, Limit: limit, Window: time.Second})
		if err != nil {
			t.Fatal(err)
		}
		limiters = append(limiters, l)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2500*time.Millisecond)
	defer cancel()
	var mu sync.Mutex
	var admitted []time.Time
	var wg sync.WaitGroup
	for _, l := range limiters {
		for range 3 {
			wg.Go(func() {
				for l.Wait(ctx, "dest-ac") == nil {
					now := time.Now()
					mu.Lock()
					admitted = append(admitted, now)
					mu.Unlock()
				}
			})
		}
	}
	wg.Wait()
	if got := crmfake.MaxInWindow(admitted, time.Second); got > limit {
		t.Errorf("max requests in a 1 s window = %d, want ≤ %d", got, limit)
		slices.SortFunc(admitted, func(a, b time.Time) int { return a.Compare(b) })
		for _, x := range admitted {
			t.Log(x.Sub(admitted[0]))
		}
	}
	// 2.5 s at 5 per (1 s + margin): the first 5 at once, then 5 more after each window.
	if len(admitted) < 2*limit || len(admitted) > 3*limit {
		t.Errorf("admitted %d requests in 2.5 s, want between %d and %d", len(admitted), 2*limit, 3*limit)
	}
}

func TestPauseIsHonouredByEveryInstance(t *testing.T) {
	rdb, prefix := newRedis(t)
	a, _ := ratelimit.New(rdb, ratelimit.Config{Prefix: prefix, Limit: 100})
	b, _ := ratelimit.New(redis.NewClient(&redis.Options{Addr: "127.0.0.1:6379"}), ratelimit.Config{Prefix: prefix, Limit: 100})
	ctx := context.Background()
	start := time.Now()
	if err := a.Pause(ctx, "dest", start.Add(600*time.Millisecond)); err != nil {
		t.Fatal(err)
	}
	// A shorter pause never shortens a longer one.
	if err := b.Pause(ctx, "dest", start.Add(100*time.Millisecond)); err != nil {
		t.Fatal(err)
	}
	until, err := b.PausedUntil(ctx, "dest")
	if err != nil || until.Before(start.Add(400*time.Millisecond)) {
		t.Errorf("PausedUntil = %v, %v; want about 600 ms from start", until, err)
	}
	if wait, err := b.Allow(ctx, "dest"); err != nil || wait < 300*time.Millisecond {
		t.Errorf("Allow while paused = %v, %v; want a wait of several hundred ms", wait, err)
	}
	if err := b.Wait(ctx, "dest"); err != nil {
		t.Fatal(err)
	}
	if elapsed := time.Since(start); elapsed < 550*time.Millisecond {
		t.Errorf("Wait returned after %v, before the 600 ms pause ended", elapsed)
	}
	if wait, _ := a.Allow(ctx, "other-dest"); wait != 0 {
		t.Errorf("a pause leaked to another destination: wait %v", wait)
	}
}

func TestWindowIsConfigurableAndWaitHonoursContext(t *testing.T) {
	rdb, prefix := newRedis(t)
	l, err := ratelimit.New(rdb, ratelimit.Config{Prefix: prefix, Limit: 2, Window: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for i := range 2 {
		if wait, err := l.Allow(ctx, "hubspot"); err != nil || wait != 0 {
			t.Fatalf("request %d: wait %v err %v, want admitted", i, wait, err)
		}
	}
	wait, err := l.Allow(ctx, "hubspot")
	if err != nil || wait < 9*time.Second {
		t.Errorf("third request in a 10 s window: wait %v err %v, want ~10 s", wait, err)
	}
	short, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
	defer cancel()
	if err := l.Wait(short, "hubspot"); err == nil {
		t.Error("Wait returned nil after its context expired")
	}
}

func TestNewRejectsBadConfig(t *testing.T) {
	rdb, _ := newRedis(t)
	for _, limit := range []int{0, -1} {
		if _, err := ratelimit.New(rdb, ratelimit.Config{Limit: limit}); err == nil {
			t.Errorf("limit %d accepted", limit)
		}
	}
	if _, err := ratelimit.New(nil, ratelimit.Config{Limit: 1}); err == nil {
		t.Error("nil client accepted")
	}
}

// TestLocalMemoryHoldsTheLimitWhenRedisForgets: Redis restarting without persistence forgets the shared
// log. With a process-wide Local the process keeps counting its own admissions, so the limit still holds
// in every window; without it the same loss admits a second full budget at once (the control case shows
// the test can tell the difference).
func TestLocalMemoryHoldsTheLimitWhenRedisForgets(t *testing.T) {
	const limit = 5
	for _, tc := range []struct {
		name      string
		local     *ratelimit.Local
		wantAbove bool
	}{
		{"with local memory", &ratelimit.Local{}, false},
		{"redis only", nil, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rdb, prefix := newRedis(t)
			l, err := ratelimit.New(rdb, ratelimit.Config{Prefix: prefix, Limit: limit, Window: time.Second, Local: tc.local})
			if err != nil {
				t.Fatal(err)
			}
			ctx := context.Background()
			var admitted []time.Time
			for range limit {
				if err := l.Wait(ctx, "dest:1"); err != nil {
					t.Fatal(err)
				}
				admitted = append(admitted, time.Now())
			}
			// The restart: every key of the limiter is gone.
			keys, _ := rdb.Keys(ctx, prefix+"*").Result()
			if len(keys) == 0 {
				t.Fatal("setup: the limiter wrote no keys to Redis")
			}
			rdb.Del(ctx, keys...)
			for range limit {
				if err := l.Wait(ctx, "dest:1"); err != nil {
					t.Fatal(err)
				}
				admitted = append(admitted, time.Now())
			}
			most := crmfake.MaxInWindow(admitted, time.Second)
			if above := most > limit; above != tc.wantAbove {
				t.Fatalf("%d admissions in one 1 s window (limit %d); above the limit: %v, want %v", most, limit, above, tc.wantAbove)
			}
		})
	}
}

// A request held up after admission counts from when it went out: after Sent, the next admission waits
// a full window from the send, not from the admission, and Sent never moves an entry earlier.
func TestSentMovesTheAdmissionToWhenTheRequestWentOut(t *testing.T) {
	const heldUp = 500 * time.Millisecond
	for _, variant := range limiterVariants() {
		t.Run(variant.name, func(t *testing.T) {
			l := variant.new(t, ratelimit.Config{Limit: 1, Window: time.Second})
			ctx := context.Background()
			ticket, err := l.Admit(ctx, "dest:1")
			if err != nil {
				t.Fatal(err)
			}
			time.Sleep(heldUp)
			if err := l.Sent(ctx, ticket, time.Now()); err != nil {
				t.Fatal(err)
			}
			if err := l.Sent(ctx, ticket, time.Now().Add(-heldUp)); err != nil { // earlier: ignored
				t.Fatal(err)
			}
			wait, err := l.Allow(ctx, "dest:1")
			if err != nil {
				t.Fatal(err)
			}
			// Counted from the admission the wait would be about 500 ms; from the send, about 1 s.
			if wait < 750*time.Millisecond {
				t.Fatalf("next admission waits %s after the send, want about a full window (the send was %s after admission)", wait, heldUp)
			}
		})
	}
}

// A request admitted but not yet reported sent counts in every window, however long it is held up: it
// may reach the CRM at any moment. Once reported, it counts from when it went out.
func TestAPendingRequestCountsUntilItIsReportedSent(t *testing.T) {
	for _, variant := range limiterVariants() {
		t.Run(variant.name, func(t *testing.T) {
			l := variant.new(t, ratelimit.Config{Limit: 1, Window: 200 * time.Millisecond})
			ctx := context.Background()
			slow, err := l.Admit(ctx, "dest:1")
			if err != nil {
				t.Fatal(err)
			}
			time.Sleep(500 * time.Millisecond) // held up for more than two windows
			if wait, err := l.Allow(ctx, "dest:1"); err != nil || wait == 0 {
				t.Fatalf("Allow while the first request is still pending: wait %v err %v, want a wait", wait, err)
			}
			if err := l.Sent(ctx, slow, time.Now()); err != nil {
				t.Fatal(err)
			}
			wait, err := l.Allow(ctx, "dest:1")
			if err != nil {
				t.Fatal(err)
			}
			if wait < 100*time.Millisecond {
				t.Fatalf("next admission waits %s after the send, want about a full 200 ms window", wait)
			}
			if err := l.Wait(ctx, "dest:1"); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// A pending request whose process died is never reported; it stops counting once even a send at the end
// of its InFlight time would have left the window.
func TestAPendingRequestNeverReportedStopsCountingAfterItsInFlightTime(t *testing.T) {
	for _, variant := range limiterVariants() {
		t.Run(variant.name, func(t *testing.T) {
			l := variant.new(t, ratelimit.Config{Limit: 1, Window: 100 * time.Millisecond, InFlight: 200 * time.Millisecond})
			ctx := context.Background()
			if _, err := l.Admit(ctx, "dest:1"); err != nil {
				t.Fatal(err)
			}
			if wait, _ := l.Allow(ctx, "dest:1"); wait == 0 {
				t.Fatal("admitted a second request while the first was pending")
			}
			time.Sleep(350 * time.Millisecond)
			if wait, err := l.Allow(ctx, "dest:1"); err != nil || wait != 0 {
				t.Fatalf("Allow after the pending request's InFlight time and a window: wait %v err %v, want admitted", wait, err)
			}
		})
	}
}

// A request whose pending entry already ran out (or was lost with Redis's data) when it is reported is
// put back, since the CRM counts it now.
func TestSentPutsBackARequestHeldUpLongerThanItsInFlightTime(t *testing.T) {
	for _, variant := range limiterVariants() {
		t.Run(variant.name, func(t *testing.T) {
			l := variant.new(t, ratelimit.Config{Limit: 2, Window: 300 * time.Millisecond, InFlight: 50 * time.Millisecond})
			ctx := context.Background()
			slow, err := l.Admit(ctx, "dest:1")
			if err != nil {
				t.Fatal(err)
			}
			time.Sleep(400 * time.Millisecond) // the slow request's pending entry runs out
			if _, err := l.Admit(ctx, "dest:1"); err != nil {
				t.Fatal(err)
			}
			if err := l.Sent(ctx, slow, time.Now()); err != nil {
				t.Fatal(err)
			}
			wait, err := l.Allow(ctx, "dest:1")
			if err != nil {
				t.Fatal(err)
			}
			if wait == 0 {
				t.Fatal("a third request was admitted while two went out within the window")
			}
		})
	}
}

// limiterVariants build a limiter with no margin over Redis alone, and with the process's own memory too.
type limiterVariant struct {
	name string
	new  func(t *testing.T, cfg ratelimit.Config) *ratelimit.Limiter
}

func limiterVariants() []limiterVariant {
	return []limiterVariant{
		{"redis only", func(t *testing.T, cfg ratelimit.Config) *ratelimit.Limiter {
			return newLimiter(t, cfg)
		}},
		{"with the process's own memory", func(t *testing.T, cfg ratelimit.Config) *ratelimit.Limiter {
			cfg.Local = &ratelimit.Local{}
			return newLimiter(t, cfg)
		}},
	}
}

// newLimiter builds cfg's limiter without a margin, under a key prefix of its own.
func newLimiter(t *testing.T, cfg ratelimit.Config) *ratelimit.Limiter {
	t.Helper()
	rdb, prefix := newRedis(t)
	cfg.Prefix, cfg.Margin = prefix, -1
	l, err := ratelimit.New(rdb, cfg)
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// Two replicas share a destination's budget through Redis, which restarts and loses everything right
// after one replica used the whole budget. The other replica, which sent nothing and so has nothing in
// its own memory, must still not send a full budget into the same window: Redis admits nothing until
// it has been up for a whole window.
func TestARedisRestartHoldsEveryReplicaForAWindow(t *testing.T) {
	const limit = 5
	srv := testkit.RedisServer(t)
	var replicas []*ratelimit.Limiter
	for range 2 {
		rdb := redis.NewClient(&redis.Options{Addr: srv.Addr(), MaxRetries: -1})
		t.Cleanup(func() { rdb.Close() })
		l, err := ratelimit.New(rdb, ratelimit.Config{Prefix: "test:", Limit: limit, Window: time.Second, Margin: -1, Local: &ratelimit.Local{}})
		if err != nil {
			t.Fatal(err)
		}
		replicas = append(replicas, l)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var admitted []time.Time
	for range limit {
		if err := replicas[0].Wait(ctx, "dest:1"); err != nil {
			t.Fatal(err)
		}
		admitted = append(admitted, time.Now())
	}
	srv.Restart(true)
	for range limit {
		if err := replicas[1].Wait(ctx, "dest:1"); err != nil {
			t.Fatal(err)
		}
		admitted = append(admitted, time.Now())
	}
	if most := crmfake.MaxInWindow(admitted, time.Second); most > limit {
		t.Fatalf("%d admissions in one 1 s window across the restart (limit %d)", most, limit)
	}
}

// lostReply lets each command run on the server, then reports an error while on, as a read timeout or
// a dropped connection does after Redis executed the command.
type lostReply struct{ on atomic.Bool }

func (h *lostReply) DialHook(next redis.DialHook) redis.DialHook { return next }
func (h *lostReply) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return next
}
func (h *lostReply) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		err := next(ctx, cmd)
		if h.on.Load() && err == nil {
			err = errors.New("i/o timeout (reply lost)")
			cmd.SetErr(err)
		}
		return err
	}
}

// An admission that Redis carried out but whose answer was lost hands out no ticket, so nothing would
// ever report it sent: it must not hold a pending slot for its InFlight time.
func TestAnAdmissionWhoseAnswerWasLostHoldsNoSlot(t *testing.T) {
	rdb, prefix := newRedis(t)
	lost := &lostReply{}
	rdb.AddHook(lost)
	l, err := ratelimit.New(rdb, ratelimit.Config{Prefix: prefix, Limit: 1, Window: time.Second, Margin: -1, InFlight: 10 * time.Second,
		Local: &ratelimit.Local{}})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	lost.on.Store(true)
	if _, err := l.Admit(ctx, "dest:1"); err == nil {
		t.Fatal("setup: the lost answer did not surface as an error")
	}
	lost.on.Store(false)
	if wait, err := l.Allow(ctx, "dest:1"); err != nil || wait != 0 {
		t.Fatalf("after a lost admission: wait %v err %v, want admitted at once", wait, err)
	}
}

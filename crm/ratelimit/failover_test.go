//go:build proof

package ratelimit_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/leadgate/leadgate/crm/crmfake"
	"github.com/leadgate/leadgate/crm/ratelimit"
	"github.com/leadgate/leadgate/internal/testkit"
	"github.com/leadgate/leadgate/internal/throwaway"
)

// A replica promoted while it lagged has been up for long, so the restart hold does not apply, yet it
// never received its old master's last admissions. Here the replica is promoted (REPLICAOF NO ONE, as
// Sentinel does) before the master admits the rest of a full budget, so the promoted server's log lacks
// them; a replica process that then sends through the promoted server must still not put more than the
// limit into one window with them.
func TestAPromotedReplicaThatLaggedHoldsAdmissionsForAWindow(t *testing.T) {
	const limit = 5
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	set, err := throwaway.StartSentinel(ctx, t.TempDir(), 1, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(set.Close)
	master, replica := set.Nodes[0], set.Nodes[1]
	limiterOn := func(addr string) *ratelimit.Limiter {
		rdb := redis.NewClient(&redis.Options{Addr: addr, MaxRetries: -1})
		t.Cleanup(func() { rdb.Close() })
		l, err := ratelimit.New(rdb, ratelimit.Config{Prefix: "test:", Limit: limit, Window: time.Second, Local: &ratelimit.Local{}})
		if err != nil {
			t.Fatal(err)
		}
		return l
	}
	old, promoted := limiterOn(master.Addr()), limiterOn(replica.Addr())
	var admitted []time.Time
	if err := old.Wait(ctx, "dest:1"); err != nil {
		t.Fatal(err)
	}
	admitted = append(admitted, time.Now())
	ctl := redis.NewClient(&redis.Options{Addr: master.Addr()})
	defer ctl.Close()
	if n, err := ctl.Wait(ctx, 1, 5*time.Second).Result(); err != nil || n < 1 {
		t.Fatalf("setup: the first admission did not reach the replica: %d, %v", n, err)
	}
	rctl := redis.NewClient(&redis.Options{Addr: replica.Addr()})
	defer rctl.Close()
	if err := rctl.ReplicaOf(ctx, "NO", "ONE").Err(); err != nil {
		t.Fatalf("promote the replica: %v", err)
	}
	for range limit - 1 { // the master's last admissions, which the promoted replica never gets
		if err := old.Wait(ctx, "dest:1"); err != nil {
			t.Fatal(err)
		}
		admitted = append(admitted, time.Now())
	}
	for range limit {
		if err := promoted.Wait(ctx, "dest:1"); err != nil {
			t.Fatal(err)
		}
		admitted = append(admitted, time.Now())
	}
	if most := crmfake.MaxInWindow(admitted, time.Second); most > limit {
		t.Fatalf("%d admissions in one 1 s window across the promotion (limit %d)", most, limit)
	}
}

// Through Sentinel, the limiter follows the master across a failover (the promoted server has none of
// the scripts cached) and keeps admitting within the limit.
func TestTheLimiterKeepsAdmittingWithinTheLimitAcrossASentinelFailover(t *testing.T) {
	const limit = 5
	set := testkit.RedisSentinel(t)
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	rdb := redis.NewFailoverClient(&redis.FailoverOptions{MasterName: set.Name, SentinelAddrs: []string{set.Sentinels[0].Addr(), set.Sentinels[1].Addr()}})
	t.Cleanup(func() { rdb.Close() })
	l, err := ratelimit.New(rdb, ratelimit.Config{Prefix: "test:", Limit: limit, Window: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	var admitted []time.Time
	for range 2 * limit {
		if err := l.Wait(ctx, "dest:1"); err != nil {
			t.Fatal(err)
		}
		admitted = append(admitted, time.Now())
	}
	if _, _, err := set.Failover(ctx); err != nil {
		t.Fatal(err)
	}
	for len(admitted) < 4*limit {
		if err := l.Wait(ctx, "dest:1"); err != nil {
			if ctx.Err() != nil {
				t.Fatalf("no admission after the failover: %v", err)
			}
			continue // the client is still finding the new master
		}
		admitted = append(admitted, time.Now())
	}
	if most := crmfake.MaxInWindow(admitted, time.Second); most > limit {
		t.Fatalf("%d admissions in one 1 s window (limit %d)", most, limit)
	}
}

// On a Redis Cluster each destination's keys share one slot, so the scripts run wherever the slot
// lives, and two limiter instances still share one budget per destination.
func TestTheLimiterRunsOnARedisClusterWithOneBudgetPerDestination(t *testing.T) {
	const limit = 4
	cl := testkit.RedisCluster(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	var limiters []*ratelimit.Limiter
	for range 2 {
		rdb := redis.NewClusterClient(&redis.ClusterOptions{Addrs: []string{cl.Nodes[0].Addr()}})
		t.Cleanup(func() { rdb.Close() })
		l, err := ratelimit.New(rdb, ratelimit.Config{Prefix: "test:", Limit: limit, Window: time.Second})
		if err != nil {
			t.Fatal(err)
		}
		limiters = append(limiters, l)
	}
	for d := range 6 { // destinations spread over the slots of every node
		key := fmt.Sprintf("dest:%d", d)
		var admitted []time.Time
		for i := range 2 * limit {
			l := limiters[i%2]
			tk, err := l.Admit(ctx, key)
			if err != nil {
				t.Fatalf("%s: %v", key, err)
			}
			now := time.Now()
			if err := l.Sent(ctx, tk, now); err != nil {
				t.Fatalf("%s sent: %v", key, err)
			}
			admitted = append(admitted, now)
		}
		if err := pauseAndReadBack(ctx, limiters[0], key); err != nil {
			t.Fatal(err)
		}
		if most := crmfake.MaxInWindow(admitted, time.Second); most > limit {
			t.Fatalf("%s: %d admissions in one 1 s window (limit %d)", key, most, limit)
		}
	}
}

// pauseAndReadBack pauses and reads the pause back, the two remaining commands of the limiter, on the cluster.
func pauseAndReadBack(ctx context.Context, l *ratelimit.Limiter, key string) error {
	if err := l.Pause(ctx, key, time.Now().Add(time.Minute)); err != nil {
		return err
	}
	until, err := l.PausedUntil(ctx, key)
	if err != nil {
		return err
	}
	if time.Until(until) < 50*time.Second {
		return fmt.Errorf("%s paused until %s, want about a minute", key, until)
	}
	return nil
}

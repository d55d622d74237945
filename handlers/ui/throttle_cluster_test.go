//go:build proof

package ui

import (
	"context"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/leadgate/leadgate/internal/testkit"
)

// On a Redis Cluster a client IP's and an email's counts live in different slots; the failures are
// still recorded in Redis (not in one process's memory), so every replica shares one budget.
func TestTheLoginThrottleSharesOneBudgetAcrossReplicasOnARedisCluster(t *testing.T) {
	cluster := testkit.RedisCluster(t)
	replica := func() *LoginLimiter {
		rdb := redis.NewClusterClient(&redis.ClusterOptions{Addrs: []string{cluster.Nodes[0].Addr()}})
		t.Cleanup(func() { rdb.Close() })
		l := NewLoginLimiter(5, 15*time.Minute)
		l.Redis = rdb
		return l
	}
	a, b := replica(), replica()
	ctx := context.Background()
	now := time.Now()
	keys := []string{"ip:203.0.113.7", "email:admin@example.com"}
	for range 5 {
		a.Fail(ctx, now, keys...)
	}
	if blocked, wait := b.Blocked(ctx, now, keys[1]); !blocked || wait <= 0 {
		t.Fatalf("the other replica sees the email blocked = %v (wait %s), want blocked after 5 failures on the first", blocked, wait)
	}
	if blocked, _ := b.Blocked(ctx, now, keys[0]); !blocked {
		t.Fatal("the other replica does not see the client IP blocked")
	}
}

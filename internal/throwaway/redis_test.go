package throwaway

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// A killed master is replaced by its replica, which keeps what was replicated, and a client built on
// the sentinels follows it.
func TestSentinelPromotesTheReplicaWhenTheMasterIsKilled(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	s, err := StartSentinel(ctx, t.TempDir(), 1, 3)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	c := redis.NewFailoverClient(&redis.FailoverOptions{MasterName: s.Name, SentinelAddrs: []string{s.Sentinels[0].Addr(), s.Sentinels[1].Addr()}})
	defer c.Close()
	if err := c.Set(ctx, "k", "v", 0).Err(); err != nil {
		t.Fatal(err)
	}
	if err := c.Wait(ctx, 1, time.Second).Err(); err != nil {
		t.Fatal(err)
	}
	old, promoted, err := s.Failover(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if promoted == old || promoted != s.Nodes[1] {
		t.Fatalf("promoted %v, old %v", promoted, old)
	}
	var got string
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		if got, err = c.Get(ctx, "k").Result(); err == nil {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	if got != "v" {
		t.Fatalf("after failover GET k = %q, %v", got, err)
	}
	if err := s.Rejoin(ctx, old); err != nil {
		t.Fatal(err)
	}
}

// Every slot is served, and a multi-key command across slots is refused as on a production cluster.
func TestClusterServesEverySlotAndRefusesCrossSlotScripts(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cl, err := StartCluster(ctx, t.TempDir(), 3)
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	c := redis.NewClusterClient(&redis.ClusterOptions{Addrs: []string{cl.Nodes[0].Addr()}})
	defer c.Close()
	for _, k := range []string{"a", "b", "c", "d"} {
		if err := c.Set(ctx, k, k, 0).Err(); err != nil {
			t.Fatal(err)
		}
	}
	err = c.Eval(ctx, "return redis.call('GET', KEYS[1]) .. redis.call('GET', KEYS[2])", []string{"a", "b"}).Err()
	if err == nil || !strings.Contains(err.Error(), "CROSSSLOT") {
		t.Fatalf("cross-slot script: %v, want CROSSSLOT", err)
	}
	vals, err := c.MGet(ctx, "a", "b", "c", "d").Result()
	t.Logf("MGET across slots: %v %v", vals, err)
}

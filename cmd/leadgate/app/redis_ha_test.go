//go:build proof

package app_test

import (
	"context"
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/leadgate/leadgate/ingest/signature"
	"github.com/leadgate/leadgate/internal/testkit"
)

// runWorker runs the process's asynq workers (apply, sync) until the test ends.
func (h *harness) runWorker() {
	h.t.Helper()
	ctx, stop := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { _ = h.app.RunWorker(ctx); close(done) }()
	h.t.Cleanup(func() { stop(); <-done })
}

// onlyID is the one event id a tally of answers carries.
func onlyID(t testing.TB, ids map[string]int) string {
	t.Helper()
	if len(ids) != 1 {
		t.Fatalf("answers carry event ids %v, want one", ids)
	}
	for id := range ids {
		return id
	}
	return ""
}

// waitApplied waits until the event is applied, sweeping stranded events meanwhile as the scheduler
// would (an apply task enqueued on a master that died before it replicated is gone).
func (h *harness) waitApplied(id string) {
	h.t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for lastSweep := time.Now(); ; {
		r := h.api(http.MethodGet, "/events/"+id, nil)
		if r.str("status") == "applied" {
			return
		}
		if time.Now().After(deadline) {
			h.t.Fatalf("event %s not applied within 60 s: %s", id, r)
		}
		if time.Since(lastSweep) > 2*time.Second {
			h.sweep()
			lastSweep = time.Now()
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// contactCount counts the default workspace's contacts through the API.
func (h *harness) contactCount() int {
	h.t.Helper()
	r := h.api(http.MethodGet, "/contacts?limit=500", nil)
	if r.Status != http.StatusOK {
		h.t.Fatalf("list contacts: %s", r)
	}
	list, _ := r.JSON["contacts"].([]any)
	return len(list)
}

// Through Redis Sentinel, concurrent retries of one delivery become one event applied once; after the
// master is killed and its replica promoted, a retry of it is still a duplicate of the same event (the
// promoted replica may lack the fast-gate key; Postgres is the truth), and a new delivery is accepted,
// queued on the new master and applied once.
func TestIngestDedupesAndAppliesOnceThroughRedisSentinelAcrossAFailover(t *testing.T) {
	set := testkit.RedisSentinel(t)
	h := newHarness(t, opts{redisURL: set.URL(0)})
	h.runWorker()
	src := h.createSource(map[string]any{"kind": "standard-webhooks"})
	before := h.swDelivery(src, "msg_sentinel_1", `{"event_type":"form_submitted","email":"before@example.com"}`)
	byStatus, ids := tally(t, h.burst(before, 20))
	if byStatus["queued"] != 1 || byStatus["duplicate"] != 19 {
		t.Fatalf("answers %v, want 1 queued + 19 duplicate", byStatus)
	}
	first := onlyID(t, ids)
	h.waitApplied(first)

	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if _, _, err := set.Failover(ctx); err != nil {
		t.Fatal(err)
	}
	byStatus, ids = tally(t, h.burst(before, 20))
	if byStatus["duplicate"] != 20 || onlyID(t, ids) != first {
		t.Fatalf("after the failover: answers %v with ids %v, want 20 duplicates of %s", byStatus, ids, first)
	}
	after := h.swDelivery(src, "msg_sentinel_2", `{"event_type":"form_submitted","email":"after@example.com"}`)
	byStatus, ids = tally(t, h.burst(after, 20))
	if byStatus["queued"] != 1 || byStatus["duplicate"] != 19 {
		t.Fatalf("new delivery after the failover: answers %v, want 1 queued + 19 duplicate", byStatus)
	}
	h.waitApplied(onlyID(t, ids))
	h.sweep() // a late sweep re-enqueues nothing that is applied
	if st := h.stats(); st.Accepted != 2 || st.Applied != 2 || st.Received != 60 {
		t.Fatalf("stats %+v, want 60 received, 2 accepted, 2 applied", st)
	}
	if n := h.contactCount(); n != 2 {
		t.Fatalf("%d contacts, want 2", n)
	}
}

// On a Redis Cluster every multi-key command and script keeps to one slot: a multi-item delivery's
// redelivery is answered from the fast gate (one MGET) even with Postgres cut off, and events are
// queued and applied (asynq's and the breaker's scripts run on the cluster).
func TestIngestDedupesFromTheFastGateAndAppliesOnARedisCluster(t *testing.T) {
	cluster := testkit.RedisCluster(t)
	h := newHarness(t, opts{redisURL: cluster.URL(), pgProxy: true})
	h.runWorker()
	src := h.createSource(map[string]any{"kind": "standard-webhooks"})
	d := h.swDelivery(src, "msg_cluster_1", `{"event_type":"form_submitted","email":"cluster@example.com"}`)
	byStatus, ids := tally(t, h.burst(d, 10))
	if byStatus["queued"] != 1 || byStatus["duplicate"] != 9 {
		t.Fatalf("answers %v, want 1 queued + 9 duplicate", byStatus)
	}
	id := onlyID(t, ids)
	h.waitApplied(id)

	secret, _ := signature.NewSecret("hubspot")
	hub := h.createSource(map[string]any{"kind": "hubspot", "secret": secret})
	multi := h.signed(hub, jsonCT, fixture(t, "hubspot.json"), sign{})
	first := h.send(multi)
	if first.Status != http.StatusOK || len(first.JSON["events"].([]any)) != 3 {
		t.Fatalf("multi-item delivery: %s, want 3 events", first)
	}
	testkit.Eventually(t, 10*time.Second, "the four keys on the fast gate", func() bool {
		var n atomic.Int64
		err := h.rdb.(*redis.ClusterClient).ForEachMaster(context.Background(), func(ctx context.Context, c *redis.Client) error {
			keys, err := c.Keys(ctx, "lg:idem:*").Result()
			n.Add(int64(len(keys)))
			return err
		})
		return err == nil && n.Load() >= 4
	})
	h.pg.Cut()
	again := h.send(multi)
	h.pg.Restore()
	if again.Status != http.StatusOK || again.str("status") != "duplicate" {
		t.Fatalf("redelivery with Postgres cut off: %s, want 200 duplicate from the fast gate", again)
	}
}

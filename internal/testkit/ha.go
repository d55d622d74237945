package testkit

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/leadgate/leadgate/internal/throwaway"
)

// haStartTimeout bounds starting a throwaway deployment on a loaded machine.
const haStartTimeout = 2 * time.Minute

// RedisSentinel starts a throwaway Redis Sentinel set owned by the test: a master, one replica and
// three sentinels on free ports. Its URL method gives LEADGATE_REDIS_URL; Failover kills the master.
// Every process is killed in t.Cleanup.
func RedisSentinel(t testing.TB) *throwaway.Sentinel {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), haStartTimeout)
	defer cancel()
	s, err := throwaway.StartSentinel(ctx, t.TempDir(), 1, 3)
	if err != nil {
		t.Fatalf("testkit: %v", err)
	}
	t.Cleanup(s.Close)
	return s
}

// RedisCluster starts a throwaway three-master Redis Cluster owned by the test (every slot served, no
// replicas), killed in t.Cleanup.
func RedisCluster(t testing.TB) *throwaway.Cluster {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), haStartTimeout)
	defer cancel()
	c, err := throwaway.StartCluster(ctx, t.TempDir(), 3)
	if err != nil {
		t.Fatalf("testkit: %v", err)
	}
	t.Cleanup(c.Close)
	return c
}

// PostgresPair starts a throwaway Postgres primary (initdb) with a synchronous streaming standby
// (pg_basebackup), both owned by the test; URL is the multi-host URL with target_session_attrs=read-write
// and Promote crashes the primary and promotes the standby. Both are stopped in t.Cleanup.
func PostgresPair(t testing.TB) *throwaway.PGPair {
	t.Helper()
	// Not t.TempDir: its parent is private to the test's user, and the postgres user must reach it.
	dir, err := os.MkdirTemp("", "leadgate-pgpair-")
	if err != nil {
		t.Fatalf("testkit: postgres temp dir: %v", err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(dir) })
	ctx, cancel := context.WithTimeout(context.Background(), haStartTimeout)
	defer cancel()
	p, err := throwaway.StartPGPair(ctx, dir)
	if err != nil {
		t.Fatalf("testkit: %v", err)
	}
	t.Cleanup(p.Close)
	return p
}

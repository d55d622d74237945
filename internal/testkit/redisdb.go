package testkit

import (
	"cmp"
	"context"
	"fmt"
	"net/url"
	"os"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

const (
	defaultRedisURL = "redis://127.0.0.1:6379"
	// redisLeasePrefix names, in DB 0, the lease on each DB number.
	redisLeasePrefix = "leadgate-test:redis-db:"
	// redisLeaseTTL bounds how long a crashed test process keeps a DB.
	redisLeaseTTL = 30 * time.Second
	// redisLeaseWait is how long RedisDB waits for a DB number to free up.
	redisLeaseWait = 2 * time.Minute
)

// Lua scripts that touch the lease only while this test still owns it.
var (
	renewLease   = redis.NewScript(`if redis.call("GET", KEYS[1]) == ARGV[1] then return redis.call("PEXPIRE", KEYS[1], ARGV[2]) end return 0`)
	releaseLease = redis.NewScript(`if redis.call("GET", KEYS[1]) == ARGV[1] then return redis.call("DEL", KEYS[1]) end return 0`)
)

// RedisDB reserves a logical DB number (1..n-1; DB 0 holds the leases) on
// the Redis at TEST_REDIS_URL (default 127.0.0.1:6379) for this test
// alone, across every test process on the machine, flushes it, and
// returns its URL (redis://127.0.0.1:6379/7). When every number is taken
// it waits for one. The DB is flushed and released in t.Cleanup.
func RedisDB(t testing.TB) string {
	t.Helper()
	base := cmp.Or(os.Getenv("TEST_REDIS_URL"), defaultRedisURL)
	opts, err := redis.ParseURL(base)
	if err != nil {
		t.Fatalf("testkit: TEST_REDIS_URL: %v", err)
	}
	opts.DB = 0
	ctl := redis.NewClient(opts)

	ctx, cancel := context.WithTimeout(context.Background(), redisLeaseWait+10*time.Second)
	defer cancel()
	token := randomHex(16)
	db, err := leaseRedisDB(ctx, ctl, token)
	if err != nil {
		_ = ctl.Close()
		t.Fatalf("testkit: reserve a Redis DB on %s: %v", opts.Addr, err)
	}
	key := redisLeasePrefix + strconv.Itoa(db)

	dbOpts := *opts
	dbOpts.DB = db
	client := redis.NewClient(&dbOpts)
	stopRenewal := keepLease(ctl, key, token)
	t.Cleanup(func() {
		stopRenewal()
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := client.FlushDB(ctx).Err(); err != nil {
			t.Errorf("testkit: flush Redis DB %d: %v", db, err)
		}
		if err := releaseLease.Run(ctx, ctl, []string{key}, token).Err(); err != nil {
			t.Errorf("testkit: release Redis DB %d: %v", db, err)
		}
		_ = client.Close()
		_ = ctl.Close()
	})
	if err := client.FlushDB(ctx).Err(); err != nil {
		t.Fatalf("testkit: flush Redis DB %d: %v", db, err)
	}
	return redisURLWithDB(base, db)
}

// leaseRedisDB takes the first free DB number, polling until ctx ends.
func leaseRedisDB(ctx context.Context, ctl *redis.Client, token string) (int, error) {
	count, err := redisDatabaseCount(ctx, ctl)
	if err != nil {
		return 0, err
	}
	if count < 2 {
		return 0, fmt.Errorf("server has %d databases, need at least 2", count)
	}
	deadline := time.Now().Add(redisLeaseWait)
	for {
		for db := 1; db < count; db++ {
			ok, err := ctl.SetNX(ctx, redisLeasePrefix+strconv.Itoa(db), token, redisLeaseTTL).Result()
			if err != nil {
				return 0, fmt.Errorf("lease: %w", err)
			}
			if ok {
				return db, nil
			}
		}
		if time.Now().After(deadline) {
			return 0, fmt.Errorf("all %d DB numbers stayed leased for %s", count-1, redisLeaseWait)
		}
		select {
		case <-ctx.Done():
			return 0, ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// redisDatabaseCount asks the server how many logical DBs it has; a
// server that forbids CONFIG gets the default of 16.
func redisDatabaseCount(ctx context.Context, ctl *redis.Client) (int, error) {
	if err := ctl.Ping(ctx).Err(); err != nil {
		return 0, fmt.Errorf("ping: %w", err)
	}
	res, err := ctl.ConfigGet(ctx, "databases").Result()
	if err != nil {
		return 16, nil //nolint:nilerr // CONFIG may be renamed away; 16 is Redis's default
	}
	n, err := strconv.Atoi(res["databases"])
	if err != nil {
		return 16, nil //nolint:nilerr // same default when the answer is odd
	}
	return n, nil
}

// keepLease renews the lease every third of its TTL until the returned
// stop function is called, so long tests keep their DB.
func keepLease(ctl *redis.Client, key, token string) (stop func()) {
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		tick := time.NewTicker(redisLeaseTTL / 3)
		defer tick.Stop()
		for {
			select {
			case <-done:
				return
			case <-tick.C:
				ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
				_ = renewLease.Run(ctx, ctl, []string{key}, token, redisLeaseTTL.Milliseconds()).Err()
				cancel()
			}
		}
	})
	return func() {
		close(done)
		wg.Wait()
	}
}

// redisURLWithDB returns base with its path set to the DB number.
func redisURLWithDB(base string, db int) string {
	u, err := url.Parse(base)
	if err != nil {
		return fmt.Sprintf("%s/%d", defaultRedisURL, db)
	}
	u.Path = "/" + strconv.Itoa(db)
	return u.String()
}

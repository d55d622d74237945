package testkit

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

func TestRedisDBGivesConcurrentTestsDifferentNumbers(t *testing.T) {
	var (
		mu   sync.Mutex
		urls = map[string]string{}
		held sync.WaitGroup // both subtests hold their DB at the same time
	)
	held.Add(2)
	t.Run("group", func(t *testing.T) {
		for _, name := range []string{"a", "b"} {
			t.Run(name, func(t *testing.T) {
				t.Parallel()
				dbURL := RedisDB(t)
				client := redisClient(t, dbURL)
				ctx := context.Background()
				if n, err := client.DBSize(ctx).Result(); err != nil || n != 0 {
					t.Fatalf("fresh DB has %d keys (%v), want an empty DB", n, err)
				}
				if err := client.Set(ctx, "owner", name, 0).Err(); err != nil {
					t.Fatal(err)
				}
				mu.Lock()
				urls[name] = dbURL
				mu.Unlock()
				held.Done()
				held.Wait()
				if got, err := client.Get(ctx, "owner").Result(); err != nil || got != name {
					t.Errorf("owner = %q (%v), want %q: another test wrote to this DB", got, err, name)
				}
			})
		}
	})
	if urls["a"] == "" || urls["a"] == urls["b"] {
		t.Fatalf("parallel tests got %q and %q, want two different DBs", urls["a"], urls["b"])
	}
}

func TestRedisDBIsFlushedWhenTheTestEnds(t *testing.T) {
	var dbURL string
	t.Run("writes", func(t *testing.T) {
		dbURL = RedisDB(t)
		if err := redisClient(t, dbURL).Set(context.Background(), "left-over", "1", time.Hour).Err(); err != nil {
			t.Fatal(err)
		}
	})
	opts, err := redis.ParseURL(dbURL)
	if err != nil {
		t.Fatal(err)
	}
	client := redis.NewClient(opts)
	defer client.Close()
	// Another package may lease the number meanwhile, but never writes this key.
	if n, err := client.Exists(context.Background(), "left-over").Result(); err != nil || n != 0 {
		t.Errorf("key survived the test's cleanup: exists=%d err=%v", n, err)
	}
}

func redisClient(t testing.TB, rawURL string) *redis.Client {
	t.Helper()
	opts, err := redis.ParseURL(rawURL)
	if err != nil {
		t.Fatalf("parse %s: %v", rawURL, err)
	}
	client := redis.NewClient(opts)
	t.Cleanup(func() { _ = client.Close() })
	return client
}

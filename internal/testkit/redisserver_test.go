package testkit

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

func TestRedisServerStopStartAndRestart(t *testing.T) {
	srv := RedisServer(t)
	client := redisClient(t, srv.URL())
	ctx := context.Background()
	if err := client.Set(ctx, "lead", "jane", 0).Err(); err != nil {
		t.Fatalf("SET on the new server: %v", err)
	}

	srv.Stop()
	down := redis.NewClient(&redis.Options{Addr: srv.Addr(), MaxRetries: -1, DialTimeout: time.Second})
	defer down.Close()
	if err := down.Ping(ctx).Err(); err == nil {
		t.Fatal("PING succeeded while the server was stopped")
	}

	srv.Start()
	if got, err := client.Get(ctx, "lead").Result(); err != nil || got != "jane" {
		t.Fatalf("after Stop/Start GET = %q, %v; want the data kept", got, err)
	}

	srv.Restart(false)
	if got, err := client.Get(ctx, "lead").Result(); err != nil || got != "jane" {
		t.Fatalf("after Restart(false) GET = %q, %v; want the data kept", got, err)
	}

	srv.Restart(true)
	if _, err := client.Get(ctx, "lead").Result(); !errors.Is(err, redis.Nil) {
		t.Fatalf("after Restart(true) GET err = %v, want redis.Nil (data lost)", err)
	}
}

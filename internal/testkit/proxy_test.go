package testkit

import (
	"context"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

func TestProxyCutsAndRestoresConnectionsToRealRedis(t *testing.T) {
	opts, err := redis.ParseURL(RedisDB(t))
	if err != nil {
		t.Fatal(err)
	}
	proxy := NewProxy(t, opts.Addr)
	opts.Addr = proxy.Addr()
	opts.MaxRetries = -1 // see every failure instead of retrying it away
	opts.DialTimeout = time.Second
	client := redis.NewClient(opts)
	t.Cleanup(func() { _ = client.Close() })

	ping := func() error {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		return client.Ping(ctx).Err()
	}
	if err := ping(); err != nil {
		t.Fatalf("PING through the proxy: %v", err)
	}

	proxy.Cut()
	// The pooled connection was closed under the client, and new ones are refused.
	for i := range 3 {
		if err := ping(); err == nil {
			t.Fatalf("PING %d succeeded through a cut proxy", i)
		}
	}

	proxy.Restore()
	Eventually(t, 5*time.Second, "PING succeeds after Restore", func() bool { return ping() == nil })
}

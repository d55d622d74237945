package ingest

import (
	"context"
	"errors"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"
)

// redisPause is how long ingest leaves Redis alone after a failed call.
const redisPause = time.Second

// redisBreaker skips Redis for a moment after a call to it failed. Without
// it every delivery during a Redis outage pays go-redis's dial retries and
// backoff (about 2 s per delivery measured with a refused connection, more
// when packets are dropped) for calls that only speed things up: the fast
// gate is an optimization and a skipped enqueue is repaired by the stranded
// sweep. With it, one delivery per pause probes Redis; the rest go straight
// to Postgres. The zero value is closed (Redis used).
type redisBreaker struct {
	openUntil atomic.Int64 // unix nanoseconds
}

// allow reports whether Redis should be called at now.
func (b *redisBreaker) allow(now time.Time) bool {
	return now.UnixNano() >= b.openUntil.Load()
}

// record opens the breaker for redisPause when err is a Redis failure; a
// cancelled request or a missing key says nothing about Redis.
func (b *redisBreaker) record(err error, now time.Time) {
	if err == nil || errors.Is(err, redis.Nil) || errors.Is(err, context.Canceled) {
		return
	}
	b.openUntil.Store(now.Add(redisPause).UnixNano())
}

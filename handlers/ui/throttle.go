package ui

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"log/slog"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
)

// LoginLimiter counts failed sign-ins per key in a sliding window and blocks a
// key once it reaches its budget: Max, or KindMax for the key's kind (the part
// before the first ':'). With Redis set
// the count is shared by every replica (a replica set would otherwise multiply
// the budget by its size); while Redis fails, and without it, each process
// counts in memory.
type LoginLimiter struct {
	Max    int           // failures allowed per Window [5]
	Window time.Duration // [15 min]
	// KindMax overrides Max per key kind ("client" → 20): a client may try
	// several accounts, and an account may be tried from several clients,
	// before either is blocked as a whole.
	KindMax map[string]int
	Redis   redis.UniversalClient
	Prefix  string       // Redis key prefix [leadgate:login:]
	Log     *slog.Logger // optional: Redis failures

	mu       sync.Mutex
	failures map[string][]time.Time
}

// maxLimiterKeys bounds memory under a spray of distinct keys; beyond it the
// oldest-looking entries are dropped when they have expired.
const maxLimiterKeys = 50_000

// NewLoginLimiter allows max failures per key per window.
func NewLoginLimiter(max int, window time.Duration) *LoginLimiter {
	return &LoginLimiter{Max: max, Window: window, failures: map[string][]time.Time{}}
}

// Blocked reports whether any of keys has used up its failures at now, and
// how long until the first of them frees up.
func (l *LoginLimiter) Blocked(ctx context.Context, now time.Time, keys ...string) (bool, time.Duration) {
	if l.Redis != nil {
		blocked, wait, err := l.sharedBlocked(ctx, now, keys)
		if err == nil {
			return blocked, wait
		}
		l.redisFailed("check", err)
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	var wait time.Duration
	for _, k := range keys {
		recent, m := l.recent(k, now), l.max(k)
		if len(recent) >= m {
			wait = max(wait, recent[len(recent)-m].Add(l.Window).Sub(now))
		}
	}
	return wait > 0, wait
}

// Fail records one failed attempt for each key.
func (l *LoginLimiter) Fail(ctx context.Context, now time.Time, keys ...string) {
	if l.Redis != nil {
		// A plain pipeline, not MULTI: the keys (a client IP, an email) lie in different Redis Cluster
		// slots, and each key's ZADD and PEXPIRE need no transaction with the others.
		pipe := l.Redis.Pipeline()
		for _, k := range keys {
			var b [6]byte
			_, _ = rand.Read(b[:])
			pipe.ZAdd(ctx, l.key(k), redis.Z{Score: float64(now.UnixMilli()), Member: strconv.FormatInt(now.UnixNano(), 36) + hex.EncodeToString(b[:])})
			pipe.PExpire(ctx, l.key(k), l.Window)
		}
		_, err := pipe.Exec(ctx)
		if err == nil {
			return
		}
		l.redisFailed("record", err)
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.failures) >= maxLimiterKeys {
		for k := range l.failures {
			if len(l.recent(k, now)) == 0 {
				delete(l.failures, k)
			}
		}
	}
	for _, k := range keys {
		l.failures[k] = append(l.recent(k, now), now)
	}
}

// Reset forgets a key's failures (after a successful sign-in).
func (l *LoginLimiter) Reset(ctx context.Context, keys ...string) {
	if l.Redis != nil {
		for _, k := range keys {
			if err := l.Redis.Del(ctx, l.key(k)).Err(); err != nil {
				l.redisFailed("reset", err)
			}
		}
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, k := range keys {
		delete(l.failures, k)
	}
}

// sharedBlocked is Blocked over the Redis sorted sets (failure times in ms).
func (l *LoginLimiter) sharedBlocked(ctx context.Context, now time.Time, keys []string) (bool, time.Duration, error) {
	cut := strconv.FormatInt(now.Add(-l.Window).UnixMilli(), 10)
	pipe := l.Redis.Pipeline()
	ranges := make([]*redis.ZSliceCmd, len(keys))
	for i, k := range keys {
		pipe.ZRemRangeByScore(ctx, l.key(k), "-inf", "("+cut)
		// The budget-th newest failure decides when the key frees up.
		m := int64(l.max(k))
		ranges[i] = pipe.ZRevRangeWithScores(ctx, l.key(k), m-1, m-1)
	}
	if _, err := pipe.Exec(ctx); err != nil && err != redis.Nil {
		return false, 0, err
	}
	var wait time.Duration
	for _, r := range ranges {
		zs, err := r.Result()
		if err != nil || len(zs) == 0 {
			continue
		}
		at := time.UnixMilli(int64(zs[0].Score))
		wait = max(wait, at.Add(l.Window).Sub(now))
	}
	return wait > 0, wait, nil
}

// max is the budget of key k.
func (l *LoginLimiter) max(k string) int {
	if kind, _, ok := strings.Cut(k, ":"); ok {
		if m, ok := l.KindMax[kind]; ok && m > 0 {
			return m
		}
	}
	return l.Max
}

func (l *LoginLimiter) key(k string) string {
	p := l.Prefix
	if p == "" {
		p = "leadgate:login:"
	}
	return p + k
}

func (l *LoginLimiter) redisFailed(what string, err error) {
	if l.Log != nil {
		l.Log.Warn("login throttle: redis failed; counting in memory", "op", what, "err", err)
	}
}

// recent prunes and returns k's failures inside the window; l.mu is held.
func (l *LoginLimiter) recent(k string, now time.Time) []time.Time {
	list := l.failures[k]
	i := 0
	for i < len(list) && now.Sub(list[i]) >= l.Window {
		i++
	}
	if i == len(list) {
		delete(l.failures, k)
		return nil
	}
	list = list[i:]
	l.failures[k] = list
	return list
}

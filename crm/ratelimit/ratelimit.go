// Package ratelimit is a distributed limiter per CRM destination, shared by every leadgate replica
// through Redis: never more than Limit requests in any sliding Window (1 s for ActiveCampaign's 5 req/s,
// 10 s for HubSpot), plus a pause that every replica honours (a 429's Retry-After).
//
// It is a sliding-window log, not GCRA: each admitted request is a timestamped entry in a sorted set,
// and a request is admitted only while fewer than Limit entries lie within the window. GCRA (as in
// go-redis/redis_rate) spreads requests evenly but, with a burst above one, admits burst+rate requests
// in some 1 s windows, so it cannot promise "at most N in ANY window". Admission runs in one Lua script
// using the Redis server's clock, so replicas with skewed clocks still agree.
//
// Admission happens at the Redis server; the request reaches the CRM later: after scheduling on a loaded
// host, the write and a network hop. Sent moves an admission to when the request actually went out, so
// a request held up after admission still counts in the windows where the CRM saw it. Margin widens the
// window slightly for what remains (requests still in flight, the network), so that jitter cannot
// squeeze Limit+1 requests into one window as the CRM sees it.
package ratelimit

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"
)

// Config configures a Limiter.
type Config struct {
	Prefix string        // Redis key prefix; default "leadgate:ratelimit:"
	Limit  int           // requests allowed per Window; must be > 0
	Window time.Duration // default 1 s
	// Margin is added to Window when admitting (see the package doc); default Window/4, at least 100 ms:
	// measured on a loaded 2-core machine, scheduling delays between admission and arrival reached
	// ~100 ms, and a CRM that counts one request too many answers 429.
	// A negative Margin means none.
	Margin time.Duration
	// Local, when set, also holds this process's own admissions (share one Local across every Limiter of
	// the process). Redis is the shared truth, but a Redis restart without persistence forgets the log,
	// and the next second would then admit a full budget on top of what was just sent; with Local this
	// process still never exceeds the limit on its own.
	Local *Local
}

// Limiter admits requests per key (one key per destination). It holds no local state: any number of
// Limiters over the same Redis and prefix share the budget.
type Limiter struct {
	rdb redis.Scripter
	cfg Config
}

// New returns a Limiter; cfg.Limit must be positive.
func New(rdb redis.Scripter, cfg Config) (*Limiter, error) {
	if rdb == nil {
		return nil, errors.New("ratelimit: redis client is required")
	}
	if cfg.Limit <= 0 {
		return nil, fmt.Errorf("ratelimit: limit must be positive, got %d", cfg.Limit)
	}
	if cfg.Window <= 0 {
		cfg.Window = time.Second
	}
	if cfg.Margin == 0 {
		cfg.Margin = max(cfg.Window/4, 100*time.Millisecond)
	}
	if cfg.Margin < 0 {
		cfg.Margin = 0
	}
	if cfg.Prefix == "" {
		cfg.Prefix = "leadgate:ratelimit:"
	}
	return &Limiter{rdb: rdb, cfg: cfg}, nil
}

// Config returns the effective configuration.
func (l *Limiter) Config() Config { return l.cfg }

// keys returns the log and pause keys of a destination; the hash tag keeps both in one cluster slot.
func (l *Limiter) keys(key string) []string {
	base := l.cfg.Prefix + "{" + key + "}"
	return []string{base + ":log", base + ":pause"}
}

// admitScript admits one request if the key is not paused and fewer than limit requests were admitted
// within the window. It returns 0 when admitted, else the microseconds to wait before trying again.
var admitScript = redis.NewScript(`
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000000 + tonumber(t[2])
local paused = redis.call('PTTL', KEYS[2])
if paused > 0 then
  return paused * 1000
end
local limit = tonumber(ARGV[1])
local window = tonumber(ARGV[2])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now - window)
local n = redis.call('ZCARD', KEYS[1])
if n < limit then
  redis.call('ZADD', KEYS[1], now, ARGV[3])
  redis.call('PEXPIRE', KEYS[1], math.ceil(window / 1000) + 1000)
  return 0
end
local e = redis.call('ZRANGE', KEYS[1], n - limit, n - limit, 'WITHSCORES')
local wait = tonumber(e[2]) + window - now
if wait < 1 then
  wait = 1
end
return wait
`)

// sentScript moves an admitted request's entry to ARGV[2] microseconds before now (the Redis server's
// clock, so replicas' clocks do not matter), never earlier than it was, and keeps the log alive for a
// window from there. An entry already dropped (held up longer than the window, or lost with Redis's
// data) is put back when its send still lies within the window. ARGV: member, microseconds ago, window
// in microseconds.
var sentScript = redis.NewScript(`
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000000 + tonumber(t[2])
local at = now - tonumber(ARGV[2])
local window = tonumber(ARGV[3])
local cur = redis.call('ZSCORE', KEYS[1], ARGV[1])
if (cur and tonumber(cur) < at) or (not cur and at > now - window) then
  redis.call('ZADD', KEYS[1], at, ARGV[1])
  redis.call('PEXPIRE', KEYS[1], math.ceil(window / 1000) + 1000)
end
return 0
`)

// pauseScript extends (never shortens) the pause of a key to ARGV[1] milliseconds from now.
var pauseScript = redis.NewScript(`
local ms = tonumber(ARGV[1])
if redis.call('PTTL', KEYS[1]) < ms then
  redis.call('SET', KEYS[1], '1', 'PX', ms)
end
return 0
`)

// Ticket is one admitted request, for Sent.
type Ticket struct {
	key    string
	member string
	slot   time.Time // the Local entry; zero without Local
}

// Allow tries to admit one request for key now. It returns 0 when admitted, else how long to wait
// before trying again (nothing is consumed then).
func (l *Limiter) Allow(ctx context.Context, key string) (time.Duration, error) {
	_, wait, err := l.reserve(ctx, key)
	return wait, err
}

func (l *Limiter) reserve(ctx context.Context, key string) (Ticket, time.Duration, error) {
	span := l.cfg.Window + l.cfg.Margin
	t := Ticket{key: key, member: member()}
	if l.cfg.Local != nil {
		var wait time.Duration
		if t.slot, wait = l.cfg.Local.reserve(l.cfg.Prefix+key, l.cfg.Limit, span, time.Now()); wait > 0 {
			return Ticket{}, wait, nil
		}
	}
	us, err := admitScript.Run(ctx, l.rdb, l.keys(key), l.cfg.Limit, span.Microseconds(), t.member).Int64()
	if err != nil || us > 0 {
		if l.cfg.Local != nil {
			l.cfg.Local.release(l.cfg.Prefix+key, t.slot)
		}
	}
	if err != nil {
		return Ticket{}, 0, fmt.Errorf("ratelimit: admit %s: %w", key, err)
	}
	if us > 0 {
		return Ticket{}, time.Duration(us) * time.Microsecond, nil
	}
	return t, 0, nil
}

// Wait blocks until one request for key is admitted, or ctx ends.
func (l *Limiter) Wait(ctx context.Context, key string) error {
	_, err := l.Admit(ctx, key)
	return err
}

// Admit blocks until one request for key is admitted, or ctx ends, and returns its ticket for Sent.
func (l *Limiter) Admit(ctx context.Context, key string) (Ticket, error) {
	for {
		t, wait, err := l.reserve(ctx, key)
		if err != nil {
			return Ticket{}, err
		}
		if wait == 0 {
			return t, nil
		}
		timer := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			timer.Stop()
			return Ticket{}, fmt.Errorf("ratelimit: wait %s: %w", key, ctx.Err())
		case <-timer.C:
		}
	}
}

// Sent records that the admitted request went out at at (its bytes were written then): its entry moves
// from the admission to at, never earlier, so a request held up after admission (a loaded host, a slow
// dial or write) counts in the windows in which the CRM saw it, and the admissions after it wait for
// it. Moving entries later only ever admits less. If Sent fails the admission time stays, which is what
// the limiter counted before.
func (l *Limiter) Sent(ctx context.Context, t Ticket, at time.Time) error {
	if t.member == "" {
		return nil
	}
	span := l.cfg.Window + l.cfg.Margin
	if l.cfg.Local != nil && !t.slot.IsZero() {
		l.cfg.Local.move(l.cfg.Prefix+t.key, t.slot, at, span, time.Now())
	}
	ago := max(time.Since(at), 0)
	if err := sentScript.Run(ctx, l.rdb, l.keys(t.key)[:1], t.member, ago.Microseconds(), span.Microseconds()).Err(); err != nil {
		return fmt.Errorf("ratelimit: sent %s: %w", t.key, err)
	}
	return nil
}

// Pause stops admissions for key on every replica until until (a 429's Retry-After). A pause already
// reaching further is kept.
func (l *Limiter) Pause(ctx context.Context, key string, until time.Time) error {
	ms := time.Until(until).Milliseconds()
	if ms <= 0 {
		return nil
	}
	if err := pauseScript.Run(ctx, l.rdb, l.keys(key)[1:], ms).Err(); err != nil {
		return fmt.Errorf("ratelimit: pause %s: %w", key, err)
	}
	return nil
}

// PausedUntil reports when the pause of key ends; the zero time when it is not paused.
func (l *Limiter) PausedUntil(ctx context.Context, key string) (time.Time, error) {
	c, ok := l.rdb.(interface {
		PTTL(ctx context.Context, key string) *redis.DurationCmd
	})
	if !ok {
		return time.Time{}, errors.New("ratelimit: paused until: client cannot run PTTL")
	}
	d, err := c.PTTL(ctx, l.keys(key)[1]).Result()
	if err != nil {
		return time.Time{}, fmt.Errorf("ratelimit: paused until %s: %w", key, err)
	}
	if d <= 0 {
		return time.Time{}, nil
	}
	return time.Now().Add(d), nil
}

// member is a unique sorted-set member: two requests in the same microsecond must both count.
func member() string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return strconv.FormatInt(time.Now().UnixNano(), 36) + hex.EncodeToString(b[:])
}

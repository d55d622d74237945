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
// host, the write and a network hop. So a request admitted with Admit is pending: it counts in every
// window from its admission until Sent says when it actually went out, and from then on it counts at
// that moment. However long a request is held up after admission, the requests admitted after it wait
// for it, in the windows where the CRM saw it. Margin widens the window slightly for what remains (the
// network, the CRM's own clock), so that jitter cannot squeeze Limit+1 requests into one window as the
// CRM sees it.
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
	// Margin is added to Window when admitting (see the package doc); default Window/8, at least 100 ms.
	// A request counts from when its bytes went out (Sent), so the margin only covers what follows: the
	// network and the moment the CRM's server reads the clock, which on a loaded 2-core machine lagged a
	// handler by up to ~100 ms. A quarter of the window held a 45/s destination to 36 req/s.
	// A negative Margin means none.
	Margin time.Duration
	// InFlight is the longest a request admitted with Admit can take to go out (its request timeout);
	// default 30 s. A pending request that Sent never reports (its process died) stops counting once even
	// a send at that last moment would have left the window.
	InFlight time.Duration
	// Local, when set, also holds this process's own admissions (share one Local across every Limiter of
	// the process). Redis is the shared truth, but a Redis restart without persistence forgets the log;
	// Redis admits nothing for a window after it starts (see admitScript), which covers the requests
	// every replica sent before the restart, and Local also covers this process's requests still in
	// flight across it.
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
		cfg.Margin = max(cfg.Window/8, 100*time.Millisecond)
	}
	if cfg.Margin < 0 {
		cfg.Margin = 0
	}
	if cfg.InFlight <= 0 {
		cfg.InFlight = 30 * time.Second
	}
	if cfg.Prefix == "" {
		cfg.Prefix = "leadgate:ratelimit:"
	}
	return &Limiter{rdb: rdb, cfg: cfg}, nil
}

// Config returns the effective configuration.
func (l *Limiter) Config() Config { return l.cfg }

// keys returns the log, pause, pending, epoch and hold keys of a destination; the hash tag keeps them in
// one cluster slot. The log holds requests by when they went out, pending ones by when they were
// admitted; the epoch is the replication id of the server that last admitted, the hold a failover's.
func (l *Limiter) keys(key string) []string {
	base := l.cfg.Prefix + "{" + key + "}"
	return []string{base + ":log", base + ":pause", base + ":pending", base + ":epoch", base + ":hold"}
}

// pendingPoll is how often a caller waiting only on pending requests asks again: when they went out is
// not known until their answers come back.
const pendingPoll = 50 * time.Millisecond

// admitScript admits one request if the key is not paused and fewer than limit requests went out within
// the window or are still pending. It returns 0 when admitted, else the microseconds to wait before
// trying again. ARGV: limit, window, member, how long a pending entry counts at most, 1 to admit as
// pending (else as sent now), the poll interval (all times in microseconds).
//
// Nothing is admitted until the Redis server has been up for a whole window: a restart without
// persistence forgets every replica's log, and the requests they sent just before it would otherwise
// not count. uptime_in_seconds is the difference of two whole-second clocks (now and the start, each
// truncated), so it can run up to a second ahead of the true uptime: a server started at 10.9 s reports
// 1 at 11.0 s. The hold therefore lasts until uptime_in_seconds - 1 covers the window, between one window
// and a window plus a second. A server that refuses INFO (renamed away on some hosted Redis) gets no
// hold; each process's Local still covers its own requests.
//
// A replica promoted by a failover (Sentinel, Cluster) has been up for long, but replication is
// asynchronous: the last entries its old master admitted may never have reached it. Each admission
// remembers the server's replication id (master_replid, new at every promotion) in the epoch key; when
// the server's id differs from the remembered one, nothing is admitted for a window (the hold key), which
// covers every request its old master saw go out, however far the replica lagged. A server without a
// remembered id holds too when it was ever promoted (master_replid2 set): the epoch may be one of the
// writes that did not arrive. Requests still pending at the failover are reinstated by Sent when they
// are answered, and each process's Local counts its own meanwhile.
//
// The wait is until the (n-limit+1)th entry can leave the window: a sent one a window after it went
// out, a pending one no sooner than a window after its admission, and never before the next poll.
var admitScript = redis.NewScript(`
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000000 + tonumber(t[2])
local paused = redis.call('PTTL', KEYS[2])
if paused > 0 then
  return paused * 1000
end
local limit = tonumber(ARGV[1])
local window = tonumber(ARGV[2])
local inflight = tonumber(ARGV[4])
local info = redis.pcall('INFO', 'server')
local up = type(info) == 'string' and tonumber(string.match(info, 'uptime_in_seconds:(%d+)'))
if up and (up - 1) * 1000000 < window then
  return window - (up - 1) * 1000000
end
local repl = redis.pcall('INFO', 'replication')
local id = type(repl) == 'string' and string.match(repl, 'master_replid:(%x+)')
if id then
  local seen = redis.call('GET', KEYS[4])
  if seen ~= id then
    local id2 = string.match(repl, 'master_replid2:(%x+)')
    if seen or (id2 and id2 ~= string.rep('0', #id2)) then
      redis.call('SET', KEYS[5], '1', 'PX', math.ceil(window / 1000))
    end
    redis.call('SET', KEYS[4], id)
  end
  local held = redis.call('PTTL', KEYS[5])
  if held > 0 then
    return held * 1000
  end
end
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now - window)
redis.call('ZREMRANGEBYSCORE', KEYS[3], '-inf', now - inflight - window)
if redis.call('ZSCORE', KEYS[3], ARGV[3]) or redis.call('ZSCORE', KEYS[1], ARGV[3]) then
  return 0 -- a resend of an admission that already went through (the client lost the first answer)
end
local sent = redis.call('ZCARD', KEYS[1])
local pending = redis.call('ZCARD', KEYS[3])
if sent + pending < limit then
  if ARGV[5] == '1' then
    redis.call('ZADD', KEYS[3], now, ARGV[3])
    redis.call('PEXPIRE', KEYS[3], math.ceil((inflight + window) / 1000) + 1000)
  else
    redis.call('ZADD', KEYS[1], now, ARGV[3])
    redis.call('PEXPIRE', KEYS[1], math.ceil(window / 1000) + 1000)
  end
  return 0
end
local k = sent + pending - limit
local free = {}
local e = redis.call('ZRANGE', KEYS[1], 0, k, 'WITHSCORES')
for i = 2, #e, 2 do
  free[#free + 1] = tonumber(e[i]) + window
end
e = redis.call('ZRANGE', KEYS[3], 0, k, 'WITHSCORES')
for i = 2, #e, 2 do
  free[#free + 1] = math.max(tonumber(e[i]) + window, now + tonumber(ARGV[6]))
end
table.sort(free)
local wait = free[k + 1] - now
if wait < 1 then
  wait = 1
end
return wait
`)

// sentScript records that a request went out ARGV[2] microseconds before now (the Redis server's clock,
// so replicas' clocks do not matter): a pending entry leaves the pending set for the log at that moment,
// never earlier than its admission; an entry already in the log moves there, never earlier than it
// was. An entry found in neither (its pending time ran out, or Redis lost its data) is put back when its
// send still lies within the window. ARGV: member, microseconds ago, window in microseconds.
var sentScript = redis.NewScript(`
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000000 + tonumber(t[2])
local at = now - tonumber(ARGV[2])
local window = tonumber(ARGV[3])
local admitted = redis.call('ZSCORE', KEYS[2], ARGV[1])
if admitted then
  redis.call('ZREM', KEYS[2], ARGV[1])
  at = math.max(at, tonumber(admitted))
end
local cur = redis.call('ZSCORE', KEYS[1], ARGV[1])
if (cur and tonumber(cur) < at) or (not cur and at > now - window) then
  redis.call('ZADD', KEYS[1], at, ARGV[1])
  redis.call('PEXPIRE', KEYS[1], math.ceil(window / 1000) + 1000)
end
return 0
`)

// forgetScript removes an admission whose ticket was never handed out. KEYS: log, pause, pending.
var forgetScript = redis.NewScript(`
redis.call('ZREM', KEYS[1], ARGV[1])
redis.call('ZREM', KEYS[3], ARGV[1])
return 0
`)

// forgetTimeout bounds forgetScript after a failed admission.
const forgetTimeout = time.Second

// pauseScript extends (never shortens) the pause of a key to ARGV[1] milliseconds from now.
var pauseScript = redis.NewScript(`
local ms = tonumber(ARGV[1])
if redis.call('PTTL', KEYS[1]) < ms then
  redis.call('SET', KEYS[1], '1', 'PX', ms)
end
return 0
`)

// Ticket is one request admitted with Admit, pending until Sent.
type Ticket struct {
	key    string
	member string
	slot   time.Time // the Local entry; zero without Local
}

// Allow tries to admit one request for key now, counted as going out at once (nothing reports when it
// did). It returns 0 when admitted, else how long to wait before trying again (nothing is consumed then).
func (l *Limiter) Allow(ctx context.Context, key string) (time.Duration, error) {
	_, wait, err := l.reserve(ctx, key, false)
	return wait, err
}

func (l *Limiter) reserve(ctx context.Context, key string, pending bool) (Ticket, time.Duration, error) {
	span := l.cfg.Window + l.cfg.Margin
	t := Ticket{key: key, member: member()}
	lim := localLimit{limit: l.cfg.Limit, span: span, inFlight: l.cfg.InFlight, poll: min(pendingPoll, span)}
	if l.cfg.Local != nil {
		var wait time.Duration
		if t.slot, wait = l.cfg.Local.reserve(l.cfg.Prefix+key, lim, pending, time.Now()); wait > 0 {
			return Ticket{}, wait, nil
		}
	}
	pend := "0"
	if pending {
		pend = "1"
	}
	us, err := admitScript.Run(ctx, l.rdb, l.keys(key), l.cfg.Limit, span.Microseconds(), t.member,
		l.cfg.InFlight.Microseconds(), pend, lim.poll.Microseconds()).Int64()
	if err != nil || us > 0 {
		if l.cfg.Local != nil {
			l.cfg.Local.release(l.cfg.Prefix+key, t.slot, pending)
		}
	}
	if err != nil {
		// The script may have run and admitted the member before the answer was lost (a read timeout, a
		// dropped connection): nobody holds its ticket, so it would count as pending for InFlight.
		forget, cancel := context.WithTimeout(context.WithoutCancel(ctx), forgetTimeout)
		defer cancel()
		_ = forgetScript.Run(forget, l.rdb, l.keys(key), t.member).Err() // best effort, like the admission
		return Ticket{}, 0, fmt.Errorf("ratelimit: admit %s: %w", key, err)
	}
	if us > 0 {
		return Ticket{}, time.Duration(us) * time.Microsecond, nil
	}
	return t, 0, nil
}

// Wait blocks until one request for key is admitted, or ctx ends; the request counts as going out at
// once. Use it where the request is sent right away (the sandbox, in process); use Admit for a request
// that still has a network to cross.
func (l *Limiter) Wait(ctx context.Context, key string) error {
	_, err := l.admit(ctx, key, false)
	return err
}

// Admit blocks until one request for key is admitted, or ctx ends, and returns its ticket. The request
// is pending until Sent reports when it went out (call Sent once it is answered or has failed): until
// then it counts in every window.
func (l *Limiter) Admit(ctx context.Context, key string) (Ticket, error) {
	return l.admit(ctx, key, true)
}

func (l *Limiter) admit(ctx context.Context, key string, pending bool) (Ticket, error) {
	for {
		t, wait, err := l.reserve(ctx, key, pending)
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

// Sent records that the admitted request went out at at (its bytes were written then): it stops being
// pending and counts from at, never earlier than its admission, so a request held up after admission (a
// loaded host, a slow write) counts in the windows in which the CRM saw it. A second Sent moves it only
// later. When the request failed without a known send time, pass the time of the failure. If Sent fails
// the request stays pending until its InFlight time runs out, which only ever admits less.
func (l *Limiter) Sent(ctx context.Context, t Ticket, at time.Time) error {
	if t.member == "" {
		return nil
	}
	span := l.cfg.Window + l.cfg.Margin
	if l.cfg.Local != nil && !t.slot.IsZero() {
		l.cfg.Local.sent(l.cfg.Prefix+t.key, t.slot, at, span, time.Now())
	}
	ago := max(time.Since(at), 0)
	keys := l.keys(t.key)
	if err := sentScript.Run(ctx, l.rdb, []string{keys[0], keys[2]}, t.member, ago.Microseconds(), span.Microseconds()).Err(); err != nil {
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

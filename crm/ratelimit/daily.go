package ratelimit

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"
)

// Daily paces a destination's requests against a daily quota (HubSpot per tier, GoHighLevel 200,000 a
// day per location), shared by every replica through Redis. Without it a backlog spends the day's quota
// at the burst rate and the destination is refused until the reset; with it backfill work (resyncs,
// imports) is spread over what is left of the day: its rate is the remaining quota, less a reserve kept
// for live leads, divided by the seconds until the reset. Live leads are not paced: they are admitted
// while the day has any quota left, and what they spend slows the backfill pace that follows.
//
// The clock is the caller's (Config.Now), not Redis's: the day boundary is the CRM's (midnight in the
// account's zone) and a pace over hours does not care about a replica's skew of milliseconds.
type Daily struct {
	rdb redis.Scripter
	cfg DailyConfig
}

// DailyConfig configures a Daily pacer.
type DailyConfig struct {
	Prefix string // Redis key prefix; default "leadgate:daily:"
	Limit  int    // requests allowed per day; must be > 0
	// Zone is where the CRM's day begins and ends (HubSpot: the account's time zone); default UTC.
	Zone *time.Location
	// Reserve is how much of each day's quota backfill work never spends, kept for live leads; default
	// Limit/10. A negative Reserve means none.
	Reserve int
	// Burst is how far backfill may run ahead of its pace, in requests (a sender's batch goes out at the
	// burst rate rather than one request per interval); default 10.
	Burst int
	Now   func() time.Time // default time.Now
}

// NewDaily returns a Daily pacer; cfg.Limit must be positive.
func NewDaily(rdb redis.Scripter, cfg DailyConfig) (*Daily, error) {
	if rdb == nil {
		return nil, errors.New("ratelimit: redis client is required")
	}
	if cfg.Limit <= 0 {
		return nil, fmt.Errorf("ratelimit: daily limit must be positive, got %d", cfg.Limit)
	}
	if cfg.Prefix == "" {
		cfg.Prefix = "leadgate:daily:"
	}
	if cfg.Zone == nil {
		cfg.Zone = time.UTC
	}
	if cfg.Reserve == 0 {
		cfg.Reserve = cfg.Limit / 10
	}
	cfg.Reserve = min(max(cfg.Reserve, 0), cfg.Limit)
	if cfg.Burst <= 0 {
		cfg.Burst = 10
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	return &Daily{rdb: rdb, cfg: cfg}, nil
}

// day returns the current day's label and when it ends.
func (d *Daily) day(now time.Time) (string, time.Time) {
	local := now.In(d.cfg.Zone)
	end := time.Date(local.Year(), local.Month(), local.Day()+1, 0, 0, 0, 0, d.cfg.Zone)
	return local.Format("2006-01-02"), end
}

// keys are the day's used count and the backfill pace (its due time in µs and the interval it was set
// with), in one cluster slot.
func (d *Daily) keys(key, day string) []string {
	base := d.cfg.Prefix + "{" + key + "}:" + day
	return []string{base + ":used", base + ":tat"}
}

// takeScript spends n requests of the day. ARGV: now (µs), the day's end (µs), limit, reserve, 1 for
// live work, burst (requests), n, mode ("take": admit or say how long to wait; "peek": only say how long;
// "spend": record n requests already sent, whatever the pace). It returns 0 when admitted, else the
// microseconds to wait. Backfill is a GCRA over the day: each admission moves the pace's due time on by
// one interval, (day's end - now) / what backfill may still spend (plus one). The slots already ahead are
// rescaled to the current interval, so the pace slows at once after live requests or a reported use spent
// part of the day's quota.
var takeScript = redis.NewScript(`
local now = tonumber(ARGV[1])
local dayend = tonumber(ARGV[2])
local limit = tonumber(ARGV[3])
local reserve = tonumber(ARGV[4])
local burst = tonumber(ARGV[6])
local n = tonumber(ARGV[7])
local mode = ARGV[8]
local used = tonumber(redis.call('GET', KEYS[1]) or '0')
local ttl = math.ceil((dayend - now) / 1000) + 3600000
local left = limit - used
if mode ~= 'spend' and left <= 0 then
  return math.max(dayend - now, 1)
end
if ARGV[5] == '1' then
  if mode ~= 'peek' then
    redis.call('INCRBY', KEYS[1], n)
    redis.call('PEXPIRE', KEYS[1], ttl)
  end
  return 0
end
local avail = left - reserve
if mode ~= 'spend' and avail <= 0 then
  return math.max(dayend - now, 1)
end
-- avail + 1: the last request the day allows goes before its end, not on the stroke of midnight
local interval = (dayend - now) / (math.max(avail, 0) + 1)
local pace = redis.call('HMGET', KEYS[2], 'tat', 'iv')
local ahead = 0
if pace[1] and tonumber(pace[1]) > now then
  ahead = (tonumber(pace[1]) - now) * interval / tonumber(pace[2])
end
if mode ~= 'spend' and ahead > interval * (burst - 1) then
  return math.max(math.ceil(ahead - interval * (burst - 1)), 1)
end
if mode == 'peek' then
  return 0
end
redis.call('HSET', KEYS[2], 'tat', string.format('%d', now + ahead + n * interval), 'iv', string.format('%.3f', interval))
redis.call('PEXPIRE', KEYS[2], ttl)
redis.call('INCRBY', KEYS[1], n)
redis.call('PEXPIRE', KEYS[1], ttl)
return 0
`)

// observeScript raises the day's used count to what the CRM reported (never lowers it: requests admitted
// since the answer was read are not in it). ARGV: used, ttl (ms).
var observeScript = redis.NewScript(`
local used = tonumber(redis.call('GET', KEYS[1]) or '0')
if tonumber(ARGV[1]) > used then
  redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
end
return 0
`)

// Take spends one request of key's day: live work whenever the day has quota left, backfill on its pace.
// It returns 0 when admitted, else how long to wait before asking again (nothing is spent then).
func (d *Daily) Take(ctx context.Context, key string, live bool) (time.Duration, error) {
	return d.run(ctx, key, live, 1, "take")
}

// Due is how long backfill (live false) or live work would wait now; nothing is spent.
func (d *Daily) Due(ctx context.Context, key string, live bool) (time.Duration, error) {
	return d.run(ctx, key, live, 1, "peek")
}

// Spend records n requests already sent (a batch's requests beyond the one Take admitted): they count
// in the day and, for backfill, move its pace on, whatever the pace said.
func (d *Daily) Spend(ctx context.Context, key string, n int, live bool) error {
	if n <= 0 {
		return nil
	}
	_, err := d.run(ctx, key, live, n, "spend")
	return err
}

func (d *Daily) run(ctx context.Context, key string, live bool, n int, mode string) (time.Duration, error) {
	now := d.cfg.Now()
	day, end := d.day(now)
	l := "0"
	if live {
		l = "1"
	}
	us, err := takeScript.Run(ctx, d.rdb, d.keys(key, day), now.UnixMicro(), end.UnixMicro(), d.cfg.Limit, d.cfg.Reserve, l, d.cfg.Burst,
		n, mode).Int64()
	if err != nil {
		return 0, fmt.Errorf("ratelimit: daily %s %s: %w", mode, key, err)
	}
	return time.Duration(us) * time.Microsecond, nil
}

// Wait blocks until Take admits one request, or ctx ends. Long waits (a spent day) end at ctx's deadline:
// the caller hands its work back rather than sleeping until the reset.
func (d *Daily) Wait(ctx context.Context, key string, live bool) error {
	for {
		wait, err := d.Take(ctx, key, live)
		if err != nil || wait == 0 {
			return err
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return fmt.Errorf("ratelimit: daily wait %s: %w", key, ctx.Err())
		case <-t.C:
		}
	}
}

// Observe records the quota the CRM reported left today (GoHighLevel's X-RateLimit-Daily-Remaining):
// requests other apps or replicas' lost counts spent show up there, and the pace follows them.
func (d *Daily) Observe(ctx context.Context, key string, remaining int) error {
	now := d.cfg.Now()
	day, end := d.day(now)
	ttl := end.Sub(now).Milliseconds() + time.Hour.Milliseconds()
	if err := observeScript.Run(ctx, d.rdb, d.keys(key, day)[:1], max(d.cfg.Limit-remaining, 0), ttl).Err(); err != nil {
		return fmt.Errorf("ratelimit: daily observe %s: %w", key, err)
	}
	return nil
}

// Used is how many requests of key's current day were spent (as counted here or reported, the larger).
func (d *Daily) Used(ctx context.Context, key string) (int, error) {
	day, _ := d.day(d.cfg.Now())
	c, ok := d.rdb.(interface {
		Get(ctx context.Context, key string) *redis.StringCmd
	})
	if !ok {
		return 0, errors.New("ratelimit: daily used: client cannot run GET")
	}
	n, err := c.Get(ctx, d.keys(key, day)[0]).Int()
	if errors.Is(err, redis.Nil) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("ratelimit: daily used %s: %w", key, err)
	}
	return n, nil
}

// Config returns the effective configuration.
func (d *Daily) Config() DailyConfig { return d.cfg }

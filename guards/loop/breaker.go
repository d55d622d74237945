package loop

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/leadgate/leadgate/guards/alert"
	"github.com/leadgate/leadgate/models"
)

// KindLoopSuspected is the dead-letter kind of an event held by a tripped breaker.
const KindLoopSuspected = models.KindLoopSuspected

// allowScript counts one applied event in a sliding window and trips the
// breaker when the window is full. KEYS: the window's sorted set, the trip
// flag. ARGV: now (ms), window (ms), max, member. It answers {allowed,
// count}; count -1 means "was tripped already".
var allowScript = redis.NewScript(`
if redis.call('EXISTS', KEYS[2]) == 1 then return {0, -1} end
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', tonumber(ARGV[1]) - tonumber(ARGV[2]))
local n = redis.call('ZCARD', KEYS[1])
if n >= tonumber(ARGV[3]) then
  redis.call('SET', KEYS[2], ARGV[1])
  return {0, n}
end
redis.call('ZADD', KEYS[1], tonumber(ARGV[1]), ARGV[4])
redis.call('PEXPIRE', KEYS[1], tonumber(ARGV[2]))
return {1, n + 1}
`)

// Breaker is the per-contact circuit breaker: more than BreakerMax applied
// events for one contact within BreakerWindow trip it. The sliding count
// lives in Redis (shared by every worker); the trip is recorded in Postgres
// with exactly one alert, and stays until an operator resets it.
type Breaker struct {
	Redis  redis.UniversalClient
	Store  *models.Store
	Prefix string // Redis key prefix, default "lg:loop:cb"
	Now    func() time.Time
}

// Decision is the breaker's answer for one event.
type Decision struct {
	// Allowed means: apply the event. Otherwise hold it as a loop_suspected
	// dead letter (Reason is the dead letter's reason).
	Allowed bool
	// Tripped is true for the one call that tripped the breaker.
	Tripped bool
	Count   int // events counted in the window, this one included
	Reason  string
}

// Allow counts an event about to be applied to contactID and says whether it
// may be. Call it only for events that will change the contact (not for
// echoes, duplicates or rejects). The call that trips the breaker records it
// in Postgres and writes one alert to the outbox.
func (b *Breaker) Allow(ctx context.Context, workspaceID int64, contactID string, s models.LoopSettings) (Decision, error) {
	s = s.WithDefaults()
	if s.BreakerDisabled || contactID == "" {
		return Decision{Allowed: true}, nil
	}
	now := b.now()
	member := fmt.Sprintf("%d-%s", now.UnixNano(), randomHex())
	res, err := allowScript.Run(ctx, b.Redis, []string{b.windowKey(workspaceID, contactID), b.tripKey(workspaceID, contactID)},
		now.UnixMilli(), s.BreakerWindow().Milliseconds(), s.BreakerMax, member).Int64Slice()
	if err != nil {
		return Decision{}, fmt.Errorf("loop: breaker count: %w", err)
	}
	allowed, count := res[0] == 1, int(res[1])
	if allowed {
		return Decision{Allowed: true, Count: count}, nil
	}
	reason := fmt.Sprintf("loop suspected: more than %d applied events for this contact within %s; events are held until an operator resets the breaker",
		s.BreakerMax, s.BreakerWindow())
	if count < 0 {
		return Decision{Reason: reason}, nil
	}
	tripped, err := b.trip(ctx, workspaceID, contactID, reason, s, count)
	if err != nil {
		// Without the durable record there is no alert: undo the flag so the
		// retried event trips the breaker again.
		_ = b.Redis.Del(context.WithoutCancel(ctx), b.tripKey(workspaceID, contactID)).Err()
		return Decision{}, err
	}
	return Decision{Tripped: tripped, Count: count + 1, Reason: reason}, nil
}

// trip records the trip and its alert in one transaction.
func (b *Breaker) trip(ctx context.Context, workspaceID int64, contactID, reason string, s models.LoopSettings, count int) (bool, error) {
	var tripped bool
	err := b.Store.Tx(ctx, func(tx *models.Store) error {
		var n int
		var err error
		if tripped, n, err = tx.BreakerTrip(ctx, workspaceID, contactID, reason); err != nil || !tripped {
			return err
		}
		cid := contactID
		dedup := fmt.Sprintf("loop_suspected:%d:%s:%d", workspaceID, contactID, n)
		_, err = alert.Enqueue(ctx, tx, workspaceID, &cid, "alert:"+dedup, alert.Payload{
			Type: "loop_suspected", Action: alert.ActionTrigger, Severity: alert.SeverityCritical, DedupKey: dedup,
			Title: "Loop suspected: contact " + contactID + " is on hold",
			Text: fmt.Sprintf("%d applied events for one contact within %s (limit %d). Its further events are held as %s dead letters "+
				"until an operator resets the circuit breaker. Check the CRM's workflows for one that reacts to leadgate's writes.",
				count+1, s.BreakerWindow(), s.BreakerMax, KindLoopSuspected),
			Details: map[string]any{"contact_id": contactID, "events_in_window": count + 1, "limit": s.BreakerMax, "window_seconds": s.BreakerWindowSeconds, "trip": n},
		})
		return err
	})
	if err != nil {
		return false, fmt.Errorf("loop: record breaker trip: %w", err)
	}
	return tripped, nil
}

// Clear forgets a contact's count and trip flag in Redis. Call it after the
// reset is committed in Postgres (models.Store.BreakerResetRow).
func (b *Breaker) Clear(ctx context.Context, workspaceID int64, contactID string) error {
	if err := b.Redis.Del(ctx, b.windowKey(workspaceID, contactID), b.tripKey(workspaceID, contactID)).Err(); err != nil {
		return fmt.Errorf("loop: clear breaker: %w", err)
	}
	return nil
}

func (b *Breaker) prefix() string {
	if b.Prefix != "" {
		return b.Prefix
	}
	return "lg:loop:cb"
}

// windowKey and tripKey share a hash tag (the contact), so allowScript and Clear stay within one
// Redis Cluster slot.
func (b *Breaker) windowKey(ws int64, contactID string) string {
	return fmt.Sprintf("%s:{%d:%s}:n", b.prefix(), ws, contactID)
}

func (b *Breaker) tripKey(ws int64, contactID string) string {
	return fmt.Sprintf("%s:{%d:%s}:trip", b.prefix(), ws, contactID)
}

func (b *Breaker) now() time.Time {
	if b.Now != nil {
		return b.Now()
	}
	return time.Now()
}

func randomHex() string {
	var buf [6]byte
	_, _ = rand.Read(buf[:])
	return hex.EncodeToString(buf[:])
}

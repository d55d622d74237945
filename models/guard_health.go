package models

import (
	"context"
	"database/sql"
	"fmt"
	"time"
)

// LastApplyAt is when an event of the workspace (of one source when
// sourceID is not 0) was last applied successfully (applied or unchanged);
// zero when never.
func (s *Store) LastApplyAt(ctx context.Context, workspaceID, sourceID int64) (time.Time, error) {
	var at sql.NullTime
	q := `SELECT max(processed_at) FROM events WHERE workspace_id = ? AND status IN ('applied', 'unchanged')`
	args := []any{workspaceID}
	if sourceID != 0 {
		q += ` AND source_id = ?`
		args = append(args, sourceID)
	}
	if err := s.db.WithContext(ctx).Raw(q, args...).Scan(&at).Error; err != nil {
		return time.Time{}, fmt.Errorf("models: last apply: %w", err)
	}
	return at.Time, nil // zero when NULL (never)
}

// LastCRMWriteAt is when a CRM write (an outbox crm_upsert) of the workspace
// was last sent; zero when never.
func (s *Store) LastCRMWriteAt(ctx context.Context, workspaceID int64) (time.Time, error) {
	var at sql.NullTime
	err := s.db.WithContext(ctx).Raw(`SELECT max(sent_at) FROM outbox WHERE workspace_id = ? AND kind = 'crm_upsert' AND sent_at IS NOT NULL`,
		workspaceID).Scan(&at).Error
	if err != nil {
		return time.Time{}, fmt.Errorf("models: last crm write: %w", err)
	}
	return at.Time, nil // zero when NULL (never)
}

// DailyVolume is the average number of events received per day over the
// week before now (of one source when sourceID is not 0).
func (s *Store) DailyVolume(ctx context.Context, workspaceID, sourceID int64, now time.Time) (float64, error) {
	var n int64
	q := s.db.WithContext(ctx).Table("events").Where("workspace_id = ? AND received_at > ?", workspaceID, now.Add(-7*24*time.Hour))
	if sourceID != 0 {
		q = q.Where("source_id = ?", sourceID)
	}
	if err := q.Count(&n).Error; err != nil {
		return 0, fmt.Errorf("models: daily volume: %w", err)
	}
	return float64(n) / 7, nil
}

// HealthMeasures are the Postgres-side health metrics of one workspace.
// A nil pointer means "no data" (no pending rows, too few events).
type HealthMeasures struct {
	SyncLag           *float64 // seconds: oldest pending crm_upsert
	OutboxOldest      *float64 // seconds: oldest pending outbox row of any kind
	DeadLettersOpen   float64
	DeadLettersOldest *float64 // seconds
	RejectionRate     *float64 // percent of the last hour's accepted events (the latest RejectionWindow at most), nil under minSample
}

// HealthMeasure reads a workspace's health metrics at now. The rejection
// rate needs at least minSample events in the last hour.
func (s *Store) HealthMeasure(ctx context.Context, workspaceID int64, now time.Time, minSample int) (HealthMeasures, error) {
	var m HealthMeasures
	db := s.db.WithContext(ctx)
	var row struct {
		SyncOldest   *time.Time
		OutboxOldest *time.Time
	}
	if err := db.Raw(healthOutboxSQL, workspaceID).Scan(&row).Error; err != nil {
		return m, fmt.Errorf("models: health outbox: %w", err)
	}
	m.SyncLag, m.OutboxOldest = ageOf(row.SyncOldest, now), ageOf(row.OutboxOldest, now)
	var dl struct {
		N      int64
		Oldest *time.Time
	}
	if err := db.Raw(`SELECT count(*) AS n, min(created_at) AS oldest FROM dead_letters WHERE workspace_id = ? AND status = 'open'`,
		workspaceID).Scan(&dl).Error; err != nil {
		return m, fmt.Errorf("models: health dead letters: %w", err)
	}
	m.DeadLettersOpen, m.DeadLettersOldest = float64(dl.N), ageOf(dl.Oldest, now)
	var ev struct {
		Total    int64
		Rejected int64
	}
	if err := db.Raw(healthRejectionsSQL, workspaceID, now.Add(-time.Hour), RejectionWindow).Scan(&ev).Error; err != nil {
		return m, fmt.Errorf("models: health rejections: %w", err)
	}
	if ev.Total > 0 && ev.Total >= int64(minSample) {
		rate := float64(ev.Rejected) * 100 / float64(ev.Total)
		m.RejectionRate = &rate
	}
	return m, nil
}

// RejectionWindow is the most events the rejection rate reads: the rate is over the last hour's events,
// or over the latest RejectionWindow of them when the hour holds more.
const RejectionWindow = 10000

// healthRejectionsSQL counts the rejected among the last hour's events, the latest RejectionWindow at most. Counting
// the whole hour read every event of it once a minute (2.2 s at 317,000 events); the latest 10,000 say
// as much about the share rejected now, and read in a few milliseconds however busy the hour was.
const healthRejectionsSQL = `SELECT count(*) AS total, count(*) FILTER (WHERE status = 'rejected') AS rejected FROM (
		SELECT status FROM events WHERE workspace_id = ? AND received_at > ? ORDER BY received_at DESC LIMIT ?) e`

// healthOutboxSQL reads the ages of a workspace's unfinished outbox rows (outbox_unfinished holds them).
const healthOutboxSQL = `SELECT min(created_at) FILTER (WHERE kind = 'crm_upsert') AS sync_oldest, min(created_at) AS outbox_oldest
	FROM outbox WHERE workspace_id = ? AND status IN ('pending', 'retrying', 'held')`

func ageOf(t *time.Time, now time.Time) *float64 {
	if t == nil {
		return nil
	}
	age := now.Sub(*t).Seconds()
	if age < 0 {
		age = 0
	}
	return &age
}

// HeartbeatTick records the scheduler's tick at now and returns the
// previous one (zero on the first tick ever).
func (s *Store) HeartbeatTick(ctx context.Context, now time.Time) (time.Time, error) {
	var prev time.Time
	err := s.Tx(ctx, func(tx *Store) error {
		var at []time.Time
		if err := tx.db.WithContext(ctx).Raw(`SELECT last_tick_at FROM guard_heartbeat WHERE id = 1 FOR UPDATE`).Scan(&at).Error; err != nil {
			return err
		}
		if len(at) == 1 {
			prev = at[0]
		}
		return tx.db.WithContext(ctx).Exec(`INSERT INTO guard_heartbeat (id, last_tick_at) VALUES (1, ?)
			ON CONFLICT (id) DO UPDATE SET last_tick_at = GREATEST(guard_heartbeat.last_tick_at, EXCLUDED.last_tick_at)`, now).Error
	})
	if err != nil {
		return time.Time{}, fmt.Errorf("models: heartbeat tick: %w", err)
	}
	return prev, nil
}

// HeartbeatPingResult records the outcome of the last heartbeat pings.
func (s *Store) HeartbeatPingResult(ctx context.Context, errText string) error {
	if err := s.db.WithContext(ctx).Exec(`UPDATE guard_heartbeat SET last_ping_error = ? WHERE id = 1`, errText).Error; err != nil {
		return fmt.Errorf("models: heartbeat ping result: %w", err)
	}
	return nil
}

package models

import (
	"context"
	"fmt"
	"time"
)

// Final statuses of alert outbox rows.
const (
	AlertSent       = "sent"
	AlertFailed     = "failed"     // retries exhausted or permanent error: a dead letter holds it
	AlertNoChannel  = "no_channel" // the workspace had no enabled channel
	AlertSuppressed = "suppressed" // covered by another alert (a loop_suspected dead letter: the breaker alerted)
)

// AlertClaim leases up to limit due alert rows for lease (another relay
// skips them until then) and returns them oldest first.
func (s *Store) AlertClaim(ctx context.Context, now time.Time, lease time.Duration, limit int) ([]OutboxRow, error) {
	var out []OutboxRow
	err := s.db.WithContext(ctx).Raw(`UPDATE outbox SET next_attempt_at = ?
		WHERE id IN (SELECT id FROM outbox WHERE kind = 'alert' AND status = 'pending' AND next_attempt_at <= ?
			ORDER BY next_attempt_at, id LIMIT ? FOR UPDATE SKIP LOCKED)
		RETURNING *`, now.Add(lease), now, limit).Scan(&out).Error
	if err != nil {
		return nil, fmt.Errorf("models: claim alerts: %w", err)
	}
	return out, nil
}

// AlertDelivered returns the channels an alert row already reached.
func (s *Store) AlertDelivered(ctx context.Context, outboxID int64) (map[int64]bool, error) {
	var ids []int64
	if err := s.db.WithContext(ctx).Raw(`SELECT channel_id FROM alert_deliveries WHERE outbox_id = ? AND status = 'sent'`, outboxID).Scan(&ids).Error; err != nil {
		return nil, fmt.Errorf("models: alert deliveries %d: %w", outboxID, err)
	}
	out := make(map[int64]bool, len(ids))
	for _, id := range ids {
		out[id] = true
	}
	return out, nil
}

// AlertDeliveryRecord records one channel's attempt ("" errText = sent).
func (s *Store) AlertDeliveryRecord(ctx context.Context, outboxID, channelID int64, errText string) error {
	status, sentAt := "sent", any(time.Now().UTC())
	if errText != "" {
		status, sentAt = "failed", nil
	}
	err := s.db.WithContext(ctx).Exec(`INSERT INTO alert_deliveries (outbox_id, channel_id, status, attempts, last_error, sent_at)
		VALUES (?, ?, ?, 1, ?, ?)
		ON CONFLICT (outbox_id, channel_id) DO UPDATE SET status = EXCLUDED.status, attempts = alert_deliveries.attempts + 1,
			last_error = EXCLUDED.last_error, sent_at = EXCLUDED.sent_at`, outboxID, channelID, status, errText, sentAt).Error
	if err != nil {
		return fmt.Errorf("models: record alert delivery: %w", err)
	}
	return nil
}

// AlertFinish closes an alert row with a final status.
func (s *Store) AlertFinish(ctx context.Context, id int64, status, lastErr string, attempts int) error {
	var sentAt any
	if status == AlertSent {
		sentAt = time.Now().UTC()
	}
	err := s.db.WithContext(ctx).Exec(`UPDATE outbox SET status = ?, last_error = ?, attempts = ?, sent_at = ? WHERE id = ?`,
		status, lastErr, attempts, sentAt, id).Error
	if err != nil {
		return fmt.Errorf("models: finish alert %d: %w", id, err)
	}
	return nil
}

// AlertRetryAt schedules the next attempt of an alert row.
func (s *Store) AlertRetryAt(ctx context.Context, id int64, attempts int, next time.Time, lastErr string) error {
	err := s.db.WithContext(ctx).Exec(`UPDATE outbox SET attempts = ?, next_attempt_at = ?, last_error = ? WHERE id = ?`,
		attempts, next, lastErr, id).Error
	if err != nil {
		return fmt.Errorf("models: retry alert %d: %w", id, err)
	}
	return nil
}

// AlertRows lists a workspace's alert outbox rows newest first (tests, UI).
func (s *Store) AlertRows(ctx context.Context, workspaceID int64, limit int) ([]OutboxRow, error) {
	var out []OutboxRow
	if err := s.db.WithContext(ctx).Where("workspace_id = ? AND kind = 'alert'", workspaceID).Order("id DESC").Limit(limit).Find(&out).Error; err != nil {
		return nil, fmt.Errorf("models: alert rows: %w", err)
	}
	return out, nil
}

package models

import (
	"context"
	"fmt"
	"time"
)

// SideEffectClaim leases up to limit due side_effect outbox rows: their next_attempt_at moves lease ahead,
// so a crashed worker's rows come back by themselves and no two workers hold the same row.
func (s *Store) SideEffectClaim(ctx context.Context, limit int, lease time.Duration) ([]OutboxRow, error) {
	var out []OutboxRow
	err := s.db.WithContext(ctx).Raw(`UPDATE outbox o SET next_attempt_at = now() + make_interval(secs => ?)
		FROM (SELECT id FROM outbox WHERE kind = 'side_effect' AND status = 'pending' AND next_attempt_at <= now()
		      ORDER BY id LIMIT ? FOR UPDATE SKIP LOCKED) c
		WHERE o.id = c.id RETURNING o.*`, lease.Seconds(), limit).Scan(&out).Error
	if err != nil {
		return nil, fmt.Errorf("models: claim side effects: %w", err)
	}
	return out, nil
}

// SideEffectDone marks a side effect delivered (status sent) or skipped (no target), with a note.
func (s *Store) SideEffectDone(ctx context.Context, id int64, status, note string) error {
	err := s.db.WithContext(ctx).Exec(`UPDATE outbox SET status = ?, sent_at = now(), attempts = attempts + 1, last_error = ? WHERE id = ?`,
		status, syncTruncate(note), id).Error
	if err != nil {
		return fmt.Errorf("models: side effect %d done: %w", id, err)
	}
	return nil
}

// SideEffectRetry counts a failed delivery and makes the row due again at at.
func (s *Store) SideEffectRetry(ctx context.Context, id int64, at time.Time, lastError string) error {
	err := s.db.WithContext(ctx).Exec(`UPDATE outbox SET attempts = attempts + 1, next_attempt_at = ?, last_error = ? WHERE id = ?`,
		at, syncTruncate(lastError), id).Error
	if err != nil {
		return fmt.Errorf("models: side effect %d retry: %w", id, err)
	}
	return nil
}

// SideEffectDeadLetter gives up on a side effect: a side_effect_failed dead letter holding the row's
// payload, and the row marked dead, in one transaction.
func (s *Store) SideEffectDeadLetter(ctx context.Context, row OutboxRow, reason string) (int64, error) {
	var id int64
	err := s.Tx(ctx, func(tx *Store) error {
		var err error
		id, err = tx.DeadLetterAdd(ctx, DeadLetter{WorkspaceID: row.WorkspaceID, Kind: "side_effect_failed", Reason: syncTruncate(reason),
			ContactID: row.ContactID, OutboxID: &row.ID, Payload: row.Payload, Attempts: row.Attempts + 1})
		if err != nil {
			return err
		}
		return tx.db.WithContext(ctx).Exec(`UPDATE outbox SET status = 'dead', attempts = attempts + 1, last_error = ? WHERE id = ?`,
			syncTruncate(reason), row.ID).Error
	})
	if err != nil {
		return 0, fmt.Errorf("models: side effect dead letter: %w", err)
	}
	return id, nil
}

// SideEffectWebhook is a workspace's generic side-effect endpoint.
type SideEffectWebhook struct {
	ID          int64
	WorkspaceID int64
	URL         string
	SecretEnc   []byte
	Enabled     bool
	UpdatedAt   time.Time
}

// SideEffectWebhookGet returns a workspace's webhook (ErrNotFound when none).
func (s *Store) SideEffectWebhookGet(ctx context.Context, workspaceID int64) (SideEffectWebhook, error) {
	var w SideEffectWebhook
	err := s.db.WithContext(ctx).Where("workspace_id = ?", workspaceID).Take(&w).Error
	return w, syncNotFound(err, "side-effect webhook")
}

// SideEffectWebhookPut creates or replaces a workspace's webhook.
func (s *Store) SideEffectWebhookPut(ctx context.Context, w SideEffectWebhook) error {
	err := s.db.WithContext(ctx).Exec(`INSERT INTO side_effect_webhooks (workspace_id, url, secret_enc, enabled, updated_at) VALUES (?, ?, ?, ?, now())
		ON CONFLICT (workspace_id) DO UPDATE SET url = EXCLUDED.url, secret_enc = EXCLUDED.secret_enc, enabled = EXCLUDED.enabled, updated_at = now()`,
		w.WorkspaceID, w.URL, w.SecretEnc, w.Enabled).Error
	if err != nil {
		return fmt.Errorf("models: put side-effect webhook: %w", err)
	}
	return nil
}

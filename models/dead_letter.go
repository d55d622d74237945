package models

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"gorm.io/gorm"
)

// Dead-letter statuses.
const (
	DeadLetterOpen      = "open"
	DeadLetterReplayed  = "replayed"
	DeadLetterDiscarded = "discarded"
)

// DeadLetter is something quarantined or failed, kept for review.
type DeadLetter struct {
	ID          int64
	WorkspaceID int64
	Kind        string
	Reason      string
	Status      string
	EventID     *string `gorm:"type:uuid"`
	ContactID   *string `gorm:"type:uuid"`
	OutboxID    *int64
	SourceID    *int64
	Payload     json.RawMessage `gorm:"type:jsonb"`
	Attempts    int
	NextRetryAt *time.Time
	CreatedAt   time.Time
	ResolvedAt  *time.Time
	ResolvedBy  *string
	Resolution  *string
}

// DeadLetterAdd stores a dead letter and returns its id. An event has at most
// one open dead letter: a second one for the same event returns the first's id.
func (s *Store) DeadLetterAdd(ctx context.Context, d DeadLetter) (int64, error) {
	var id int64
	err := s.db.WithContext(ctx).Raw(`INSERT INTO dead_letters (workspace_id, kind, reason, event_id, contact_id, outbox_id, source_id, payload, attempts, next_retry_at)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
		ON CONFLICT (event_id) WHERE event_id IS NOT NULL AND status = 'open' DO UPDATE SET reason = EXCLUDED.reason
		RETURNING id`, d.WorkspaceID, d.Kind, d.Reason, d.EventID, d.ContactID, d.OutboxID, d.SourceID, d.Payload, d.Attempts, d.NextRetryAt).Scan(&id).Error
	if err != nil {
		return 0, fmt.Errorf("models: add dead letter: %w", err)
	}
	return id, nil
}

// DeadLetterFilter selects dead letters.
type DeadLetterFilter struct {
	WorkspaceID int64
	Status      string // "" = open
	Kind        string
	SourceID    int64
	OlderThan   time.Duration
}

// DeadLetterList returns dead letters newest first; Cursor is an id.
func (s *Store) DeadLetterList(ctx context.Context, f DeadLetterFilter, page Page) ([]DeadLetter, error) {
	status := f.Status
	if status == "" {
		status = DeadLetterOpen
	}
	q := s.db.WithContext(ctx).Where("workspace_id = ?", f.WorkspaceID).Order("id DESC").Limit(page.Limit)
	if status != "all" {
		q = q.Where("status = ?", status)
	}
	if f.Kind != "" {
		q = q.Where("kind = ?", f.Kind)
	}
	if f.SourceID != 0 {
		q = q.Where("source_id = ?", f.SourceID)
	}
	if f.OlderThan > 0 {
		q = q.Where("created_at < ?", time.Now().Add(-f.OlderThan))
	}
	if page.Cursor != "" {
		q = q.Where("id < ?", page.Cursor)
	}
	var out []DeadLetter
	if err := q.Find(&out).Error; err != nil {
		return nil, fmt.Errorf("models: list dead letters: %w", err)
	}
	return out, nil
}

// DeadLetterGet returns one dead letter of a workspace.
func (s *Store) DeadLetterGet(ctx context.Context, workspaceID, id int64) (DeadLetter, error) {
	var d DeadLetter
	err := s.db.WithContext(ctx).Where("workspace_id = ?", workspaceID).Take(&d, id).Error
	if errors.Is(err, gorm.ErrRecordNotFound) {
		return d, ErrNotFound
	}
	if err != nil {
		return d, fmt.Errorf("models: dead letter %d: %w", id, err)
	}
	return d, nil
}

// DeadLetterLock locks an open dead letter for resolution; ErrNotFound if it is not open.
func (s *Store) DeadLetterLock(ctx context.Context, workspaceID, id int64) (DeadLetter, error) {
	var d DeadLetter
	err := s.db.WithContext(ctx).Set("gorm:query_option", "FOR UPDATE").
		Raw(`SELECT * FROM dead_letters WHERE workspace_id = ? AND id = ? AND status = 'open' FOR UPDATE`, workspaceID, id).Scan(&d).Error
	if err != nil {
		return d, fmt.Errorf("models: lock dead letter %d: %w", id, err)
	}
	if d.ID == 0 {
		return d, ErrNotFound
	}
	return d, nil
}

// DeadLetterResolve closes a dead letter as replayed or discarded.
func (s *Store) DeadLetterResolve(ctx context.Context, id int64, status, by, resolution string) error {
	err := s.db.WithContext(ctx).Exec(`UPDATE dead_letters SET status = ?, resolved_at = now(), resolved_by = ?, resolution = ? WHERE id = ?`,
		status, by, resolution, id).Error
	if err != nil {
		return fmt.Errorf("models: resolve dead letter %d: %w", id, err)
	}
	return nil
}

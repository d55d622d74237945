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
	// EventIDs are the events the dead letter holds: its one event, or every
	// event a tripped loop breaker stopped for the contact (EventCount of them).
	EventIDs    UUIDs `gorm:"type:uuid[]"`
	EventCount  int
	LastSeenAt  time.Time
	BreakerTrip *int
}

// KindLoopSuspected is the kind of the dead letter a tripped loop breaker
// fills with the events it stops.
const KindLoopSuspected = "loop_suspected"

// HeldEvents returns the ids of the events the dead letter holds, oldest first.
func (d DeadLetter) HeldEvents() []string {
	if len(d.EventIDs) > 0 {
		return []string(d.EventIDs)
	}
	if d.EventID != nil {
		return []string{*d.EventID}
	}
	return nil
}

// DeadLetterAdd stores a dead letter and returns its id. An event has at most
// one open dead letter: a second one for the same event returns the first's id.
//
// A loop_suspected dead letter of a contact is one per breaker trip: a
// further event the breaker stops joins the open one (its count, its event
// ids, its last seen) instead of adding a row.
func (s *Store) DeadLetterAdd(ctx context.Context, d DeadLetter) (int64, error) {
	if d.Kind == KindLoopSuspected && d.ContactID != nil && d.EventID != nil {
		return s.deadLetterHold(ctx, d)
	}
	var id int64
	err := s.db.WithContext(ctx).Raw(`INSERT INTO dead_letters (workspace_id, kind, reason, event_id, contact_id, outbox_id, source_id, payload, attempts, next_retry_at, event_ids)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, CASE WHEN ?::uuid IS NULL THEN '{}'::uuid[] ELSE ARRAY[?::uuid] END)
		ON CONFLICT (event_id) WHERE event_id IS NOT NULL AND status = 'open' DO UPDATE SET reason = EXCLUDED.reason, last_seen_at = now()
		RETURNING id`, d.WorkspaceID, d.Kind, d.Reason, d.EventID, d.ContactID, d.OutboxID, d.SourceID, d.Payload, d.Attempts, d.NextRetryAt,
		d.EventID, d.EventID).Scan(&id).Error
	if err != nil {
		return 0, fmt.Errorf("models: add dead letter: %w", err)
	}
	return id, nil
}

// deadLetterHold files an event a tripped breaker stopped into the open
// dead letter of the contact's current trip, or opens it.
func (s *Store) deadLetterHold(ctx context.Context, d DeadLetter) (int64, error) {
	var id int64
	err := s.db.WithContext(ctx).Raw(`INSERT INTO dead_letters (workspace_id, kind, reason, event_id, contact_id, source_id, payload, attempts, event_ids, breaker_trip)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ARRAY[?::uuid],
			COALESCE((SELECT trips FROM circuit_breakers WHERE workspace_id = ? AND contact_id = ?), 0))
		ON CONFLICT (workspace_id, contact_id, breaker_trip) WHERE kind = 'loop_suspected' AND status = 'open' AND breaker_trip IS NOT NULL
		DO UPDATE SET last_seen_at = now(), reason = EXCLUDED.reason,
			event_count = dead_letters.event_count + CASE WHEN EXCLUDED.event_id = ANY(dead_letters.event_ids) THEN 0 ELSE 1 END,
			event_ids = CASE WHEN EXCLUDED.event_id = ANY(dead_letters.event_ids) THEN dead_letters.event_ids ELSE dead_letters.event_ids || EXCLUDED.event_id END
		RETURNING id`, d.WorkspaceID, d.Kind, d.Reason, d.EventID, d.ContactID, d.SourceID, d.Payload, d.Attempts, d.EventID,
		d.WorkspaceID, d.ContactID).Scan(&id).Error
	if err != nil {
		return 0, fmt.Errorf("models: hold event in the loop dead letter: %w", err)
	}
	return id, nil
}

// DeadLetterFilter selects dead letters.
type DeadLetterFilter struct {
	WorkspaceID int64         `json:"-"`
	Status      string        `json:"status,omitempty"` // "" = open
	Kind        string        `json:"kind,omitempty"`
	Reason      string        `json:"reason,omitempty"`
	ContactID   string        `json:"contact_id,omitempty"`
	SourceID    int64         `json:"source_id,omitempty"`
	OlderThan   time.Duration `json:"-"`
}

// where narrows q to the dead letters f selects.
func (f DeadLetterFilter) where(q *gorm.DB) *gorm.DB {
	status := f.Status
	if status == "" {
		status = DeadLetterOpen
	}
	q = q.Where("workspace_id = ?", f.WorkspaceID)
	if status != "all" {
		q = q.Where("status = ?", status)
	}
	if f.Kind != "" {
		q = q.Where("kind = ?", f.Kind)
	}
	if f.Reason != "" {
		q = q.Where("reason = ?", f.Reason)
	}
	if f.ContactID != "" {
		q = q.Where("contact_id = ?", f.ContactID)
	}
	if f.SourceID != 0 {
		q = q.Where("source_id = ?", f.SourceID)
	}
	if f.OlderThan > 0 {
		q = q.Where("created_at < ?", time.Now().Add(-f.OlderThan))
	}
	return q
}

// DeadLetterList returns dead letters newest first; Cursor is an id.
func (s *Store) DeadLetterList(ctx context.Context, f DeadLetterFilter, page Page) ([]DeadLetter, error) {
	q := f.where(s.db.WithContext(ctx).Model(&DeadLetter{})).Order("id DESC").Limit(page.Limit)
	if page.Cursor != "" {
		q = q.Where("id < ?", page.Cursor)
	}
	var out []DeadLetter
	if err := q.Find(&out).Error; err != nil {
		return nil, fmt.Errorf("models: list dead letters: %w", err)
	}
	return out, nil
}

// DeadLetterIDs returns the ids of up to limit dead letters f selects, oldest first.
func (s *Store) DeadLetterIDs(ctx context.Context, f DeadLetterFilter, limit int) ([]int64, error) {
	var ids []int64
	if err := f.where(s.db.WithContext(ctx).Model(&DeadLetter{})).Order("id").Limit(limit).Pluck("id", &ids).Error; err != nil {
		return nil, fmt.Errorf("models: dead letter ids: %w", err)
	}
	return ids, nil
}

// DeadLetterCount counts the dead letters f selects.
func (s *Store) DeadLetterCount(ctx context.Context, f DeadLetterFilter) (int64, error) {
	var n int64
	if err := f.where(s.db.WithContext(ctx).Model(&DeadLetter{})).Count(&n).Error; err != nil {
		return 0, fmt.Errorf("models: count dead letters: %w", err)
	}
	return n, nil
}

// DeadLetterGroup is the dead letters of one kind, reason and contact.
type DeadLetterGroup struct {
	Kind        string    `json:"kind"`
	Reason      string    `json:"reason"`
	ContactID   *string   `json:"contact_id"`
	DeadLetters int64     `json:"dead_letters"`
	Events      int64     `json:"events"`
	FirstSeen   time.Time `json:"first_seen"`
	LastSeen    time.Time `json:"last_seen"`
}

// DeadLetterGroups groups the dead letters f selects by kind, reason and
// contact, largest group first.
func (s *Store) DeadLetterGroups(ctx context.Context, f DeadLetterFilter, limit int) ([]DeadLetterGroup, error) {
	var out []DeadLetterGroup
	err := f.where(s.db.WithContext(ctx).Model(&DeadLetter{})).
		Select("kind, reason, contact_id, count(*) AS dead_letters, sum(event_count) AS events, min(created_at) AS first_seen, max(last_seen_at) AS last_seen").
		Group("kind, reason, contact_id").Order("events DESC, last_seen DESC").Limit(limit).Scan(&out).Error
	if err != nil {
		return nil, fmt.Errorf("models: group dead letters: %w", err)
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

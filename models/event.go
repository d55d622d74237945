package models

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"gorm.io/gorm"
)

// Event statuses. pending/waiting/retrying are unresolved; the rest are the
// outcomes of CONTRACT.md.
const (
	EventPending     = "pending"
	EventWaiting     = "waiting"
	EventRetrying    = "retrying"
	EventApplied     = "applied"
	EventUnchanged   = "unchanged"
	EventQuarantined = "quarantined"
	EventRejected    = "rejected"
	EventDropped     = "dropped"
)

// Event is one unique accepted event in the inbox.
type Event struct {
	ID             string `gorm:"type:uuid;primaryKey"`
	WorkspaceID    int64
	SourceID       int64
	IdempotencyKey string
	ContentHash    *string
	EventType      string
	Channel        string
	OccurredAt     time.Time
	ReceivedAt     time.Time
	Email          *string
	EmailRaw       *string
	EmailProblem   *string
	Phone          *string
	PhoneRaw       *string
	PhoneProblem   *string
	FirstName      *string
	LastName       *string
	Company        *string
	TargetStage    *string
	CurrentStage   *string
	Fields         json.RawMessage `gorm:"type:jsonb"`
	Attribution    json.RawMessage `gorm:"type:jsonb"`
	Hydration      json.RawMessage `gorm:"type:jsonb"`
	RuleOverrides  json.RawMessage `gorm:"type:jsonb"`
	Payload        json.RawMessage `gorm:"type:jsonb"`
	ContentType    string
	Status         string
	Reason         string
	Attempts       int
	NextAttemptAt  *time.Time
	ContactID      *string `gorm:"type:uuid"`
	ProcessedAt    *time.Time
	Spooled        bool
}

// Resolved reports whether the event has reached its final outcome.
func (e Event) Resolved() bool {
	switch e.Status {
	case EventPending, EventWaiting, EventRetrying:
		return false
	}
	return true
}

// EventFilter selects events for the explorer and the API.
type EventFilter struct {
	WorkspaceID int64
	Status      string
	SourceID    int64
	ContactID   string
	Email       string
	// Lead matches events of a lead by normalized email or E.164 phone: on
	// the event itself, or on the contact it resolved to.
	LeadEmail, LeadPhone string
}

// EventList returns events newest first; Page.Cursor is an event id.
func (s *Store) EventList(ctx context.Context, f EventFilter, page Page) ([]Event, error) {
	q := s.db.WithContext(ctx).Where("workspace_id = ?", f.WorkspaceID).Order("received_at DESC, id DESC").Limit(page.Limit)
	if f.Status != "" {
		q = q.Where("status = ?", f.Status)
	}
	if f.SourceID != 0 {
		q = q.Where("source_id = ?", f.SourceID)
	}
	if f.ContactID != "" {
		q = q.Where("contact_id = ?", f.ContactID)
	}
	if f.Email != "" {
		q = q.Where("email = ?", f.Email)
	}
	if f.LeadEmail != "" {
		q = q.Where("(email = ? OR contact_id IN (SELECT id FROM contacts WHERE workspace_id = ? AND email = ?))", f.LeadEmail, f.WorkspaceID, f.LeadEmail)
	}
	if f.LeadPhone != "" {
		q = q.Where("(phone = ? OR contact_id IN (SELECT id FROM contacts WHERE workspace_id = ? AND phone = ?))", f.LeadPhone, f.WorkspaceID, f.LeadPhone)
	}
	if page.Cursor != "" {
		q = q.Where("(received_at, id) < (SELECT received_at, id FROM events WHERE id = ?)", page.Cursor)
	}
	var out []Event
	if err := q.Find(&out).Error; err != nil {
		return nil, fmt.Errorf("models: list events: %w", err)
	}
	return out, nil
}

// EventGet returns one event of a workspace.
func (s *Store) EventGet(ctx context.Context, workspaceID int64, id string) (Event, error) {
	var e Event
	err := s.db.WithContext(ctx).Where("workspace_id = ? AND id = ?", workspaceID, id).Take(&e).Error
	if errors.Is(err, gorm.ErrRecordNotFound) {
		return e, ErrNotFound
	}
	if err != nil {
		return e, fmt.Errorf("models: event %s: %w", id, err)
	}
	return e, nil
}

// EventByID returns one event by id across workspaces (the apply job).
func (s *Store) EventByID(ctx context.Context, id string) (Event, error) {
	var e Event
	err := s.db.WithContext(ctx).Where("id = ?", id).Take(&e).Error
	if errors.Is(err, gorm.ErrRecordNotFound) {
		return e, ErrNotFound
	}
	if err != nil {
		return e, fmt.Errorf("models: event %s: %w", id, err)
	}
	return e, nil
}

// EventsStranded counts, up to limit, the unresolved events due for
// (re)processing and received before olderThan that a batch can claim: the
// crash-recovery sweep wakes the apply drainers when there are any.
func (s *Store) EventsStranded(ctx context.Context, olderThan time.Time, limit int) (int, error) {
	var n int
	err := s.pool().QueryRowContext(ctx, `SELECT count(*) FROM (SELECT 1 FROM events WHERE `+unresolvedSQL+` AND `+applicableSQL+`
		AND received_at < $1 AND (next_attempt_at IS NULL OR next_attempt_at <= now()) LIMIT $2) x`, olderThan, limit).Scan(&n)
	if err != nil {
		return 0, fmt.Errorf("models: stranded events: %w", err)
	}
	return n, nil
}

// EventsStrandedHydrating returns, in id order after the id after, up to
// limit ids of the unresolved events due and received before olderThan that
// wait for their provider's record: each has a task of its own, which the
// sweep re-enqueues.
func (s *Store) EventsStrandedHydrating(ctx context.Context, olderThan time.Time, after string, limit int) ([]string, error) {
	rows, err := s.pool().QueryContext(ctx, `SELECT id::text FROM events WHERE `+unresolvedSQL+` AND NOT `+applicableSQL+`
		AND received_at < $1 AND (next_attempt_at IS NULL OR next_attempt_at <= now()) AND id > $2::uuid ORDER BY id LIMIT $3`,
		olderThan, cmp.Or(after, "00000000-0000-0000-0000-000000000000"), limit)
	if err != nil {
		return nil, fmt.Errorf("models: stranded events waiting for hydration: %w", err)
	}
	defer rows.Close()
	var ids []string
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			return nil, fmt.Errorf("models: stranded events waiting for hydration: %w", err)
		}
		ids = append(ids, id)
	}
	return ids, rows.Err()
}

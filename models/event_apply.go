package models

import (
	"context"
	"fmt"
	"time"
)

// EventOutcome is what the apply step records on an event.
type EventOutcome struct {
	Status        string
	Reason        string
	ContactID     string
	Attempts      int
	NextAttemptAt *time.Time
}

// EventSetOutcome records an event's outcome (final or waiting).
func (s *Store) EventSetOutcome(ctx context.Context, id string, o EventOutcome) error {
	updates := map[string]any{"status": o.Status, "reason": o.Reason, "attempts": o.Attempts, "next_attempt_at": o.NextAttemptAt}
	if o.ContactID != "" {
		updates["contact_id"] = o.ContactID
	}
	switch o.Status {
	case EventPending, EventWaiting, EventRetrying:
	default:
		updates["processed_at"] = time.Now().UTC()
	}
	if err := s.db.WithContext(ctx).Model(&Event{}).Where("id = ?", id).Updates(updates).Error; err != nil {
		return fmt.Errorf("models: event outcome %s: %w", id, err)
	}
	return nil
}

// EventsSince returns a workspace's events received since t, oldest first
// (the dry-run's input).
func (s *Store) EventsSince(ctx context.Context, workspaceID int64, t time.Time) ([]Event, error) {
	var out []Event
	err := s.db.WithContext(ctx).Where("workspace_id = ? AND received_at >= ?", workspaceID, t).Order("occurred_at, id").Limit(200000).Find(&out).Error
	if err != nil {
		return nil, fmt.Errorf("models: events since: %w", err)
	}
	return out, nil
}

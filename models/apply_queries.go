package models

import (
	"context"
	"fmt"
	"time"
)

// EventSetOutcomeIfUnresolved records an outcome only while the event is
// still pending, waiting or retrying, and reports whether it did: a failed
// run must not overwrite what a peer's run decided in the meantime.
func (s *Store) EventSetOutcomeIfUnresolved(ctx context.Context, id string, o EventOutcome) (bool, error) {
	updates := map[string]any{"status": o.Status, "reason": o.Reason, "attempts": o.Attempts, "next_attempt_at": o.NextAttemptAt}
	if o.ContactID != "" {
		updates["contact_id"] = o.ContactID
	}
	switch o.Status {
	case EventPending, EventWaiting, EventRetrying:
	default:
		updates["processed_at"] = time.Now().UTC()
	}
	res := s.db.WithContext(ctx).Model(&Event{}).
		Where("id = ? AND status IN ?", id, []string{EventPending, EventWaiting, EventRetrying}).Updates(updates)
	if res.Error != nil {
		return false, fmt.Errorf("models: event outcome %s: %w", id, res.Error)
	}
	return res.RowsAffected == 1, nil
}

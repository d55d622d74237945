package models

import (
	"context"
	"errors"
	"fmt"
	"time"

	"gorm.io/gorm"
)

// Circuit-breaker statuses.
const (
	BreakerTripped = "tripped"
	BreakerReset   = "reset"
)

// CircuitBreaker is one contact's durable breaker state.
type CircuitBreaker struct {
	WorkspaceID int64      `json:"-"`
	ContactID   string     `gorm:"type:uuid" json:"contact_id"`
	Status      string     `json:"status"`
	Trips       int        `json:"trips"`
	Reason      string     `json:"reason"`
	TrippedAt   time.Time  `json:"tripped_at"`
	ResetAt     *time.Time `json:"reset_at"`
	ResetBy     *string    `json:"reset_by"`
}

// TableName maps CircuitBreaker to circuit_breakers.
func (CircuitBreaker) TableName() string { return "circuit_breakers" }

// BreakerTrip marks a contact's breaker tripped. It reports whether this
// call tripped it (false: it was tripped already) and the trip number.
func (s *Store) BreakerTrip(ctx context.Context, workspaceID int64, contactID, reason string) (bool, int, error) {
	var row struct {
		Trips   int
		Tripped bool
	}
	err := s.db.WithContext(ctx).Raw(`INSERT INTO circuit_breakers (workspace_id, contact_id, status, trips, reason, tripped_at)
		VALUES (?, ?, 'tripped', 1, ?, now())
		ON CONFLICT (workspace_id, contact_id) DO UPDATE
			SET status = 'tripped', trips = circuit_breakers.trips + 1, reason = EXCLUDED.reason,
			    tripped_at = now(), reset_at = NULL, reset_by = NULL
			WHERE circuit_breakers.status = 'reset'
		RETURNING trips, true AS tripped`, workspaceID, contactID, reason).Scan(&row).Error
	if err != nil {
		return false, 0, fmt.Errorf("models: trip breaker %s: %w", contactID, err)
	}
	if !row.Tripped {
		return false, 0, nil
	}
	return true, row.Trips, nil
}

// BreakerGet returns a contact's breaker; ErrNotFound when it never tripped.
func (s *Store) BreakerGet(ctx context.Context, workspaceID int64, contactID string) (CircuitBreaker, error) {
	var b CircuitBreaker
	err := s.db.WithContext(ctx).Where("workspace_id = ? AND contact_id = ?", workspaceID, contactID).Take(&b).Error
	if errors.Is(err, gorm.ErrRecordNotFound) {
		return b, ErrNotFound
	}
	if err != nil {
		return b, fmt.Errorf("models: breaker %s: %w", contactID, err)
	}
	return b, nil
}

// BreakerList returns a workspace's breakers with the given status ("" =
// tripped), most recently tripped first; Cursor is a tripped_at in RFC 3339.
func (s *Store) BreakerList(ctx context.Context, workspaceID int64, status string, page Page) ([]CircuitBreaker, error) {
	if status == "" {
		status = BreakerTripped
	}
	q := s.db.WithContext(ctx).Where("workspace_id = ?", workspaceID).Order("tripped_at DESC, contact_id").Limit(page.Limit)
	if status != "all" {
		q = q.Where("status = ?", status)
	}
	if page.Cursor != "" {
		at, err := time.Parse(time.RFC3339Nano, page.Cursor)
		if err != nil {
			return nil, fmt.Errorf("models: breaker cursor: %w", err)
		}
		q = q.Where("tripped_at < ?", at)
	}
	var out []CircuitBreaker
	if err := q.Find(&out).Error; err != nil {
		return nil, fmt.Errorf("models: list breakers: %w", err)
	}
	return out, nil
}

// BreakerResetRow closes a tripped breaker; ErrNotFound when it is not tripped.
func (s *Store) BreakerResetRow(ctx context.Context, workspaceID int64, contactID, by string) (CircuitBreaker, error) {
	var b CircuitBreaker
	err := s.db.WithContext(ctx).Raw(`UPDATE circuit_breakers SET status = 'reset', reset_at = now(), reset_by = ?
		WHERE workspace_id = ? AND contact_id = ? AND status = 'tripped' RETURNING *`, by, workspaceID, contactID).Scan(&b).Error
	if err != nil {
		return b, fmt.Errorf("models: reset breaker %s: %w", contactID, err)
	}
	if b.ContactID == "" {
		return b, ErrNotFound
	}
	return b, nil
}

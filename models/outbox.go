package models

import (
	"context"
	"encoding/json"
	"fmt"
	"time"
)

// Outbox kinds.
const (
	OutboxCRMUpsert  = "crm_upsert"
	OutboxSideEffect = "side_effect"
	OutboxAlert      = "alert"
)

// OutboxRow is work for the outside world, written in the same transaction as
// the change that caused it and identified by a stable id derived from the cause.
type OutboxRow struct {
	ID            int64
	WorkspaceID   int64
	ContactID     *string `gorm:"type:uuid"`
	Kind          string
	StableID      string
	Version       int64
	Action        string
	Payload       json.RawMessage `gorm:"type:jsonb"`
	Status        string
	Attempts      int
	NextAttemptAt time.Time
	LastError     string
	CreatedAt     time.Time
	SentAt        *time.Time
}

// TableName maps OutboxRow to outbox.
func (OutboxRow) TableName() string { return "outbox" }

// OutboxAdd inserts a row unless its stable id exists already (a replay or a
// re-saved rule never writes the same intent twice). It reports whether it inserted.
func (s *Store) OutboxAdd(ctx context.Context, r OutboxRow) (bool, error) {
	res := s.db.WithContext(ctx).Exec(`INSERT INTO outbox (workspace_id, contact_id, kind, stable_id, version, action, payload)
		VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT (workspace_id, stable_id) DO NOTHING`,
		r.WorkspaceID, r.ContactID, r.Kind, r.StableID, r.Version, r.Action, r.Payload)
	if res.Error != nil {
		return false, fmt.Errorf("models: outbox add: %w", res.Error)
	}
	return res.RowsAffected == 1, nil
}

// OutboxForContact lists a contact's outbox rows, newest first.
func (s *Store) OutboxForContact(ctx context.Context, contactID string, limit int) ([]OutboxRow, error) {
	var out []OutboxRow
	if err := s.db.WithContext(ctx).Where("contact_id = ?", contactID).Order("id DESC").Limit(limit).Find(&out).Error; err != nil {
		return nil, fmt.Errorf("models: outbox for contact: %w", err)
	}
	return out, nil
}

package models

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"gorm.io/gorm"
)

// AlertChannel is a configured alert destination (guards/alert reads Config
// and the sealed secrets).
type AlertChannel struct {
	ID            int64
	WorkspaceID   int64
	Name          string
	Kind          string
	Config        json.RawMessage `gorm:"type:jsonb"`
	SecretEnc     []byte
	MinSeverity   string
	Enabled       bool
	LastTestAt    *time.Time
	LastTestError string
	CreatedAt     time.Time
	UpdatedAt     time.Time
}

// AlertChannelList returns a workspace's channels, oldest first.
func (s *Store) AlertChannelList(ctx context.Context, workspaceID int64, enabledOnly bool) ([]AlertChannel, error) {
	var out []AlertChannel
	q := s.db.WithContext(ctx).Where("workspace_id = ?", workspaceID).Order("id")
	if enabledOnly {
		q = q.Where("enabled")
	}
	if err := q.Find(&out).Error; err != nil {
		return nil, fmt.Errorf("models: list alert channels: %w", err)
	}
	return out, nil
}

// AlertChannelGet returns one channel of a workspace.
func (s *Store) AlertChannelGet(ctx context.Context, workspaceID, id int64) (AlertChannel, error) {
	var c AlertChannel
	err := s.db.WithContext(ctx).Where("workspace_id = ?", workspaceID).Take(&c, id).Error
	if errors.Is(err, gorm.ErrRecordNotFound) {
		return c, ErrNotFound
	}
	if err != nil {
		return c, fmt.Errorf("models: alert channel %d: %w", id, err)
	}
	return c, nil
}

// AlertChannelCreate inserts c and sets its id.
func (s *Store) AlertChannelCreate(ctx context.Context, c *AlertChannel) error {
	if err := s.db.WithContext(ctx).Omit("ID", "CreatedAt", "UpdatedAt", "LastTestAt").Create(c).Error; err != nil {
		return fmt.Errorf("models: create alert channel: %w", err)
	}
	return nil
}

// AlertChannelUpdate saves c's editable columns.
func (s *Store) AlertChannelUpdate(ctx context.Context, c AlertChannel) error {
	res := s.db.WithContext(ctx).Exec(`UPDATE alert_channels SET name = ?, config = ?, secret_enc = ?, min_severity = ?, enabled = ?, updated_at = now()
		WHERE workspace_id = ? AND id = ?`, c.Name, c.Config, c.SecretEnc, c.MinSeverity, c.Enabled, c.WorkspaceID, c.ID)
	if res.Error != nil {
		return fmt.Errorf("models: update alert channel %d: %w", c.ID, res.Error)
	}
	if res.RowsAffected == 0 {
		return ErrNotFound
	}
	return nil
}

// AlertChannelDelete removes a channel (its delivery records go with it).
func (s *Store) AlertChannelDelete(ctx context.Context, workspaceID, id int64) error {
	res := s.db.WithContext(ctx).Exec(`DELETE FROM alert_channels WHERE workspace_id = ? AND id = ?`, workspaceID, id)
	if res.Error != nil {
		return fmt.Errorf("models: delete alert channel %d: %w", id, res.Error)
	}
	if res.RowsAffected == 0 {
		return ErrNotFound
	}
	return nil
}

// AlertChannelTested records the outcome of a test send ("" = success).
func (s *Store) AlertChannelTested(ctx context.Context, id int64, errText string) error {
	if err := s.db.WithContext(ctx).Exec(`UPDATE alert_channels SET last_test_at = now(), last_test_error = ? WHERE id = ?`, errText, id).Error; err != nil {
		return fmt.Errorf("models: record alert test %d: %w", id, err)
	}
	return nil
}

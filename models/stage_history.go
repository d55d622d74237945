package models

import (
	"context"
	"fmt"
	"time"
)

// StageChange is one row of a contact's stage history.
type StageChange struct {
	ID          int64
	WorkspaceID int64
	ContactID   string `gorm:"type:uuid"`
	FromStage   string
	ToStage     string
	EventID     *string `gorm:"type:uuid"`
	RuleVersion int
	Actor       string
	Reason      string
	OccurredAt  time.Time
	At          time.Time
}

// TableName maps StageChange to stage_history.
func (StageChange) TableName() string { return "stage_history" }

// StageHistoryAdd appends a stage change.
func (s *Store) StageHistoryAdd(ctx context.Context, c StageChange) error {
	if err := s.db.WithContext(ctx).Omit("ID", "At").Create(&c).Error; err != nil {
		return fmt.Errorf("models: stage history: %w", err)
	}
	return nil
}

// StageHistoryForContact returns a contact's stage changes in order.
func (s *Store) StageHistoryForContact(ctx context.Context, contactID string) ([]StageChange, error) {
	var out []StageChange
	if err := s.db.WithContext(ctx).Where("contact_id = ?", contactID).Order("id").Find(&out).Error; err != nil {
		return nil, fmt.Errorf("models: stage history: %w", err)
	}
	return out, nil
}

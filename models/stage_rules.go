package models

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"gorm.io/gorm"
)

// StageRulesVersion is one saved version of a workspace's stage rules.
type StageRulesVersion struct {
	WorkspaceID int64
	Version     int
	Rules       json.RawMessage `gorm:"type:jsonb"`
	CreatedBy   string
	CreatedAt   time.Time
}

// TableName maps StageRulesVersion to stage_rules.
func (StageRulesVersion) TableName() string { return "stage_rules" }

// StageRulesCurrent returns the highest version, or ErrNotFound when the
// workspace never saved rules (the caller uses the defaults).
func (s *Store) StageRulesCurrent(ctx context.Context, workspaceID int64) (StageRulesVersion, error) {
	var v StageRulesVersion
	err := s.db.WithContext(ctx).Where("workspace_id = ?", workspaceID).Order("version DESC").Take(&v).Error
	if errors.Is(err, gorm.ErrRecordNotFound) {
		return v, ErrNotFound
	}
	if err != nil {
		return v, fmt.Errorf("models: stage rules: %w", err)
	}
	return v, nil
}

// StageRulesList returns every saved version, newest first.
func (s *Store) StageRulesList(ctx context.Context, workspaceID int64) ([]StageRulesVersion, error) {
	var out []StageRulesVersion
	if err := s.db.WithContext(ctx).Where("workspace_id = ?", workspaceID).Order("version DESC").Find(&out).Error; err != nil {
		return nil, fmt.Errorf("models: stage rules versions: %w", err)
	}
	return out, nil
}

// StageRulesSave stores rules as the next version and returns its number.
// Concurrent saves serialize on the primary key: the loser gets ErrConflict.
func (s *Store) StageRulesSave(ctx context.Context, workspaceID int64, rules func(version int) (json.RawMessage, error), by string) (int, error) {
	var next int
	db := s.db.WithContext(ctx)
	if err := db.Raw(`SELECT coalesce(max(version), 0) + 1 FROM stage_rules WHERE workspace_id = ?`, workspaceID).Scan(&next).Error; err != nil {
		return 0, fmt.Errorf("models: next rules version: %w", err)
	}
	body, err := rules(next)
	if err != nil {
		return 0, err
	}
	err = db.Create(&StageRulesVersion{WorkspaceID: workspaceID, Version: next, Rules: body, CreatedBy: by, CreatedAt: time.Now().UTC()}).Error
	if isUniqueViolation(err) {
		return 0, ErrConflict
	}
	if err != nil {
		return 0, fmt.Errorf("models: save rules: %w", err)
	}
	return next, nil
}

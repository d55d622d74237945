package models

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"gorm.io/gorm"
)

// SourceFilter is a source's filter rule set (ingest/filter decodes Rules).
type SourceFilter struct {
	SourceID    int64
	WorkspaceID int64
	Rules       json.RawMessage `gorm:"type:jsonb"`
	Version     int
	UpdatedBy   string
	UpdatedAt   time.Time
}

// TableName maps SourceFilter to source_filters.
func (SourceFilter) TableName() string { return "source_filters" }

// SourceFilterGet returns a source's rule set; ErrNotFound when it has none.
func (s *Store) SourceFilterGet(ctx context.Context, workspaceID, sourceID int64) (SourceFilter, error) {
	var f SourceFilter
	err := s.db.WithContext(ctx).Where("workspace_id = ? AND source_id = ?", workspaceID, sourceID).Take(&f).Error
	if errors.Is(err, gorm.ErrRecordNotFound) {
		return f, ErrNotFound
	}
	if err != nil {
		return f, fmt.Errorf("models: source filter %d: %w", sourceID, err)
	}
	return f, nil
}

// SourceFilterSave replaces a source's rule set and returns it with its new version.
func (s *Store) SourceFilterSave(ctx context.Context, workspaceID, sourceID int64, rules json.RawMessage, by string) (SourceFilter, error) {
	var f SourceFilter
	err := s.db.WithContext(ctx).Raw(`INSERT INTO source_filters (source_id, workspace_id, rules, version, updated_by, updated_at)
		VALUES (?, ?, ?, 1, ?, now())
		ON CONFLICT (source_id) DO UPDATE SET rules = EXCLUDED.rules, version = source_filters.version + 1,
			updated_by = EXCLUDED.updated_by, updated_at = now()
		RETURNING *`, sourceID, workspaceID, rules, by).Scan(&f).Error
	if err != nil {
		return f, fmt.Errorf("models: save source filter %d: %w", sourceID, err)
	}
	return f, nil
}

// SourceFilterDelete removes a source's rule set; it reports whether one existed.
func (s *Store) SourceFilterDelete(ctx context.Context, workspaceID, sourceID int64) (bool, error) {
	res := s.db.WithContext(ctx).Exec(`DELETE FROM source_filters WHERE workspace_id = ? AND source_id = ?`, workspaceID, sourceID)
	if res.Error != nil {
		return false, fmt.Errorf("models: delete source filter %d: %w", sourceID, res.Error)
	}
	return res.RowsAffected > 0, nil
}

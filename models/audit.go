package models

import (
	"context"
	"encoding/json"
	"fmt"
	"time"
)

// AuditEntry records one configuration change or operator action.
type AuditEntry struct {
	ID          int64
	WorkspaceID *int64
	Actor       string
	Action      string
	SubjectType string
	SubjectID   string
	Before      json.RawMessage `gorm:"type:jsonb"`
	After       json.RawMessage `gorm:"type:jsonb"`
	At          time.Time
}

// TableName maps AuditEntry to audit_log.
func (AuditEntry) TableName() string { return "audit_log" }

// Audit is what callers pass to AuditRecord; Before/After are marshalled to JSON.
type Audit struct {
	WorkspaceID int64 // 0 for instance-wide changes
	Actor       string
	Action      string // e.g. "source.create", "stage_rules.update"
	SubjectType string
	SubjectID   string
	Before      any
	After       any
}

// AuditRecord appends to the audit history; call it inside the transaction
// that makes the change so the two commit together.
func (s *Store) AuditRecord(ctx context.Context, a Audit) error {
	e := AuditEntry{Actor: a.Actor, Action: a.Action, SubjectType: a.SubjectType, SubjectID: a.SubjectID}
	if a.WorkspaceID != 0 {
		e.WorkspaceID = &a.WorkspaceID
	}
	var err error
	if e.Before, err = marshalOrNil(a.Before); err != nil {
		return err
	}
	if e.After, err = marshalOrNil(a.After); err != nil {
		return err
	}
	if err := s.db.WithContext(ctx).Omit("ID", "At").Create(&e).Error; err != nil {
		return fmt.Errorf("models: audit %s: %w", a.Action, err)
	}
	return nil
}

// AuditList returns a workspace's history newest first (workspaceID 0: all).
func (s *Store) AuditList(ctx context.Context, workspaceID int64, page Page) ([]AuditEntry, error) {
	var out []AuditEntry
	q := s.db.WithContext(ctx).Order("id DESC").Limit(page.Limit)
	if workspaceID != 0 {
		q = q.Where("workspace_id = ? OR workspace_id IS NULL", workspaceID)
	}
	if page.Cursor != "" {
		q = q.Where("id < ?", page.Cursor)
	}
	if err := q.Find(&out).Error; err != nil {
		return nil, fmt.Errorf("models: list audit: %w", err)
	}
	return out, nil
}

func marshalOrNil(v any) (json.RawMessage, error) {
	if v == nil {
		return nil, nil
	}
	b, err := json.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("models: audit marshal: %w", err)
	}
	return b, nil
}

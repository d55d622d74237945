package models

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"
)

// Contact is one real person in a workspace.
type Contact struct {
	ID              string `gorm:"type:uuid;primaryKey"`
	WorkspaceID     int64
	Email           *string
	Phone           *string
	PhoneShared     bool
	PhoneVerified   bool
	FirstName       *string
	LastName        *string
	Company         *string
	Stage           string
	StageEnteredAt  *time.Time
	Fields          map[string]string `gorm:"serializer:json;type:jsonb"`
	FirstTouch      map[string]string `gorm:"serializer:json;type:jsonb"`
	Tags            []string          `gorm:"serializer:json;type:jsonb"`
	Score           int
	ScoreBreakdown  json.RawMessage `gorm:"type:jsonb"`
	SubmissionCount int
	FirstSeenAt     time.Time
	LastActivityAt  time.Time
	Version         int64
	MergedInto      *string `gorm:"type:uuid"`
	ErasedAt        *time.Time
	CreatedAt       time.Time
	UpdatedAt       time.Time
}

// ContactFilter selects contacts for search.
type ContactFilter struct {
	WorkspaceID int64
	Email       string
	Phone       string
	Stage       string
	Query       string // free text over email, phone, names, company
}

// ContactList returns live (not merged) contacts, newest first; Cursor is a contact id.
func (s *Store) ContactList(ctx context.Context, f ContactFilter, page Page) ([]Contact, error) {
	q := s.db.WithContext(ctx).Where("workspace_id = ? AND merged_into IS NULL", f.WorkspaceID).
		Order("created_at DESC, id DESC").Limit(page.Limit)
	if f.Email != "" {
		q = q.Where("email = ?", f.Email)
	}
	if f.Phone != "" {
		q = q.Where("phone = ?", f.Phone)
	}
	if f.Stage != "" {
		q = q.Where("stage = ?", f.Stage)
	}
	if f.Query != "" {
		like := "%" + escapeLike(f.Query) + "%"
		q = q.Where("email ILIKE ? OR phone LIKE ? OR first_name ILIKE ? OR last_name ILIKE ? OR company ILIKE ?", like, like, like, like, like)
	}
	if page.Cursor != "" {
		q = q.Where("(created_at, id) < (SELECT created_at, id FROM contacts WHERE id = ?)", page.Cursor)
	}
	var out []Contact
	if err := q.Find(&out).Error; err != nil {
		return nil, fmt.Errorf("models: list contacts: %w", err)
	}
	return out, nil
}

// ContactGet returns a contact of a workspace (merged ones too: callers follow MergedInto).
func (s *Store) ContactGet(ctx context.Context, workspaceID int64, id string) (Contact, error) {
	var c Contact
	err := s.db.WithContext(ctx).Where("workspace_id = ? AND id = ?", workspaceID, id).Take(&c).Error
	if errors.Is(err, gorm.ErrRecordNotFound) {
		return c, ErrNotFound
	}
	if err != nil {
		return c, fmt.Errorf("models: contact %s: %w", id, err)
	}
	return c, nil
}

// ContactLockNoWait locks a contact row for this transaction, failing with
// ErrBusy at once when another transaction holds it (a worker never waits).
func (s *Store) ContactLockNoWait(ctx context.Context, id string) (Contact, error) {
	var c Contact
	err := s.db.WithContext(ctx).Clauses(clause.Locking{Strength: "UPDATE", Options: "NOWAIT"}).Where("id = ?", id).Take(&c).Error
	if isLockNotAvailable(err) {
		return c, ErrBusy
	}
	if errors.Is(err, gorm.ErrRecordNotFound) {
		return c, ErrNotFound
	}
	if err != nil {
		return c, fmt.Errorf("models: lock contact %s: %w", id, err)
	}
	return c, nil
}

// ContactFindByEmail returns the live contact with that email, or ErrNotFound.
func (s *Store) ContactFindByEmail(ctx context.Context, workspaceID int64, email string) (Contact, error) {
	return s.contactFind(ctx, "workspace_id = ? AND email = ? AND merged_into IS NULL", workspaceID, email)
}

// ContactFindByPhone returns the live contact owning that phone, or ErrNotFound.
func (s *Store) ContactFindByPhone(ctx context.Context, workspaceID int64, phone string) (Contact, error) {
	return s.contactFind(ctx, "workspace_id = ? AND phone = ? AND merged_into IS NULL AND NOT phone_shared", workspaceID, phone)
}

func (s *Store) contactFind(ctx context.Context, where string, args ...any) (Contact, error) {
	var c Contact
	err := s.db.WithContext(ctx).Where(where, args...).Take(&c).Error
	if errors.Is(err, gorm.ErrRecordNotFound) {
		return c, ErrNotFound
	}
	if err != nil {
		return c, fmt.Errorf("models: find contact: %w", err)
	}
	return c, nil
}

// ContactCreate inserts a contact; ErrConflict when its email or phone is taken.
func (s *Store) ContactCreate(ctx context.Context, c *Contact) error {
	err := s.db.WithContext(ctx).Create(c).Error
	if isUniqueViolation(err) {
		return ErrConflict
	}
	if err != nil {
		return fmt.Errorf("models: create contact: %w", err)
	}
	return nil
}

// ContactSave writes every column of a contact.
func (s *Store) ContactSave(ctx context.Context, c *Contact) error {
	c.UpdatedAt = time.Now().UTC()
	err := s.db.WithContext(ctx).Save(c).Error
	if isUniqueViolation(err) {
		return ErrConflict
	}
	if err != nil {
		return fmt.Errorf("models: save contact: %w", err)
	}
	return nil
}

// ContactStageCounts returns live contacts per stage (the funnel).
func (s *Store) ContactStageCounts(ctx context.Context, workspaceID int64) (map[string]int64, error) {
	rows := []struct {
		Stage string
		N     int64
	}{}
	err := s.db.WithContext(ctx).Raw(`SELECT stage, count(*) AS n FROM contacts WHERE workspace_id = ? AND merged_into IS NULL GROUP BY stage`, workspaceID).Scan(&rows).Error
	if err != nil {
		return nil, fmt.Errorf("models: stage counts: %w", err)
	}
	out := make(map[string]int64, len(rows))
	for _, r := range rows {
		out[r.Stage] = r.N
	}
	return out, nil
}

// ContactAppliedEventTypes lists the event type of each distinct applied event
// of a contact (the lead score's behaviour input).
func (s *Store) ContactAppliedEventTypes(ctx context.Context, contactID string) ([]string, error) {
	var out []string
	err := s.db.WithContext(ctx).Model(&Event{}).Where("contact_id = ? AND status = ?", contactID, EventApplied).Pluck("event_type", &out).Error
	if err != nil {
		return nil, fmt.Errorf("models: contact event types: %w", err)
	}
	return out, nil
}

// ContactMergeInto moves everything of loser to survivor and marks loser merged.
func (s *Store) ContactMergeInto(ctx context.Context, loser, survivor string) error {
	db := s.db.WithContext(ctx)
	for _, stmt := range []string{
		`UPDATE events SET contact_id = ? WHERE contact_id = ?`,
		`UPDATE observations SET contact_id = ? WHERE contact_id = ?`,
		`UPDATE stage_history SET contact_id = ? WHERE contact_id = ?`,
	} {
		if err := db.Exec(stmt, survivor, loser).Error; err != nil {
			return fmt.Errorf("models: merge contacts: %w", err)
		}
	}
	err := db.Exec(`UPDATE contacts SET merged_into = ?, email = NULL, phone = NULL, updated_at = now() WHERE id = ?`, survivor, loser).Error
	if err != nil {
		return fmt.Errorf("models: merge contacts: %w", err)
	}
	return nil
}

func escapeLike(s string) string {
	out := make([]rune, 0, len(s))
	for _, r := range s {
		if r == '%' || r == '_' || r == '\\' {
			out = append(out, '\\')
		}
		out = append(out, r)
	}
	return string(out)
}

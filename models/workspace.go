package models

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"time"

	"gorm.io/gorm"
)

// Workspace scopes sources, rules, destinations, contacts and events.
type Workspace struct {
	ID         int64
	Slug       string
	Name       string
	ArchivedAt *time.Time
	CreatedAt  time.Time
	UpdatedAt  time.Time
}

var slugPattern = regexp.MustCompile(`^[a-z0-9][a-z0-9-]{0,62}$`)

// ValidateWorkspace returns the field and message of the first problem.
func ValidateWorkspace(slug, name string) (field, msg string) {
	if !slugPattern.MatchString(slug) {
		return "slug", "slug must be 1-63 lower-case letters, digits or dashes, starting with a letter or digit"
	}
	if n := strings.TrimSpace(name); n == "" || len(n) > 200 {
		return "name", "name must be 1-200 characters"
	}
	return "", ""
}

// WorkspaceList returns workspaces oldest first (the default one leads).
func (s *Store) WorkspaceList(ctx context.Context, includeArchived bool) ([]Workspace, error) {
	var out []Workspace
	q := s.db.WithContext(ctx).Order("id")
	if !includeArchived {
		q = q.Where("archived_at IS NULL")
	}
	if err := q.Find(&out).Error; err != nil {
		return nil, fmt.Errorf("models: list workspaces: %w", err)
	}
	return out, nil
}

// WorkspaceBySlug returns ErrNotFound for an unknown slug.
func (s *Store) WorkspaceBySlug(ctx context.Context, slug string) (Workspace, error) {
	var w Workspace
	err := s.db.WithContext(ctx).Where("slug = ?", slug).Take(&w).Error
	if errors.Is(err, gorm.ErrRecordNotFound) {
		return w, ErrNotFound
	}
	if err != nil {
		return w, fmt.Errorf("models: workspace %q: %w", slug, err)
	}
	return w, nil
}

// WorkspaceByID returns ErrNotFound for an unknown id.
func (s *Store) WorkspaceByID(ctx context.Context, id int64) (Workspace, error) {
	var w Workspace
	err := s.db.WithContext(ctx).Take(&w, id).Error
	if errors.Is(err, gorm.ErrRecordNotFound) {
		return w, ErrNotFound
	}
	if err != nil {
		return w, fmt.Errorf("models: workspace %d: %w", id, err)
	}
	return w, nil
}

// WorkspaceCreate inserts a workspace; ErrConflict when the slug is taken.
func (s *Store) WorkspaceCreate(ctx context.Context, slug, name string) (Workspace, error) {
	w := Workspace{Slug: slug, Name: strings.TrimSpace(name)}
	err := s.db.WithContext(ctx).Select("Slug", "Name").Create(&w).Error
	if isUniqueViolation(err) {
		return w, ErrConflict
	}
	if err != nil {
		return w, fmt.Errorf("models: create workspace: %w", err)
	}
	return s.WorkspaceByID(ctx, w.ID)
}

// WorkspaceUpdate renames or (un)archives a workspace.
func (s *Store) WorkspaceUpdate(ctx context.Context, id int64, name string, archived bool) error {
	updates := map[string]any{"name": strings.TrimSpace(name), "updated_at": time.Now()}
	if archived {
		updates["archived_at"] = gorm.Expr("coalesce(archived_at, now())")
	} else {
		updates["archived_at"] = nil
	}
	if err := s.db.WithContext(ctx).Model(&Workspace{}).Where("id = ?", id).Updates(updates).Error; err != nil {
		return fmt.Errorf("models: update workspace: %w", err)
	}
	return nil
}

package models

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"
)

// apiTokenWorkspace limits a token to a workspace (migration 00009). A token
// with no rows reaches every workspace.
type apiTokenWorkspace struct {
	TokenID     int64
	WorkspaceID int64
	CreatedAt   time.Time
}

// TableName pins the table the migration creates.
func (apiTokenWorkspace) TableName() string { return "api_token_workspaces" }

// TokenWorkspace is one workspace a token is limited to, for listings and the audit.
type TokenWorkspace struct {
	TokenID     int64
	WorkspaceID int64
	Slug        string
	Name        string
	Archived    bool
}

// ScopeError names a workspace a token cannot be limited to.
type ScopeError struct {
	Slug     string
	Archived bool // it exists but is archived; otherwise it does not exist
}

func (e *ScopeError) Error() string {
	if e.Archived {
		return fmt.Sprintf("workspace %q is archived", e.Slug)
	}
	return fmt.Sprintf("unknown workspace %q", e.Slug)
}

// TokenScopeWorkspaces resolves the slugs a new token is to be limited to,
// trimmed and without repeats, in the order given. The first unknown,
// archived or empty slug is a *ScopeError; nothing is written.
func (s *Store) TokenScopeWorkspaces(ctx context.Context, slugs []string) ([]Workspace, error) {
	var out []Workspace
	seen := map[string]bool{}
	for _, slug := range slugs {
		slug = strings.TrimSpace(slug)
		if seen[slug] {
			continue
		}
		seen[slug] = true
		if slug == "" {
			return nil, &ScopeError{Slug: slug}
		}
		ws, err := s.WorkspaceBySlug(ctx, slug)
		if errors.Is(err, ErrNotFound) {
			return nil, &ScopeError{Slug: slug}
		}
		if err != nil {
			return nil, err
		}
		if ws.ArchivedAt != nil {
			return nil, &ScopeError{Slug: slug, Archived: true}
		}
		out = append(out, ws)
	}
	return out, nil
}

// tokenScopeInsert limits token id to workspaceIDs (none: no rows, every workspace).
func (s *Store) tokenScopeInsert(ctx context.Context, tokenID int64, workspaceIDs []int64) error {
	if len(workspaceIDs) == 0 {
		return nil
	}
	rows := make([]apiTokenWorkspace, 0, len(workspaceIDs))
	for _, id := range workspaceIDs {
		rows = append(rows, apiTokenWorkspace{TokenID: tokenID, WorkspaceID: id})
	}
	if err := s.db.WithContext(ctx).Select("TokenID", "WorkspaceID").Create(&rows).Error; err != nil {
		return fmt.Errorf("models: limit token %d to workspaces: %w", tokenID, err)
	}
	return nil
}

// TokenWorkspaceAccess loads where token id (with role) may act, in the shape
// UserWorkspaceAccess gives a user: a token with no scope is unrestricted; a
// scoped one, admin or not, opens only its workspaces and acts there with its
// own role.
func (s *Store) TokenWorkspaceAccess(ctx context.Context, tokenID int64, role string) (WorkspaceAccess, error) {
	a := WorkspaceAccess{Global: role}
	var ids []int64
	err := s.db.WithContext(ctx).Model(&apiTokenWorkspace{}).Where("token_id = ?", tokenID).Pluck("workspace_id", &ids).Error
	if err != nil {
		return a, fmt.Errorf("models: workspace access of token %d: %w", tokenID, err)
	}
	if len(ids) == 0 {
		return a, nil
	}
	a.Restricted, a.Roles = true, make(map[int64]string, len(ids))
	for _, id := range ids {
		a.Roles[id] = role
	}
	return a, nil
}

// TokenWorkspaces returns the scope of the given tokens (of every token when
// none is given) by token id, each list in workspace order; an unscoped token
// has no entry.
func (s *Store) TokenWorkspaces(ctx context.Context, tokenIDs ...int64) (map[int64][]TokenWorkspace, error) {
	var rows []TokenWorkspace
	q := s.db.WithContext(ctx).Table("api_token_workspaces t").
		Select("t.token_id, t.workspace_id, w.slug, w.name, w.archived_at IS NOT NULL AS archived").
		Joins("JOIN workspaces w ON w.id = t.workspace_id").Order("t.token_id, w.id")
	if len(tokenIDs) > 0 {
		q = q.Where("t.token_id IN ?", tokenIDs)
	}
	if err := q.Scan(&rows).Error; err != nil {
		return nil, fmt.Errorf("models: list token workspaces: %w", err)
	}
	out := make(map[int64][]TokenWorkspace)
	for _, r := range rows {
		out[r.TokenID] = append(out[r.TokenID], r)
	}
	return out, nil
}

// TokenWorkspaceSlugs lists the slugs of scope (nil for an unscoped token), for the audit history.
func TokenWorkspaceSlugs(scope []TokenWorkspace) []string {
	if len(scope) == 0 {
		return nil
	}
	out := make([]string, len(scope))
	for i, w := range scope {
		out[i] = w.Slug
	}
	return out
}

// TokenRevokeAudited revokes an active token and returns the audit entry's before and after (name, role,
// revoked, and the workspaces when scoped), for the caller to record in the same transaction.
func (s *Store) TokenRevokeAudited(ctx context.Context, id int64) (before, after map[string]any, err error) {
	tok, err := s.TokenGet(ctx, id)
	if err != nil {
		return nil, nil, err
	}
	scope, err := s.TokenWorkspaces(ctx, id)
	if err != nil {
		return nil, nil, err
	}
	if err := s.TokenRevoke(ctx, id); err != nil {
		return nil, nil, err
	}
	before = map[string]any{"name": tok.Name, "role": tok.Role, "revoked": false}
	after = map[string]any{"name": tok.Name, "role": tok.Role, "revoked": true}
	if slugs := TokenWorkspaceSlugs(scope[id]); len(slugs) > 0 {
		before["workspaces"], after["workspaces"] = slugs, slugs
	}
	return before, after, nil
}

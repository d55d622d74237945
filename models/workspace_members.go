package models

import (
	"context"
	"errors"
	"fmt"
	"time"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"
)

// WorkspaceMember restricts a user to a workspace with a role there.
type WorkspaceMember struct {
	UserID      int64
	WorkspaceID int64
	Role        string
	CreatedAt   time.Time
	UpdatedAt   time.Time
}

// WorkspaceMembership is a membership with its workspace's names, for listings.
type WorkspaceMembership struct {
	UserID      int64
	WorkspaceID int64
	Role        string
	Slug        string
	Name        string
	Archived    bool
}

// WorkspaceAccess is where a user may act and with which role. A user with
// no memberships (or a global admin) is unrestricted and acts everywhere with
// their global role; a restricted user acts only in their memberships'
// workspaces, with the membership's role there.
type WorkspaceAccess struct {
	Global     string
	Restricted bool
	Roles      map[int64]string // workspace id -> role, when Restricted
}

// RoleIn returns the role in workspace wsID and whether the user may open it at all.
func (a WorkspaceAccess) RoleIn(wsID int64) (string, bool) {
	if !a.Restricted {
		return a.Global, true
	}
	role, ok := a.Roles[wsID]
	return role, ok
}

// UserWorkspaceAccess loads where user id (with globalRole) may act.
func (s *Store) UserWorkspaceAccess(ctx context.Context, userID int64, globalRole string) (WorkspaceAccess, error) {
	a := WorkspaceAccess{Global: globalRole}
	if globalRole == RoleAdmin {
		return a, nil // admins manage users and memberships, so restricting one would be moot
	}
	var rows []WorkspaceMember
	if err := s.db.WithContext(ctx).Where("user_id = ?", userID).Find(&rows).Error; err != nil {
		return a, fmt.Errorf("models: workspace access of user %d: %w", userID, err)
	}
	if len(rows) == 0 {
		return a, nil
	}
	a.Restricted, a.Roles = true, make(map[int64]string, len(rows))
	for _, m := range rows {
		a.Roles[m.WorkspaceID] = m.Role
	}
	return a, nil
}

// WorkspaceMemberships lists every membership with its workspace, by user then workspace.
func (s *Store) WorkspaceMemberships(ctx context.Context) ([]WorkspaceMembership, error) {
	var out []WorkspaceMembership
	err := s.db.WithContext(ctx).Table("workspace_members m").
		Select("m.user_id, m.workspace_id, m.role, w.slug, w.name, w.archived_at IS NOT NULL AS archived").
		Joins("JOIN workspaces w ON w.id = m.workspace_id").Order("m.user_id, w.id").Scan(&out).Error
	if err != nil {
		return nil, fmt.Errorf("models: list workspace memberships: %w", err)
	}
	return out, nil
}

// WorkspaceMemberGet returns ErrNotFound when the user is not a member.
func (s *Store) WorkspaceMemberGet(ctx context.Context, userID, wsID int64) (WorkspaceMember, error) {
	var m WorkspaceMember
	err := s.db.WithContext(ctx).Where("user_id = ? AND workspace_id = ?", userID, wsID).Take(&m).Error
	if errors.Is(err, gorm.ErrRecordNotFound) {
		return m, ErrNotFound
	}
	if err != nil {
		return m, fmt.Errorf("models: workspace membership %d/%d: %w", userID, wsID, err)
	}
	return m, nil
}

// WorkspaceMemberSet adds the membership or changes its role.
func (s *Store) WorkspaceMemberSet(ctx context.Context, userID, wsID int64, role string) error {
	if !ValidRole(role) {
		return fmt.Errorf("models: role %q is not admin, editor or viewer", role)
	}
	m := WorkspaceMember{UserID: userID, WorkspaceID: wsID, Role: role, UpdatedAt: time.Now()}
	err := s.db.WithContext(ctx).Select("UserID", "WorkspaceID", "Role", "UpdatedAt").Clauses(clause.OnConflict{
		Columns:   []clause.Column{{Name: "user_id"}, {Name: "workspace_id"}},
		DoUpdates: clause.AssignmentColumns([]string{"role", "updated_at"}),
	}).Create(&m).Error
	if err != nil {
		return fmt.Errorf("models: set workspace membership: %w", err)
	}
	return nil
}

// WorkspaceMemberRemove deletes a membership; ErrNotFound when there was none.
func (s *Store) WorkspaceMemberRemove(ctx context.Context, userID, wsID int64) error {
	res := s.db.WithContext(ctx).Where("user_id = ? AND workspace_id = ?", userID, wsID).Delete(&WorkspaceMember{})
	if res.Error != nil {
		return fmt.Errorf("models: remove workspace membership: %w", res.Error)
	}
	if res.RowsAffected == 0 {
		return ErrNotFound
	}
	return nil
}

// TableName pins the table the migration creates.
func (WorkspaceMember) TableName() string { return "workspace_members" }

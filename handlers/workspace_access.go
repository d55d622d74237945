package handlers

import (
	"context"
	"net/http"

	"github.com/leadgate/leadgate/internal/principal"
	"github.com/leadgate/leadgate/models"
)

// Per-workspace access (docs/security.md): a signed-in user with workspace
// memberships may open only those workspaces and acts there with the
// membership's role; an API token limited to some workspaces opens only
// those, with its own role; a user without memberships, a global admin, an
// unscoped token and the system act everywhere with their own role.
// Instance-wide actions (users, tokens, queues, creating workspaces) always
// check the global role, and are refused to anyone restricted (InstanceWide).

// globalRoleKey keeps the principal's global role once a workspace's role replaced it.
type globalRoleKey struct{}

// workspaceAccess loads where the caller may act; users and tokens can be restricted.
func workspaceAccess(ctx context.Context, st *models.Store, p principal.Principal) (models.WorkspaceAccess, error) {
	switch p.Kind {
	case "user":
		return st.UserWorkspaceAccess(ctx, p.ID, globalRoleOf(ctx, p))
	case "token":
		return st.TokenWorkspaceAccess(ctx, p.ID, globalRoleOf(ctx, p))
	}
	return models.WorkspaceAccess{Global: p.Role}, nil
}

// EnterWorkspace returns ctx whose principal carries its role in ws, or
// false when the caller may not open ws at all.
func EnterWorkspace(ctx context.Context, st *models.Store, ws models.Workspace) (context.Context, bool, error) {
	p, ok := principal.From(ctx)
	if !ok {
		return ctx, true, nil
	}
	access, err := workspaceAccess(ctx, st, p)
	if err != nil {
		return ctx, false, err
	}
	role, allowed := access.RoleIn(ws.ID)
	if !allowed {
		return ctx, false, nil
	}
	if _, kept := ctx.Value(globalRoleKey{}).(string); !kept {
		ctx = context.WithValue(ctx, globalRoleKey{}, p.Role)
	}
	p.Role = role
	return principal.With(ctx, p), true, nil
}

// globalRoleOf is p's instance-wide role, even inside a workspace that gave it another.
func globalRoleOf(ctx context.Context, p principal.Principal) string {
	if g, ok := ctx.Value(globalRoleKey{}).(string); ok {
		return g
	}
	return p.Role
}

// AllowedWorkspaces keeps the workspaces of list the caller may open.
func AllowedWorkspaces(ctx context.Context, st *models.Store, list []models.Workspace) ([]models.Workspace, error) {
	p, ok := principal.From(ctx)
	if !ok {
		return list, nil
	}
	access, err := workspaceAccess(ctx, st, p)
	if err != nil || !access.Restricted {
		return list, err
	}
	out := make([]models.Workspace, 0, len(list))
	for _, ws := range list {
		if _, ok := access.RoleIn(ws.ID); ok {
			out = append(out, ws)
		}
	}
	return out, nil
}

// IsGlobalAdmin reports whether the caller is an admin of the whole instance.
func IsGlobalAdmin(r *http.Request) bool {
	p, _ := principal.From(r.Context())
	return globalRoleOf(r.Context(), p) == models.RoleAdmin
}

// IsRestricted reports whether the caller (a user or a token) is limited to some workspaces.
func IsRestricted(r *http.Request, st *models.Store) (bool, error) {
	p, ok := principal.From(r.Context())
	if !ok {
		return false, nil
	}
	access, err := workspaceAccess(r.Context(), st, p)
	return access.Restricted, err
}

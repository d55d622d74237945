package ui

import (
	"errors"
	"net/http"
	"strconv"

	"github.com/go-chi/chi/v5"

	"github.com/leadgate/leadgate/models"
	"github.com/leadgate/leadgate/views"
)

// membershipJSON is a workspace membership as the audit history records it.
type membershipJSON struct {
	User      string `json:"user"`
	Workspace string `json:"workspace"`
	Role      string `json:"role"`
}

// loadUser loads the user named by the {id} route parameter, answering 404 or 500 itself.
func (u *UI) loadUser(w http.ResponseWriter, r *http.Request) (models.User, bool) {
	id, err := strconv.ParseInt(chi.URLParam(r, "id"), 10, 64)
	if err != nil {
		u.NotFound(w, r)
		return models.User{}, false
	}
	user, err := u.Store.UserGetAny(r.Context(), id)
	if errors.Is(err, models.ErrNotFound) {
		u.NotFound(w, r)
		return user, false
	}
	if err != nil {
		u.serverError(w, r, err)
		return user, false
	}
	return user, true
}

// SetUserWorkspace restricts a non-admin user to a workspace with a role
// there (or changes that role); audited in the workspace it concerns.
func (u *UI) SetUserWorkspace(w http.ResponseWriter, r *http.Request) {
	user, ok := u.loadUser(w, r)
	if !ok {
		return
	}
	id := user.ID
	form := views.MemberForm{UserID: id, Workspace: r.PostFormValue("workspace"), Role: r.PostFormValue("role"), Errors: views.FieldErrors{}}
	ws, err := u.Store.WorkspaceBySlug(r.Context(), form.Workspace)
	switch {
	case errors.Is(err, models.ErrNotFound) || (err == nil && ws.ArchivedAt != nil):
		form.Errors["workspace"] = "Choose an active workspace."
	case err != nil:
		u.serverError(w, r, err)
		return
	}
	if !models.ValidRole(form.Role) {
		form.Errors["role"] = "Choose viewer, editor or admin."
	}
	if user.Role == models.RoleAdmin {
		form.Errors["form"] = "Admins reach every workspace and cannot be restricted."
	}
	if form.Errors.Any() {
		u.usersPage(w, r, http.StatusUnprocessableEntity, views.UsersView{Role: models.RoleViewer, Member: form})
		return
	}
	action := "user.workspace.grant"
	err = u.Store.Tx(r.Context(), func(tx *models.Store) error {
		var before any
		cur, err := tx.WorkspaceMemberGet(r.Context(), id, ws.ID)
		switch {
		case err == nil:
			before, action = membershipJSON{user.Email, ws.Slug, cur.Role}, "user.workspace.update"
		case !errors.Is(err, models.ErrNotFound):
			return err
		}
		if err := tx.WorkspaceMemberSet(r.Context(), id, ws.ID, form.Role); err != nil {
			return err
		}
		return auditUI(r.Context(), tx, r, ws.ID, action, "user", strconv.FormatInt(id, 10), before, membershipJSON{user.Email, ws.Slug, form.Role})
	})
	if err != nil {
		u.serverError(w, r, err)
		return
	}
	u.flashRedirect(w, r, "/users#workspace-access", "ok", user.Email+" is now "+form.Role+" in "+ws.Name+" and sees only the workspaces listed for them.")
}

// RemoveUserWorkspace takes a workspace from a restricted user; removing the
// last one lifts the restriction (the flash says so).
func (u *UI) RemoveUserWorkspace(w http.ResponseWriter, r *http.Request) {
	user, ok := u.loadUser(w, r)
	if !ok {
		return
	}
	id := user.ID
	ws, ok := u.loadAnyWorkspace(w, r)
	if !ok {
		return
	}
	err := u.Store.Tx(r.Context(), func(tx *models.Store) error {
		cur, err := tx.WorkspaceMemberGet(r.Context(), id, ws.ID)
		if err != nil {
			return err
		}
		if err := tx.WorkspaceMemberRemove(r.Context(), id, ws.ID); err != nil {
			return err
		}
		return auditUI(r.Context(), tx, r, ws.ID, "user.workspace.revoke", "user", strconv.FormatInt(id, 10),
			membershipJSON{user.Email, ws.Slug, cur.Role}, nil)
	})
	if errors.Is(err, models.ErrNotFound) {
		u.NotFound(w, r)
		return
	}
	if err != nil {
		u.serverError(w, r, err)
		return
	}
	access, err := u.Store.UserWorkspaceAccess(r.Context(), id, user.Role)
	if err != nil {
		u.serverError(w, r, err)
		return
	}
	msg := user.Email + " no longer has access to " + ws.Name + "."
	if !access.Restricted {
		msg = user.Email + " has no workspace listed any more, so they act in every workspace as " + user.Role + "."
	}
	u.flashRedirect(w, r, "/users#workspace-access", "ok", msg)
}

package ui

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"net/http"
	"strconv"
	"strings"

	"github.com/a-h/templ"
	"github.com/go-chi/chi/v5"

	"github.com/leadgate/leadgate/internal/principal"
	"github.com/leadgate/leadgate/models"
	"github.com/leadgate/leadgate/views"
)

// ListTokens shows the admin API tokens (admin only).
func (u *UI) ListTokens(w http.ResponseWriter, r *http.Request) {
	u.tokensPage(w, r, http.StatusOK, views.TokensView{Role: models.RoleViewer})
}

func (u *UI) tokensPage(w http.ResponseWriter, r *http.Request, status int, v views.TokensView) {
	list, err := u.Store.TokenList(r.Context())
	if err != nil {
		u.serverError(w, r, err)
		return
	}
	scopes, err := u.Store.TokenWorkspaces(r.Context())
	if err != nil {
		u.serverError(w, r, err)
		return
	}
	if v.Workspaces, err = u.workspaceOptions(r.Context()); err != nil {
		u.serverError(w, r, err)
		return
	}
	v.Now = u.now()
	for _, t := range list {
		v.Rows = append(v.Rows, views.TokenRow{ID: t.ID, Name: t.Name, Role: t.Role, Prefix: t.Prefix, CreatedAt: t.CreatedAt,
			LastUsedAt: t.LastUsedAt, Revoked: t.RevokedAt != nil, Workspaces: models.TokenWorkspaceSlugs(scopes[t.ID])})
	}
	u.page(w, r, status, views.NavTokens, "API tokens", func(m views.PageMeta) templ.Component { return views.TokensPage(m, v) })
}

// CreateToken mints a token, limited to the ticked workspaces if any, and shows it once.
func (u *UI) CreateToken(w http.ResponseWriter, r *http.Request) {
	name, role := strings.TrimSpace(r.PostFormValue("name")), r.PostFormValue("role")
	v := views.TokensView{Name: name, Role: role, Scope: map[string]bool{}, Errors: views.FieldErrors{}}
	for _, slug := range r.PostForm["workspace"] {
		v.Scope[slug] = true
	}
	if name == "" || len(name) > 100 {
		v.Errors["name"] = "Give the token a name of 1-100 characters saying who uses it."
	}
	if !models.ValidRole(role) {
		v.Errors["role"] = "Choose viewer, editor or admin."
	}
	spaces, err := u.Store.TokenScopeWorkspaces(r.Context(), r.PostForm["workspace"])
	var scopeErr *models.ScopeError
	switch {
	case errors.As(err, &scopeErr):
		v.Errors["workspace"] = "Choose active workspaces only (" + scopeErr.Error() + ")."
	case err != nil:
		u.serverError(w, r, err)
		return
	}
	if v.Errors.Any() {
		u.tokensPage(w, r, http.StatusUnprocessableEntity, v)
		return
	}
	ids, slugs := make([]int64, len(spaces)), make([]string, len(spaces))
	for i, ws := range spaces {
		ids[i], slugs[i] = ws.ID, ws.Slug
	}
	var plain string
	err = u.Store.Tx(r.Context(), func(tx *models.Store) error {
		tok, p, err := tx.TokenCreate(r.Context(), name, role, ids...)
		if err != nil {
			return err
		}
		plain = p
		after := map[string]any{"name": tok.Name, "role": tok.Role, "prefix": tok.Prefix}
		if len(slugs) > 0 {
			after["workspaces"] = slugs
		}
		return auditUI(r.Context(), tx, r, 0, "token.create", "api_token", strconv.FormatInt(tok.ID, 10), nil, after)
	})
	if err != nil {
		u.serverError(w, r, err)
		return
	}
	u.tokensPage(w, r, http.StatusCreated, views.TokensView{NewToken: plain, Role: models.RoleViewer})
}

// RevokeToken revokes a live token.
func (u *UI) RevokeToken(w http.ResponseWriter, r *http.Request) {
	id, err := strconv.ParseInt(chi.URLParam(r, "id"), 10, 64)
	if err != nil {
		u.NotFound(w, r)
		return
	}
	err = u.Store.Tx(r.Context(), func(tx *models.Store) error {
		before, after, err := tx.TokenRevokeAudited(r.Context(), id)
		if err != nil {
			return err
		}
		return auditUI(r.Context(), tx, r, 0, "token.revoke", "api_token", strconv.FormatInt(id, 10), before, after)
	})
	if errors.Is(err, models.ErrNotFound) {
		u.NotFound(w, r)
		return
	}
	if err != nil {
		u.serverError(w, r, err)
		return
	}
	u.flashRedirect(w, r, "/tokens", "ok", "Token revoked.")
}

// ListUsers shows user accounts (admin only).
func (u *UI) ListUsers(w http.ResponseWriter, r *http.Request) {
	u.usersPage(w, r, http.StatusOK, views.UsersView{Role: models.RoleViewer})
}

func (u *UI) usersPage(w http.ResponseWriter, r *http.Request, status int, v views.UsersView) {
	list, err := u.Store.UserList(r.Context())
	if err != nil {
		u.serverError(w, r, err)
		return
	}
	members, err := u.Store.WorkspaceMemberships(r.Context())
	if err != nil {
		u.serverError(w, r, err)
		return
	}
	byUser := map[int64][]views.MembershipRow{}
	for _, ms := range members {
		byUser[ms.UserID] = append(byUser[ms.UserID], views.MembershipRow{Slug: ms.Slug, Name: ms.Name, Role: ms.Role, Archived: ms.Archived})
	}
	if v.Workspaces, err = u.workspaceOptions(r.Context()); err != nil {
		u.serverError(w, r, err)
		return
	}
	p, _ := principal.From(r.Context())
	v.Now = u.now()
	for _, x := range list {
		row := views.UserRow{ID: x.ID, Email: x.Email, Role: x.Role, Disabled: x.DisabledAt != nil,
			MustChange: x.MustChangePassword, LastLoginAt: x.LastLoginAt, Self: x.ID == p.ID}
		if x.Role != models.RoleAdmin {
			row.Memberships = byUser[x.ID] // an admin's leftover rows do not restrict them
		}
		v.Rows = append(v.Rows, row)
	}
	u.page(w, r, status, views.NavUsers, "Users", func(m views.PageMeta) templ.Component { return views.UsersPage(m, v) })
}

// CreateUser adds a user with a generated one-time password shown once.
func (u *UI) CreateUser(w http.ResponseWriter, r *http.Request) {
	email, role := strings.ToLower(strings.TrimSpace(r.PostFormValue("email"))), r.PostFormValue("role")
	v := views.UsersView{Email: email, Role: role, Errors: views.FieldErrors{}}
	if at := strings.Index(email, "@"); at < 1 || at == len(email)-1 || len(email) > 254 || strings.ContainsAny(email, " \t\r\n") {
		v.Errors["email"] = "Enter an email address such as jane@example.com."
	}
	if !models.ValidRole(role) {
		v.Errors["role"] = "Choose viewer, editor or admin."
	}
	if v.Errors.Any() {
		u.usersPage(w, r, http.StatusUnprocessableEntity, v)
		return
	}
	password, err := OneTimePassword()
	if err != nil {
		u.serverError(w, r, err)
		return
	}
	err = u.Store.Tx(r.Context(), func(tx *models.Store) error {
		user, err := tx.UserCreate(r.Context(), email, password, role, true)
		if err != nil {
			return err
		}
		return auditUI(r.Context(), tx, r, 0, "user.create", "user", strconv.FormatInt(user.ID, 10), nil,
			map[string]any{"email": user.Email, "role": user.Role})
	})
	if errors.Is(err, models.ErrConflict) {
		v.Errors["email"] = "A user with this email already exists."
		u.usersPage(w, r, http.StatusUnprocessableEntity, v)
		return
	}
	if err != nil {
		u.serverError(w, r, err)
		return
	}
	u.usersPage(w, r, http.StatusCreated, views.UsersView{Role: models.RoleViewer, NewPassword: password, NewUserEmail: email})
}

// SetUserDisabled disables or re-enables a user; nobody disables themselves
// or the last active admin.
func (u *UI) SetUserDisabled(w http.ResponseWriter, r *http.Request) {
	id, err := strconv.ParseInt(chi.URLParam(r, "id"), 10, 64)
	if err != nil {
		u.NotFound(w, r)
		return
	}
	p, _ := principal.From(r.Context())
	disable := r.PostFormValue("disabled") == "true"
	if disable && id == p.ID {
		u.flashRedirect(w, r, "/users", "error", "You cannot disable your own account.")
		return
	}
	errLastAdmin := errors.New("last admin")
	err = u.Store.Tx(r.Context(), func(tx *models.Store) error {
		user, err := tx.UserGetAny(r.Context(), id)
		if err != nil {
			return err
		}
		if disable && user.Role == models.RoleAdmin && user.DisabledAt == nil {
			if n, err := tx.UserCountActiveAdmins(r.Context()); err != nil {
				return err
			} else if n <= 1 {
				return errLastAdmin
			}
		}
		if err := tx.UserSetDisabled(r.Context(), id, disable); err != nil {
			return err
		}
		action := "user.enable"
		if disable {
			action = "user.disable"
		}
		return auditUI(r.Context(), tx, r, 0, action, "user", strconv.FormatInt(id, 10),
			map[string]any{"email": user.Email, "disabled": user.DisabledAt != nil}, map[string]any{"email": user.Email, "disabled": disable})
	})
	switch {
	case errors.Is(err, models.ErrNotFound):
		u.NotFound(w, r)
	case errors.Is(err, errLastAdmin):
		u.flashRedirect(w, r, "/users", "error", "This is the last active admin; add another admin first.")
	case err != nil:
		u.serverError(w, r, err)
	case disable:
		u.flashRedirect(w, r, "/users", "ok", "User disabled. Their sessions end at their next request.")
	default:
		u.flashRedirect(w, r, "/users", "ok", "User enabled.")
	}
}

// OneTimePassword returns a random 20-character password for a new account
// (the first admin, users added in the UI); it must be changed at first sign-in.
func OneTimePassword() (string, error) {
	b := make([]byte, 15)
	if _, err := rand.Read(b); err != nil {
		return "", err
	}
	return base64.RawURLEncoding.EncodeToString(b), nil
}

// workspaceOptions are the active workspaces as choices for a membership or a token scope.
func (u *UI) workspaceOptions(ctx context.Context) ([]views.Option, error) {
	spaces, err := u.Store.WorkspaceList(ctx, false)
	if err != nil {
		return nil, err
	}
	out := make([]views.Option, 0, len(spaces))
	for _, ws := range spaces {
		out = append(out, views.Option{Value: ws.Slug, Label: ws.Name})
	}
	return out, nil
}

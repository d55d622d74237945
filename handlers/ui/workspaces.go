package ui

import (
	"errors"
	"net/http"
	"strings"

	"github.com/a-h/templ"
	"github.com/go-chi/chi/v5"

	"github.com/leadgate/leadgate/handlers"
	"github.com/leadgate/leadgate/internal/principal"
	"github.com/leadgate/leadgate/models"
	"github.com/leadgate/leadgate/views"
)

// defaultWorkspace always exists (CONTRACT.md) and cannot be archived.
const defaultWorkspace = "default"

// ListWorkspaces shows every workspace; admins also get create, rename and archive.
func (u *UI) ListWorkspaces(w http.ResponseWriter, r *http.Request) {
	u.workspacesPage(w, r, http.StatusOK, "", "", nil)
}

func (u *UI) workspacesPage(w http.ResponseWriter, r *http.Request, status int, slug, name string, errs views.FieldErrors) {
	p, _ := principal.From(r.Context())
	isAdmin := models.RoleAtLeast(p.Role, models.RoleAdmin)
	list, err := u.Store.WorkspaceList(r.Context(), isAdmin)
	if err == nil {
		list, err = handlers.AllowedWorkspaces(r.Context(), u.Store, list)
	}
	if err != nil {
		u.serverError(w, r, err)
		return
	}
	v := views.WorkspacesView{IsAdmin: isAdmin, Slug: slug, Name: name, Errors: errs}
	for _, ws := range list {
		v.Rows = append(v.Rows, views.WorkspaceRow{Slug: ws.Slug, Name: ws.Name, Archived: ws.ArchivedAt != nil,
			CreatedAt: ws.CreatedAt, Protected: ws.Slug == defaultWorkspace})
	}
	u.page(w, r, status, views.NavWorkspaces, "Workspaces", func(m views.PageMeta) templ.Component { return views.WorkspacesPage(m, v) })
}

// CreateWorkspace adds a workspace and opens it.
func (u *UI) CreateWorkspace(w http.ResponseWriter, r *http.Request) {
	slug, name := strings.TrimSpace(r.PostFormValue("slug")), strings.TrimSpace(r.PostFormValue("name"))
	if field, msg := models.ValidateWorkspace(slug, name); field != "" {
		u.workspacesPage(w, r, http.StatusUnprocessableEntity, slug, name, views.FieldErrors{field: msg})
		return
	}
	err := u.Store.Tx(r.Context(), func(tx *models.Store) error {
		ws, err := tx.WorkspaceCreate(r.Context(), slug, name)
		if err != nil {
			return err
		}
		return auditUI(r.Context(), tx, r, ws.ID, "workspace.create", "workspace", ws.Slug, nil, handlers.WorkspaceJSON{Slug: ws.Slug, Name: ws.Name})
	})
	if errors.Is(err, models.ErrConflict) {
		u.workspacesPage(w, r, http.StatusUnprocessableEntity, slug, name, views.FieldErrors{"slug": "A workspace with this slug already exists."})
		return
	}
	if err != nil {
		u.serverError(w, r, err)
		return
	}
	u.flashRedirect(w, r, "/w/"+slug+"/", "ok", "Workspace "+name+" created. Add a source to start receiving leads.")
}

// loadAnyWorkspace reads {ws} including archived ones, answering 404 itself.
func (u *UI) loadAnyWorkspace(w http.ResponseWriter, r *http.Request) (models.Workspace, bool) {
	ws, err := u.Store.WorkspaceBySlug(r.Context(), chi.URLParam(r, "ws"))
	if errors.Is(err, models.ErrNotFound) {
		u.NotFound(w, r)
		return ws, false
	}
	if err != nil {
		u.serverError(w, r, err)
		return ws, false
	}
	return ws, true
}

// RenameWorkspace changes a workspace's display name.
func (u *UI) RenameWorkspace(w http.ResponseWriter, r *http.Request) {
	ws, ok := u.loadAnyWorkspace(w, r)
	if !ok {
		return
	}
	name := strings.TrimSpace(r.PostFormValue("name"))
	if field, msg := models.ValidateWorkspace(ws.Slug, name); field != "" {
		u.workspacesPage(w, r, http.StatusUnprocessableEntity, "", "", views.FieldErrors{"form": msg})
		return
	}
	u.updateWorkspace(w, r, ws, name, ws.ArchivedAt != nil, "workspace.rename", "Workspace renamed.")
}

// ArchiveWorkspace archives (archived=true) or restores a workspace; the default one stays.
func (u *UI) ArchiveWorkspace(w http.ResponseWriter, r *http.Request) {
	ws, ok := u.loadAnyWorkspace(w, r)
	if !ok {
		return
	}
	archive := r.PostFormValue("archived") == "true"
	if archive && ws.Slug == defaultWorkspace {
		u.flashRedirect(w, r, "/workspaces", "error", "The default workspace cannot be archived.")
		return
	}
	action, msg := "workspace.restore", "Workspace "+ws.Name+" restored."
	if archive {
		action, msg = "workspace.archive", "Workspace "+ws.Name+" archived. Its sources keep their data; restore it any time."
	}
	u.updateWorkspace(w, r, ws, ws.Name, archive, action, msg)
}

func (u *UI) updateWorkspace(w http.ResponseWriter, r *http.Request, ws models.Workspace, name string, archived bool, action, msg string) {
	type state struct {
		Slug     string `json:"slug"`
		Name     string `json:"name"`
		Archived bool   `json:"archived"`
	}
	err := u.Store.Tx(r.Context(), func(tx *models.Store) error {
		if err := tx.WorkspaceUpdate(r.Context(), ws.ID, name, archived); err != nil {
			return err
		}
		return auditUI(r.Context(), tx, r, ws.ID, action, "workspace", ws.Slug,
			state{ws.Slug, ws.Name, ws.ArchivedAt != nil}, state{ws.Slug, name, archived})
	})
	if err != nil {
		u.serverError(w, r, err)
		return
	}
	u.flashRedirect(w, r, "/workspaces", "ok", msg)
}

package api

import (
	"errors"
	"net/http"

	"github.com/leadgate/leadgate/handlers"
	"github.com/leadgate/leadgate/models"
)

// ListWorkspaces answers {"workspaces":[{"slug","name"}]}: those the caller may open.
func (a *API) ListWorkspaces(w http.ResponseWriter, r *http.Request) {
	list, err := a.Store.WorkspaceList(r.Context(), false)
	if err == nil {
		list, err = handlers.AllowedWorkspaces(r.Context(), a.Store, list)
	}
	if err != nil {
		handlers.ServerError(a.Log, w, r, err)
		return
	}
	out := make([]handlers.WorkspaceJSON, len(list))
	for i, ws := range list {
		out[i] = handlers.WorkspaceJSON{Slug: ws.Slug, Name: ws.Name}
	}
	handlers.WriteJSON(w, http.StatusOK, map[string]any{"workspaces": out})
}

// CreateWorkspace adds a workspace; 409 when the slug is taken.
func (a *API) CreateWorkspace(w http.ResponseWriter, r *http.Request) {
	var in handlers.WorkspaceJSON
	if !decodeJSON(w, r, &in) {
		return
	}
	if field, msg := models.ValidateWorkspace(in.Slug, in.Name); field != "" {
		handlers.WriteError(w, http.StatusBadRequest, field, msg)
		return
	}
	var ws models.Workspace
	err := a.Store.Tx(r.Context(), func(tx *models.Store) error {
		var err error
		if ws, err = tx.WorkspaceCreate(r.Context(), in.Slug, in.Name); err != nil {
			return err
		}
		return tx.AuditRecord(r.Context(), models.Audit{WorkspaceID: ws.ID, Actor: handlers.Actor(r), Action: "workspace.create",
			SubjectType: "workspace", SubjectID: ws.Slug, After: handlers.WorkspaceJSON{Slug: ws.Slug, Name: ws.Name}})
	})
	if errors.Is(err, models.ErrConflict) {
		handlers.WriteError(w, http.StatusConflict, "slug", "workspace "+in.Slug+" already exists")
		return
	}
	if err != nil {
		handlers.ServerError(a.Log, w, r, err)
		return
	}
	handlers.WriteJSON(w, http.StatusCreated, handlers.WorkspaceJSON{Slug: ws.Slug, Name: ws.Name})
}

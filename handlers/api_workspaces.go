package handlers

import (
	"errors"
	"net/http"

	"github.com/leadgate/leadgate/models"
)

// ListWorkspaces answers {"workspaces":[{"slug","name"}]}: those the caller may open.
func (a *API) ListWorkspaces(w http.ResponseWriter, r *http.Request) {
	list, err := a.Store.WorkspaceList(r.Context(), false)
	if err == nil {
		list, err = allowedWorkspaces(r.Context(), a.Store, list)
	}
	if err != nil {
		serverError(a.Log, w, r, err)
		return
	}
	out := make([]workspaceJSON, len(list))
	for i, ws := range list {
		out[i] = workspaceJSON{Slug: ws.Slug, Name: ws.Name}
	}
	writeJSON(w, http.StatusOK, map[string]any{"workspaces": out})
}

// CreateWorkspace adds a workspace; 409 when the slug is taken.
func (a *API) CreateWorkspace(w http.ResponseWriter, r *http.Request) {
	var in workspaceJSON
	if !decodeJSON(w, r, &in) {
		return
	}
	if field, msg := models.ValidateWorkspace(in.Slug, in.Name); field != "" {
		writeError(w, http.StatusBadRequest, field, msg)
		return
	}
	var ws models.Workspace
	err := a.Store.Tx(r.Context(), func(tx *models.Store) error {
		var err error
		if ws, err = tx.WorkspaceCreate(r.Context(), in.Slug, in.Name); err != nil {
			return err
		}
		return tx.AuditRecord(r.Context(), models.Audit{WorkspaceID: ws.ID, Actor: actor(r), Action: "workspace.create",
			SubjectType: "workspace", SubjectID: ws.Slug, After: workspaceJSON{ws.Slug, ws.Name}})
	})
	if errors.Is(err, models.ErrConflict) {
		writeError(w, http.StatusConflict, "slug", "workspace "+in.Slug+" already exists")
		return
	}
	if err != nil {
		serverError(a.Log, w, r, err)
		return
	}
	writeJSON(w, http.StatusCreated, workspaceJSON{ws.Slug, ws.Name})
}

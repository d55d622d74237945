package handlers

import (
	"context"
	"net/http"

	"github.com/leadgate/leadgate/internal/principal"
	"github.com/leadgate/leadgate/models"
)

// wsKey holds the workspace that a LoadWorkspace (the API's or the pages') resolved for the request.
type wsKey struct{}

// WithWorkspace returns ctx carrying ws for WorkspaceFrom.
func WithWorkspace(ctx context.Context, ws models.Workspace) context.Context {
	return context.WithValue(ctx, wsKey{}, ws)
}

func WorkspaceFrom(r *http.Request) models.Workspace {
	ws, _ := r.Context().Value(wsKey{}).(models.Workspace)
	return ws
}

func Actor(r *http.Request) string {
	p, _ := principal.From(r.Context())
	return p.Actor()
}

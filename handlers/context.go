package handlers

import (
	"context"
	"net/http"

	"github.com/leadgate/leadgate/internal/principal"
	"github.com/leadgate/leadgate/models"
)

// wsKey holds the workspace that a LoadWorkspace (the API's or the pages') resolved for the request.
type wsKey struct{}

// withWorkspace returns ctx carrying ws for workspaceFrom.
func withWorkspace(ctx context.Context, ws models.Workspace) context.Context {
	return context.WithValue(ctx, wsKey{}, ws)
}

func workspaceFrom(r *http.Request) models.Workspace {
	ws, _ := r.Context().Value(wsKey{}).(models.Workspace)
	return ws
}

func actor(r *http.Request) string {
	p, _ := principal.From(r.Context())
	return p.Actor()
}

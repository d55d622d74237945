// Package api serves the admin JSON API under /api/v1 (CONTRACT.md), its OpenAPI document and the
// health probes /healthz and /readyz.
package api

import (
	"context"
	"errors"
	"log/slog"
	"net/http"

	"github.com/go-chi/chi/v5"

	"github.com/leadgate/leadgate/handlers"
	"github.com/leadgate/leadgate/ingest"
	"github.com/leadgate/leadgate/internal/secretbox"
	"github.com/leadgate/leadgate/lifecycle/apply"
	"github.com/leadgate/leadgate/models"
)

// API serves the admin JSON API under /api/v1 (CONTRACT.md).
type API struct {
	Store     *models.Store
	Box       *secretbox.Box
	Sources   *ingest.SourceCache // forgotten on edits so changes apply at once
	PublicURL string
	Log       *slog.Logger
	Applier   *apply.Applier
	// EraseHooks erase a contact from tables owned by other packages (CRM sync state, the sandbox).
	EraseHooks []func(ctx context.Context, st *models.Store, c models.Contact) error
}

// LoadWorkspace resolves {ws} once for every route below it and answers 404 itself.
func (a *API) LoadWorkspace(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ws, err := a.Store.WorkspaceBySlug(r.Context(), chi.URLParam(r, "ws"))
		if errors.Is(err, models.ErrNotFound) {
			// A caller limited to some workspaces gets the same 403 for a slug that does not exist as
			// for one it may not open, so it cannot probe which workspaces exist.
			if restricted, rerr := handlers.IsRestricted(r, a.Store); rerr == nil && restricted {
				handlers.WriteError(w, http.StatusForbidden, "ws", "no access to workspace "+chi.URLParam(r, "ws"))
				return
			}
			handlers.WriteError(w, http.StatusNotFound, "ws", "unknown workspace "+chi.URLParam(r, "ws"))
			return
		}
		if err != nil {
			handlers.ServerError(a.Log, w, r, err)
			return
		}
		// A signed-in user or a scoped token limited to other workspaces is
		// refused; an unscoped token's role applies everywhere.
		ctx, allowed, err := handlers.EnterWorkspace(r.Context(), a.Store, ws)
		if err != nil {
			handlers.ServerError(a.Log, w, r, err)
			return
		}
		if !allowed {
			handlers.WriteError(w, http.StatusForbidden, "ws", "no access to workspace "+ws.Slug)
			return
		}
		next.ServeHTTP(w, r.WithContext(handlers.WithWorkspace(ctx, ws)))
	})
}

// InstanceWide guards the admin API's instance-wide actions (creating
// workspaces; users, tokens and instance settings as they are added): a
// caller limited to some workspaces gets a JSON 403, since these would reach
// beyond its workspaces or let it widen itself.
func (a *API) InstanceWide(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		restricted, err := handlers.IsRestricted(r, a.Store)
		if err != nil {
			handlers.ServerError(a.Log, w, r, err)
			return
		}
		if restricted {
			handlers.WriteError(w, http.StatusForbidden, "", "limited to some workspaces: instance-wide actions need a token without a workspace scope")
			return
		}
		next.ServeHTTP(w, r)
	})
}

package api

import (
	"errors"
	"log/slog"
	"net/http"
	"strconv"
	"time"

	"github.com/go-chi/chi/v5"

	"github.com/leadgate/leadgate/actions"
	"github.com/leadgate/leadgate/handlers"
	"github.com/leadgate/leadgate/internal/egress"
	"github.com/leadgate/leadgate/internal/secretbox"
	"github.com/leadgate/leadgate/models"
)

// Destinations serves /api/v1/workspaces/{ws}/destinations (CONTRACT.md) and the sync's other settings:
// credentials are sealed with the secret key and never returned.
type Destinations struct {
	Store     *models.Store
	Box       *secretbox.Box
	Connector actions.DestinationConnector
	Sync      actions.SyncControl
	Log       *slog.Logger
	// Egress refuses, at save time, URLs the SSRF guard would refuse when dialing (nil: public only).
	Egress *egress.Guard
}

// act is the destination actions over h's store, box, connector, sync and egress guard.
func (h *Destinations) act() *actions.Destinations {
	return &actions.Destinations{Store: h.Store, Box: h.Box, Connector: h.Connector, Sync: h.Sync, Egress: h.Egress}
}

// CreateDestination answers 201 {"id"}.
func (h *Destinations) CreateDestination(w http.ResponseWriter, r *http.Request) {
	var in actions.DestinationInput
	if !decodeJSON(w, r, &in) {
		return
	}
	id, err := h.act().CreateDestination(r.Context(), handlers.WorkspaceFrom(r).ID, handlers.Actor(r), in)
	if err != nil {
		writeActionError(h.Log, w, r, err)
		return
	}
	handlers.WriteJSON(w, http.StatusCreated, map[string]any{"id": id})
}

// ListDestinations answers {"destinations":[...]} without credentials.
func (h *Destinations) ListDestinations(w http.ResponseWriter, r *http.Request) {
	list, err := h.Store.DestinationList(r.Context(), handlers.WorkspaceFrom(r).ID)
	if err != nil {
		handlers.ServerError(h.Log, w, r, err)
		return
	}
	out := make([]actions.DestinationView, len(list))
	for i, d := range list {
		out[i] = actions.ViewDestination(d)
	}
	handlers.WriteJSON(w, http.StatusOK, map[string]any{"destinations": out})
}

// GetDestination answers one destination.
func (h *Destinations) GetDestination(w http.ResponseWriter, r *http.Request) {
	if d, ok := h.load(w, r); ok {
		handlers.WriteJSON(w, http.StatusOK, actions.ViewDestination(d))
	}
}

// UpdateDestination edits, pauses ("paused":true: work is held) or resumes ("paused":false: work drains).
func (h *Destinations) UpdateDestination(w http.ResponseWriter, r *http.Request) {
	d, ok := h.load(w, r)
	if !ok {
		return
	}
	var in actions.DestinationInput
	if !decodeJSON(w, r, &in) {
		return
	}
	fresh, err := h.act().UpdateDestination(r.Context(), d, handlers.Actor(r), in)
	if err != nil {
		writeActionError(h.Log, w, r, err)
		return
	}
	handlers.WriteJSON(w, http.StatusOK, actions.ViewDestination(fresh))
}

// DeleteDestination removes a destination; its pending work is dropped with it.
func (h *Destinations) DeleteDestination(w http.ResponseWriter, r *http.Request) {
	d, ok := h.load(w, r)
	if !ok {
		return
	}
	now := time.Now().UTC()
	before := actions.ViewDestination(d)
	d.DeletedAt = &now
	err := h.Store.Tx(r.Context(), func(tx *models.Store) error {
		if err := tx.DestinationUpdate(r.Context(), &d); err != nil {
			return err
		}
		if err := tx.SyncDropDestination(r.Context(), d.ID); err != nil {
			return err
		}
		return tx.AuditRecord(r.Context(), models.Audit{WorkspaceID: d.WorkspaceID, Actor: handlers.Actor(r), Action: "destination.delete",
			SubjectType: "destination", SubjectID: strconv.FormatInt(d.ID, 10), Before: before})
	})
	if err != nil {
		handlers.ServerError(h.Log, w, r, err)
		return
	}
	h.Connector.Forget(d.ID)
	w.WriteHeader(http.StatusNoContent)
}

// load reads {id} of the current workspace, answering 404 itself.
func (h *Destinations) load(w http.ResponseWriter, r *http.Request) (models.Destination, bool) {
	id, err := strconv.ParseInt(chi.URLParam(r, "id"), 10, 64)
	if err != nil {
		handlers.WriteError(w, http.StatusNotFound, "id", "unknown destination")
		return models.Destination{}, false
	}
	d, err := h.Store.DestinationGet(r.Context(), handlers.WorkspaceFrom(r).ID, id)
	if errors.Is(err, models.ErrNotFound) {
		handlers.WriteError(w, http.StatusNotFound, "id", "unknown destination")
		return d, false
	}
	if err != nil {
		handlers.ServerError(h.Log, w, r, err)
		return d, false
	}
	return d, true
}

package api

import (
	"log/slog"
	"net/http"
	"time"

	"github.com/go-chi/chi/v5"

	"github.com/leadgate/leadgate/actions"
	"github.com/leadgate/leadgate/guards/alarm"
	"github.com/leadgate/leadgate/guards/alert"
	"github.com/leadgate/leadgate/guards/loop"
	"github.com/leadgate/leadgate/handlers"
	"github.com/leadgate/leadgate/ingest/filter"
	"github.com/leadgate/leadgate/internal/secretbox"
	"github.com/leadgate/leadgate/models"
)

// Guards serves the guard settings of a workspace: loop settings and the
// circuit breakers, source filters, silence and health alarms, alert
// channels. Every change is audited in the transaction that makes it.
type Guards struct {
	Store   *models.Store
	Box     *secretbox.Box
	Log     *slog.Logger
	Filters *filter.Loader         // forgotten after a save (nil: caches expire on their own)
	Breaker *loop.Breaker          // clears Redis counts on reset
	Guards  *alert.WorkspaceGuards // SSRF guard per workspace
	Sender  *alert.Sender          // test sends
	Alarms  *alarm.Monitor         // evaluates an alarm again once saved (nil: at the next check)
	Now     func() time.Time
}

// actions is the action layer over the same dependencies, which the admin pages call too.
func (g *Guards) actions() *actions.Guards {
	return &actions.Guards{Store: g.Store, Box: g.Box, Log: g.Log, Filters: g.Filters, Breaker: g.Breaker, Guards: g.Guards,
		Sender: g.Sender, Alarms: g.Alarms, Now: g.Now}
}

type loopSettingsJSON struct {
	Saved     models.LoopSettings `json:"saved"`
	Effective models.LoopSettings `json:"effective"`
}

// GetLoopSettings answers the saved loop settings and the values in force.
func (g *Guards) GetLoopSettings(w http.ResponseWriter, r *http.Request) {
	s, err := g.Store.GuardSettingsGet(r.Context(), handlers.WorkspaceFrom(r).ID)
	if err != nil {
		handlers.ServerError(g.Log, w, r, err)
		return
	}
	handlers.WriteJSON(w, http.StatusOK, loopSettingsJSON{Saved: s.Loop, Effective: s.Loop.WithDefaults()})
}

// PutLoopSettings replaces the loop settings (0 / "" fields mean the default).
func (g *Guards) PutLoopSettings(w http.ResponseWriter, r *http.Request) {
	var in models.LoopSettings
	if !decodeJSON(w, r, &in) {
		return
	}
	saved, err := g.actions().PutLoopSettings(r.Context(), handlers.WorkspaceFrom(r), handlers.Actor(r), in)
	if err != nil {
		writeActionError(g.Log, w, r, err)
		return
	}
	handlers.WriteJSON(w, http.StatusOK, loopSettingsJSON{Saved: saved, Effective: saved.WithDefaults()})
}

// GetAlertingSettings answers the heartbeat URL and the allowed hosts.
func (g *Guards) GetAlertingSettings(w http.ResponseWriter, r *http.Request) {
	s, err := g.Store.GuardSettingsGet(r.Context(), handlers.WorkspaceFrom(r).ID)
	if err != nil {
		handlers.ServerError(g.Log, w, r, err)
		return
	}
	if s.Alerting.AllowedHosts == nil {
		s.Alerting.AllowedHosts = []string{}
	}
	handlers.WriteJSON(w, http.StatusOK, s.Alerting)
}

// PutAlertingSettings replaces them (admin only: allowed hosts open the SSRF guard).
func (g *Guards) PutAlertingSettings(w http.ResponseWriter, r *http.Request) {
	var in models.AlertingSettings
	if !decodeJSON(w, r, &in) {
		return
	}
	saved, err := g.actions().PutAlertingSettings(r.Context(), handlers.WorkspaceFrom(r), handlers.Actor(r), in)
	if err != nil {
		writeActionError(g.Log, w, r, err)
		return
	}
	handlers.WriteJSON(w, http.StatusOK, saved)
}

// ListBreakers answers the workspace's circuit breakers (?status=tripped|reset|all).
func (g *Guards) ListBreakers(w http.ResponseWriter, r *http.Request) {
	page, ok := pageFrom(w, r)
	if !ok {
		return
	}
	status := r.URL.Query().Get("status")
	if status != "" && status != models.BreakerTripped && status != models.BreakerReset && status != "all" {
		handlers.WriteError(w, http.StatusBadRequest, "status", "status must be tripped, reset or all")
		return
	}
	list, err := g.Store.BreakerList(r.Context(), handlers.WorkspaceFrom(r).ID, status, page)
	if err != nil {
		handlers.WriteError(w, http.StatusBadRequest, "cursor", "invalid cursor")
		return
	}
	last := ""
	if len(list) > 0 {
		last = list[len(list)-1].TrippedAt.Format(time.RFC3339Nano)
	}
	handlers.WriteJSON(w, http.StatusOK, map[string]any{"breakers": list, "next_cursor": nextCursor(len(list), page.Limit, last)})
}

// ResetBreaker closes a contact's tripped breaker: its events flow again
// (its held dead letters stay for an operator to replay or discard).
func (g *Guards) ResetBreaker(w http.ResponseWriter, r *http.Request) {
	after, err := g.actions().ResetBreaker(r.Context(), handlers.WorkspaceFrom(r), handlers.Actor(r), chi.URLParam(r, "contact"))
	if err != nil {
		writeActionError(g.Log, w, r, err)
		return
	}
	handlers.WriteJSON(w, http.StatusOK, after)
}

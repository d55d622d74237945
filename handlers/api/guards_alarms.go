package api

import (
	"net/http"
	"strconv"

	"github.com/go-chi/chi/v5"

	"github.com/leadgate/leadgate/actions"
	"github.com/leadgate/leadgate/guards/alarm"
	"github.com/leadgate/leadgate/handlers"
	"github.com/leadgate/leadgate/models"
)

// ListSilenceAlarms answers the workspace's silence alarms with their state.
func (g *Guards) ListSilenceAlarms(w http.ResponseWriter, r *http.Request) {
	list, err := g.Store.SilenceAlarmList(r.Context(), handlers.WorkspaceFrom(r).ID)
	if err != nil {
		handlers.ServerError(g.Log, w, r, err)
		return
	}
	if list == nil {
		list = []models.SilenceAlarm{}
	}
	handlers.WriteJSON(w, http.StatusOK, map[string]any{"silence_alarms": list})
}

// CreateSilenceAlarm adds a silence alarm (one per scope and metric).
func (g *Guards) CreateSilenceAlarm(w http.ResponseWriter, r *http.Request) {
	var in actions.SilenceInput
	if !decodeJSON(w, r, &in) {
		return
	}
	a, err := g.actions().CreateSilenceAlarm(r.Context(), handlers.WorkspaceFrom(r), handlers.Actor(r), in)
	if err != nil {
		writeActionError(g.Log, w, r, err)
		return
	}
	handlers.WriteJSON(w, http.StatusCreated, a)
}

// silenceID reads {id}; an id that is no number names no alarm.
func silenceID(w http.ResponseWriter, r *http.Request) (int64, bool) {
	id, err := strconv.ParseInt(chi.URLParam(r, "id"), 10, 64)
	if err != nil {
		handlers.WriteError(w, http.StatusNotFound, "id", "unknown silence alarm")
		return 0, false
	}
	return id, true
}

// UpdateSilenceAlarm replaces an alarm's configuration (a new episode starts).
func (g *Guards) UpdateSilenceAlarm(w http.ResponseWriter, r *http.Request) {
	id, ok := silenceID(w, r)
	if !ok {
		return
	}
	var in actions.SilenceInput
	if !decodeJSON(w, r, &in) {
		return
	}
	a, err := g.actions().UpdateSilenceAlarm(r.Context(), handlers.WorkspaceFrom(r), handlers.Actor(r), id, in)
	if err != nil {
		writeActionError(g.Log, w, r, err)
		return
	}
	handlers.WriteJSON(w, http.StatusOK, a)
}

// DeleteSilenceAlarm removes an alarm.
func (g *Guards) DeleteSilenceAlarm(w http.ResponseWriter, r *http.Request) {
	id, ok := silenceID(w, r)
	if !ok {
		return
	}
	if err := g.actions().DeleteSilenceAlarm(r.Context(), handlers.WorkspaceFrom(r), handlers.Actor(r), id); err != nil {
		writeActionError(g.Log, w, r, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

type healthAlarmJSON struct {
	alarm.HealthMetric
	Threshold float64  `json:"threshold"`
	Enabled   bool     `json:"enabled"`
	Firing    bool     `json:"firing"`
	Since     any      `json:"firing_since"`
	LastValue *float64 `json:"last_value"`
}

// ListHealthAlarms answers every health metric with its threshold and state.
func (g *Guards) ListHealthAlarms(w http.ResponseWriter, r *http.Request) {
	stored, err := g.Store.HealthAlarmList(r.Context(), handlers.WorkspaceFrom(r).ID)
	if err != nil {
		handlers.ServerError(g.Log, w, r, err)
		return
	}
	by := map[string]models.HealthAlarm{}
	for _, a := range stored {
		by[a.Metric] = a
	}
	out := make([]healthAlarmJSON, 0, len(alarm.HealthMetrics))
	for _, m := range alarm.HealthMetrics {
		v := healthAlarmJSON{HealthMetric: m, Threshold: m.Default, Enabled: true}
		if a, ok := by[m.Name]; ok {
			v.Threshold, v.Enabled, v.Firing, v.LastValue = a.Threshold, a.Enabled, a.Firing, a.LastValue
			if a.FiringSince != nil {
				v.Since = a.FiringSince
			}
		}
		out = append(out, v)
	}
	handlers.WriteJSON(w, http.StatusOK, map[string]any{"health_alarms": out})
}

// PutHealthAlarm sets one metric's threshold and whether it is enabled.
func (g *Guards) PutHealthAlarm(w http.ResponseWriter, r *http.Request) {
	metric, ok := alarm.HealthMetricByName(chi.URLParam(r, "metric"))
	if !ok {
		handlers.WriteError(w, http.StatusNotFound, "metric", "unknown health metric")
		return
	}
	var in actions.HealthInput
	if !decodeJSON(w, r, &in) {
		return
	}
	saved, err := g.actions().PutHealthAlarm(r.Context(), handlers.WorkspaceFrom(r), handlers.Actor(r), metric, in)
	if err != nil {
		writeActionError(g.Log, w, r, err)
		return
	}
	handlers.WriteJSON(w, http.StatusOK, saved)
}

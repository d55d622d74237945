package handlers

import (
	"encoding/json"
	"errors"
	"net/http"
	"strconv"

	"github.com/go-chi/chi/v5"

	"github.com/leadgate/leadgate/guards/alarm"
	"github.com/leadgate/leadgate/models"
)

type silenceInput struct {
	SourceID         *int64              `json:"source_id"`
	Metric           string              `json:"metric"`
	Rule             string              `json:"rule"` // learned (default) | static
	ThresholdSeconds int                 `json:"threshold_seconds"`
	ReminderSeconds  int                 `json:"reminder_seconds"`
	BusinessHours    alarm.BusinessHours `json:"business_hours"`
	MinDailyVolume   int                 `json:"min_daily_volume"`
	Enabled          *bool               `json:"enabled"`
}

// validate fills defaults and returns the field and message of the first problem.
func (in *silenceInput) validate() (field, msg string) {
	if in.Metric == "" {
		in.Metric = models.SilenceApply
	}
	if in.Metric != models.SilenceApply && in.Metric != models.SilenceCRMWrite {
		return "metric", "metric must be apply or crm_write"
	}
	if in.Metric == models.SilenceCRMWrite && in.SourceID != nil {
		return "source_id", "a crm_write alarm watches the whole workspace: CRM writes are not per source"
	}
	switch {
	case in.Rule == "" && in.Metric == models.SilenceApply:
		in.Rule = models.SilenceRuleLearned
	case in.Rule == "":
		in.Rule = models.SilenceRuleStatic
	case in.Rule != models.SilenceRuleLearned && in.Rule != models.SilenceRuleStatic:
		return "rule", "rule must be learned or static"
	case in.Rule == models.SilenceRuleLearned && in.Metric != models.SilenceApply:
		return "rule", "the learned rule watches leads applied (metric apply); CRM writes use the static rule"
	}
	if in.ThresholdSeconds == 0 {
		in.ThresholdSeconds = int(alarm.DefaultSilenceThreshold.Seconds())
	}
	if in.ReminderSeconds == 0 {
		in.ReminderSeconds = int(alarm.DefaultSilenceReminder.Seconds())
	}
	if in.ThresholdSeconds < 60 || in.ThresholdSeconds > 30*86400 {
		return "threshold_seconds", "threshold_seconds must be from 60 to 2592000"
	}
	if in.ReminderSeconds < 60 || in.ReminderSeconds > 30*86400 {
		return "reminder_seconds", "reminder_seconds must be from 60 to 2592000"
	}
	if in.MinDailyVolume < 0 || in.MinDailyVolume > 1_000_000 {
		return "min_daily_volume", "min_daily_volume must be from 0 to 1000000"
	}
	if _, err := in.BusinessHours.Compile(); err != nil {
		return "business_hours", err.Error()
	}
	return "", ""
}

func (in silenceInput) model(workspaceID int64) models.SilenceAlarm {
	bh, _ := json.Marshal(in.BusinessHours)
	enabled := in.Enabled == nil || *in.Enabled
	return models.SilenceAlarm{WorkspaceID: workspaceID, SourceID: in.SourceID, Metric: in.Metric, Rule: in.Rule, ThresholdSeconds: in.ThresholdSeconds,
		ReminderSeconds: in.ReminderSeconds, BusinessHours: bh, MinDailyVolume: in.MinDailyVolume, Enabled: enabled}
}

// readSilence decodes and validates a silence alarm body, checking its source.
func (g *GuardsAPI) readSilence(w http.ResponseWriter, r *http.Request) (silenceInput, bool) {
	var in silenceInput
	if !decodeJSON(w, r, &in) {
		return in, false
	}
	if field, msg := in.validate(); field != "" {
		writeError(w, http.StatusBadRequest, field, msg)
		return in, false
	}
	if in.SourceID != nil {
		src, err := g.Store.SourceGet(r.Context(), workspaceFrom(r).ID, *in.SourceID)
		if errors.Is(err, models.ErrNotFound) || (err == nil && src.DeletedAt != nil) {
			writeError(w, http.StatusBadRequest, "source_id", "unknown source")
			return in, false
		}
		if err != nil {
			serverError(g.Log, w, r, err)
			return in, false
		}
	}
	return in, true
}

// ListSilenceAlarms answers the workspace's silence alarms with their state.
func (g *GuardsAPI) ListSilenceAlarms(w http.ResponseWriter, r *http.Request) {
	list, err := g.Store.SilenceAlarmList(r.Context(), workspaceFrom(r).ID)
	if err != nil {
		serverError(g.Log, w, r, err)
		return
	}
	if list == nil {
		list = []models.SilenceAlarm{}
	}
	writeJSON(w, http.StatusOK, map[string]any{"silence_alarms": list})
}

// CreateSilenceAlarm adds a silence alarm (one per scope and metric).
func (g *GuardsAPI) CreateSilenceAlarm(w http.ResponseWriter, r *http.Request) {
	in, ok := g.readSilence(w, r)
	if !ok {
		return
	}
	ws := workspaceFrom(r)
	a := in.model(ws.ID)
	err := g.Store.Tx(r.Context(), func(tx *models.Store) error {
		if err := tx.SilenceAlarmCreate(r.Context(), &a); err != nil {
			return err
		}
		return tx.AuditRecord(r.Context(), models.Audit{WorkspaceID: ws.ID, Actor: actor(r), Action: "silence_alarm.create",
			SubjectType: "silence_alarm", SubjectID: strconv.FormatInt(a.ID, 10), After: in})
	})
	if errors.Is(err, models.ErrConflict) {
		writeError(w, http.StatusConflict, "metric", "this scope already has a silence alarm for this metric")
		return
	}
	if err != nil {
		serverError(g.Log, w, r, err)
		return
	}
	g.answerSilence(w, r, a.ID, http.StatusCreated)
}

// answerSilence answers an alarm just saved, its state evaluated again
// under the new configuration (the answer and the page show the state in force).
func (g *GuardsAPI) answerSilence(w http.ResponseWriter, r *http.Request, id int64, status int) {
	a, err := g.Store.SilenceAlarmGet(r.Context(), workspaceFrom(r).ID, id)
	if err != nil {
		serverError(g.Log, w, r, err)
		return
	}
	if g.Alarms != nil {
		if err := g.Alarms.CheckSilenceAlarm(r.Context(), a); err != nil {
			g.Log.Warn("guards: silence alarm saved; its state is refreshed by the next check", "alarm", id, "err", err)
		} else if a, err = g.Store.SilenceAlarmGet(r.Context(), workspaceFrom(r).ID, id); err != nil {
			serverError(g.Log, w, r, err)
			return
		}
	}
	writeJSON(w, status, a)
}

func silenceID(w http.ResponseWriter, r *http.Request) (int64, bool) {
	id, err := strconv.ParseInt(chi.URLParam(r, "id"), 10, 64)
	if err != nil {
		writeError(w, http.StatusNotFound, "id", "unknown silence alarm")
		return 0, false
	}
	return id, true
}

// UpdateSilenceAlarm replaces an alarm's configuration (a new episode starts).
func (g *GuardsAPI) UpdateSilenceAlarm(w http.ResponseWriter, r *http.Request) {
	id, ok := silenceID(w, r)
	if !ok {
		return
	}
	in, ok := g.readSilence(w, r)
	if !ok {
		return
	}
	ws := workspaceFrom(r)
	a := in.model(ws.ID)
	a.ID = id
	err := g.Store.Tx(r.Context(), func(tx *models.Store) error {
		before, err := tx.SilenceAlarmGet(r.Context(), ws.ID, id)
		if err != nil {
			return err
		}
		if err := tx.SilenceAlarmUpdate(r.Context(), a); err != nil {
			return err
		}
		return tx.AuditRecord(r.Context(), models.Audit{WorkspaceID: ws.ID, Actor: actor(r), Action: "silence_alarm.update",
			SubjectType: "silence_alarm", SubjectID: strconv.FormatInt(id, 10), Before: before, After: in})
	})
	switch {
	case errors.Is(err, models.ErrNotFound):
		writeError(w, http.StatusNotFound, "id", "unknown silence alarm")
	case errors.Is(err, models.ErrConflict):
		writeError(w, http.StatusConflict, "metric", "this scope already has a silence alarm for this metric")
	case err != nil:
		serverError(g.Log, w, r, err)
	default:
		g.answerSilence(w, r, id, http.StatusOK)
	}
}

// DeleteSilenceAlarm removes an alarm.
func (g *GuardsAPI) DeleteSilenceAlarm(w http.ResponseWriter, r *http.Request) {
	id, ok := silenceID(w, r)
	if !ok {
		return
	}
	ws := workspaceFrom(r)
	err := g.Store.Tx(r.Context(), func(tx *models.Store) error {
		before, err := tx.SilenceAlarmGet(r.Context(), ws.ID, id)
		if err != nil {
			return err
		}
		if err := tx.SilenceAlarmDelete(r.Context(), ws.ID, id); err != nil {
			return err
		}
		return tx.AuditRecord(r.Context(), models.Audit{WorkspaceID: ws.ID, Actor: actor(r), Action: "silence_alarm.delete",
			SubjectType: "silence_alarm", SubjectID: strconv.FormatInt(id, 10), Before: before})
	})
	if errors.Is(err, models.ErrNotFound) {
		writeError(w, http.StatusNotFound, "id", "unknown silence alarm")
		return
	}
	if err != nil {
		serverError(g.Log, w, r, err)
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
func (g *GuardsAPI) ListHealthAlarms(w http.ResponseWriter, r *http.Request) {
	stored, err := g.Store.HealthAlarmList(r.Context(), workspaceFrom(r).ID)
	if err != nil {
		serverError(g.Log, w, r, err)
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
	writeJSON(w, http.StatusOK, map[string]any{"health_alarms": out})
}

type healthInput struct {
	Threshold *float64 `json:"threshold"`
	Enabled   *bool    `json:"enabled"`
}

// PutHealthAlarm sets one metric's threshold and whether it is enabled.
func (g *GuardsAPI) PutHealthAlarm(w http.ResponseWriter, r *http.Request) {
	metric, ok := alarm.HealthMetricByName(chi.URLParam(r, "metric"))
	if !ok {
		writeError(w, http.StatusNotFound, "metric", "unknown health metric")
		return
	}
	var in healthInput
	if !decodeJSON(w, r, &in) {
		return
	}
	threshold, enabled := metric.Default, true
	if in.Threshold != nil {
		threshold = *in.Threshold
	}
	if in.Enabled != nil {
		enabled = *in.Enabled
	}
	if threshold < 0 || threshold > 1e9 || threshold != threshold {
		writeError(w, http.StatusBadRequest, "threshold", "threshold must be a number from 0 to 1e9")
		return
	}
	if metric.Name == alarm.MetricIngestRejectionRate && threshold > 100 {
		writeError(w, http.StatusBadRequest, "threshold", "a rate threshold is a percentage from 0 to 100")
		return
	}
	ws := workspaceFrom(r)
	after := map[string]any{"metric": metric.Name, "threshold": threshold, "enabled": enabled}
	err := g.Store.Tx(r.Context(), func(tx *models.Store) error {
		var before any
		list, err := tx.HealthAlarmList(r.Context(), ws.ID)
		if err != nil {
			return err
		}
		for _, a := range list {
			if a.Metric == metric.Name {
				before = map[string]any{"metric": a.Metric, "threshold": a.Threshold, "enabled": a.Enabled}
			}
		}
		if err := tx.HealthAlarmConfigure(r.Context(), ws.ID, metric.Name, threshold, enabled); err != nil {
			return err
		}
		return tx.AuditRecord(r.Context(), models.Audit{WorkspaceID: ws.ID, Actor: actor(r), Action: "health_alarm.update",
			SubjectType: "health_alarm", SubjectID: metric.Name, Before: before, After: after})
	})
	if err != nil {
		serverError(g.Log, w, r, err)
		return
	}
	if g.Alarms != nil {
		// The state under the new threshold, now rather than at the next check.
		if err := g.Alarms.CheckWorkspaceHealth(r.Context(), ws.ID); err != nil {
			g.Log.Warn("guards: health alarm saved; its state is refreshed by the next check", "metric", metric.Name, "err", err)
		}
	}
	writeJSON(w, http.StatusOK, after)
}

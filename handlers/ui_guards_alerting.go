package handlers

import (
	"net/http"
	"strconv"
	"strings"

	"github.com/go-chi/chi/v5"

	"github.com/leadgate/leadgate/guards/alarm"
	"github.com/leadgate/leadgate/internal/principal"
	"github.com/leadgate/leadgate/models"
	"github.com/leadgate/leadgate/views"
)

// canAdmin reports whether the caller is an admin in the current workspace.
func canAdmin(r *http.Request) bool {
	p, _ := principal.From(r.Context())
	return models.RoleAtLeast(p.Role, models.RoleAdmin)
}

// healthRows lists every health metric with its saved alarm and state;
// typed overrides what the operator just submitted for a metric.
func (u *UI) healthRows(r *http.Request, wsID int64, typed map[string]views.HealthAlarmRow) ([]views.HealthAlarmRow, error) {
	stored, err := u.Store.HealthAlarmList(r.Context(), wsID)
	if err != nil {
		return nil, err
	}
	by := map[string]models.HealthAlarm{}
	for _, a := range stored {
		by[a.Metric] = a
	}
	out := make([]views.HealthAlarmRow, 0, len(alarm.HealthMetrics))
	for _, m := range alarm.HealthMetrics {
		row := views.HealthAlarmRow{Metric: m.Name, Description: m.Describes, Unit: m.Unit, Severity: m.Severity,
			Default: formatNum(m.Default), Threshold: formatNum(m.Default), Enabled: true}
		if a, ok := by[m.Name]; ok {
			row.Threshold, row.Enabled, row.Firing, row.Since = formatNum(a.Threshold), a.Enabled, a.Firing, a.FiringSince
			if a.LastValue != nil {
				row.LastValue = formatNum(*a.LastValue)
			}
		}
		if t, ok := typed[m.Name]; ok {
			row.Threshold, row.Enabled = t.Threshold, t.Enabled
		}
		out = append(out, row)
	}
	return out, nil
}

func formatNum(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }

// SaveHealthAlarmUI sets one health metric's threshold and switch through the API's handler.
func (u *UI) SaveHealthAlarmUI(w http.ResponseWriter, r *http.Request) {
	metric, ok := alarm.HealthMetricByName(chi.URLParam(r, "metric"))
	if !ok {
		u.NotFound(w, r)
		return
	}
	typed := views.HealthAlarmRow{Threshold: strings.TrimSpace(r.PostFormValue("threshold")), Enabled: r.PostFormValue("enabled") == "true"}
	f := guardForms{health: map[string]views.HealthAlarmRow{metric.Name: typed}}
	key := "health-" + metric.Name
	body := map[string]any{"enabled": typed.Enabled}
	if typed.Threshold != "" {
		n, err := strconv.ParseFloat(typed.Threshold, 64)
		if err != nil {
			f.errs = map[string]views.FieldErrors{key: {"threshold": "Enter a number (empty for the default, " + formatNum(metric.Default) + ")."}}
			u.guardsPage(w, r, http.StatusUnprocessableEntity, f)
			return
		}
		body["threshold"] = n
	}
	res := u.viaAPI(r, u.Guards.PutHealthAlarm, http.MethodPut, body)
	if u.guardFailed(w, r, res, f, key, func(s string) string {
		if s == "threshold" {
			return s
		}
		return "form"
	}) {
		return
	}
	state := "off"
	if typed.Enabled {
		state = "on"
	}
	u.flashRedirect(w, r, guardsPath(r), "ok", "Health alarm "+metric.Name+" saved ("+state+").")
}

// SaveAlertingSettingsUI saves the heartbeat URL and allowed hosts (admins only).
func (u *UI) SaveAlertingSettingsUI(w http.ResponseWriter, r *http.Request) {
	form := views.AlertingForm{HeartbeatURL: strings.TrimSpace(r.PostFormValue("heartbeat_url")), AllowedHosts: strings.TrimSpace(r.PostFormValue("allowed_hosts"))}
	hosts := strings.FieldsFunc(form.AllowedHosts, func(c rune) bool { return c == '\n' || c == '\r' || c == ',' || c == ' ' || c == '\t' })
	in := models.AlertingSettings{HeartbeatURL: form.HeartbeatURL, AllowedHosts: append([]string{}, hosts...)}
	res := u.viaAPI(r, u.Guards.PutAlertingSettings, http.MethodPut, in)
	if u.guardFailed(w, r, res, guardForms{alerting: &form}, "alerting", func(s string) string {
		head, _, _ := strings.Cut(s, "[")
		if head == "heartbeat_url" || head == "allowed_hosts" {
			return head
		}
		return "form"
	}) {
		return
	}
	u.flashRedirect(w, r, guardsPath(r), "ok", "Alerting settings saved.")
}

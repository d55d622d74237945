package ui

import (
	"math"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/go-chi/chi/v5"

	"github.com/leadgate/leadgate/actions"
	"github.com/leadgate/leadgate/guards/alarm"
	"github.com/leadgate/leadgate/handlers"
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
				row.LastValue = healthValue(*a.LastValue, m.Unit)
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

// healthValue is a measured value as a person reads it: rounded, with its
// unit ("37 min", "12.5 %", "3 dead letters"), seconds shown as a duration.
func healthValue(v float64, unit string) string {
	switch unit {
	case "seconds":
		return roundedDuration(time.Duration(v * float64(time.Second)))
	case "percent":
		return strconv.FormatFloat(math.Round(v*10)/10, 'f', -1, 64) + " %"
	}
	return strconv.FormatFloat(math.Round(v*10)/10, 'f', -1, 64) + " " + unit
}

// roundedDuration shows a duration to its two largest units (2 h 5 min, 45 s).
func roundedDuration(d time.Duration) string {
	switch {
	case d < time.Minute:
		return strconv.Itoa(int(d.Round(time.Second).Seconds())) + " s"
	case d < time.Hour:
		return strconv.Itoa(int(d.Round(time.Minute).Minutes())) + " min"
	case d < 48*time.Hour:
		d = d.Round(time.Minute)
		h, m := int(d.Hours()), int(d.Minutes())%60
		if m == 0 {
			return strconv.Itoa(h) + " h"
		}
		return strconv.Itoa(h) + " h " + strconv.Itoa(m) + " min"
	}
	d = d.Round(time.Hour)
	days, h := int(d.Hours())/24, int(d.Hours())%24
	if h == 0 {
		return strconv.Itoa(days) + " d"
	}
	return strconv.Itoa(days) + " d " + strconv.Itoa(h) + " h"
}

// SaveHealthAlarmUI sets one health metric's threshold and switch.
func (u *UI) SaveHealthAlarmUI(w http.ResponseWriter, r *http.Request) {
	metric, ok := alarm.HealthMetricByName(chi.URLParam(r, "metric"))
	if !ok {
		u.NotFound(w, r)
		return
	}
	typed := views.HealthAlarmRow{Threshold: strings.TrimSpace(r.PostFormValue("threshold")), Enabled: r.PostFormValue("enabled") == "true"}
	f := guardForms{health: map[string]views.HealthAlarmRow{metric.Name: typed}}
	key := "health-" + metric.Name
	enabled := typed.Enabled
	in := actions.HealthInput{Enabled: &enabled}
	if typed.Threshold != "" {
		n, err := strconv.ParseFloat(typed.Threshold, 64)
		if err != nil {
			f.errs = map[string]views.FieldErrors{key: {"threshold": "Enter a number (empty for the default, " + formatNum(metric.Default) + ")."}}
			u.guardsAnswer(w, r, http.StatusUnprocessableEntity, f, "health")
			return
		}
		in.Threshold = &n
	}
	_, err := u.Guards.PutHealthAlarm(r.Context(), handlers.WorkspaceFrom(r), handlers.Actor(r), metric, in)
	if u.guardFailed(w, r, err, f, key, func(s string) string {
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
	u.guardsAnswer(w, r, http.StatusOK, guardForms{saved: map[string]string{key: "Health alarm " + metric.Name + " saved (" + state + ")."}}, "health")
}

// SaveAlertingSettingsUI saves the heartbeat URL and allowed hosts (admins only).
func (u *UI) SaveAlertingSettingsUI(w http.ResponseWriter, r *http.Request) {
	form := views.AlertingForm{HeartbeatURL: strings.TrimSpace(r.PostFormValue("heartbeat_url")), AllowedHosts: strings.TrimSpace(r.PostFormValue("allowed_hosts"))}
	hosts := strings.FieldsFunc(form.AllowedHosts, func(c rune) bool { return c == '\n' || c == '\r' || c == ',' || c == ' ' || c == '\t' })
	in := models.AlertingSettings{HeartbeatURL: form.HeartbeatURL, AllowedHosts: append([]string{}, hosts...)}
	_, err := u.Guards.PutAlertingSettings(r.Context(), handlers.WorkspaceFrom(r), handlers.Actor(r), in)
	if u.guardFailed(w, r, err, guardForms{alerting: &form}, "alerting", func(s string) string {
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

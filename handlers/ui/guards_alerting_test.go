package ui_test

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/leadgate/leadgate/handlers/handlerstest"
	"github.com/leadgate/leadgate/models"
)

func TestUIAlertingSettingsForm(t *testing.T) {
	t.Parallel()
	e := handlerstest.NewEnv(t)
	ctx := context.Background()
	admin := e.SignedIn(models.RoleAdmin)
	handlerstest.ExpectBody(t, "guards page", admin.Get("/w/default/guards"), `data-testid="alerting-form"`, "Save alerting settings")

	// An admin saves a heartbeat and two allowed hosts, one per line; audited with before/after.
	form := url.Values{"heartbeat_url": {"https://relay.internal/ping"}, "allowed_hosts": {"Relay.internal\r\n10.0.0.5"}}
	handlerstest.ExpectRedirect(t, "save alerting", admin.Post("/w/default/guards/alerting", form), "/w/default/guards")
	s, err := e.Store.GuardSettingsGet(ctx, e.WS.ID)
	if err != nil {
		t.Fatal(err)
	}
	if s.Alerting.HeartbeatURL != "https://relay.internal/ping" || strings.Join(s.Alerting.AllowedHosts, ",") != "relay.internal,10.0.0.5" {
		t.Fatalf("saved %+v", s.Alerting)
	}
	if got := e.AuditActions()[0]; got != "guards.alerting.update" {
		t.Fatalf("audited as %q", got)
	}
	handlerstest.ExpectBody(t, "page shows saved values", admin.Get("/w/default/guards"), "https://relay.internal/ping", "relay.internal\n10.0.0.5")

	// Bad input comes back inline, as typed, and changes nothing.
	before := len(e.AuditActions())
	bad := []struct {
		form url.Values
		msg  string
	}{
		{url.Values{"heartbeat_url": {"http://hc.example.com/ping"}}, "only https URLs are allowed"},
		{url.Values{"allowed_hosts": {"https://relay.internal:8443"}}, "An allowed host is a host name or IP address"},
		{url.Values{"heartbeat_url": {"https://10.1.2.3/ping"}}, "the address is not public"},
	}
	for _, b := range bad {
		res := admin.Post("/w/default/guards/alerting", b.form)
		handlerstest.ExpectStatus(t, "bad alerting "+b.msg, res, http.StatusUnprocessableEntity)
		handlerstest.ExpectBody(t, "bad alerting "+b.msg, res, b.msg, `class="field-error"`)
	}
	if after := len(e.AuditActions()); after != before {
		t.Fatalf("refused alerting forms were audited")
	}

	// Editors and viewers read the settings but may not change them; no CSRF token, no change.
	for _, role := range []string{models.RoleEditor, models.RoleViewer} {
		c := e.SignedIn(role)
		handlerstest.ExpectBody(t, role+" reads", c.Get("/w/default/guards"), "Only admins change these settings")
		res := c.Post("/w/default/guards/alerting", url.Values{"heartbeat_url": {""}})
		handlerstest.ExpectStatus(t, role+" saves alerting", res, http.StatusForbidden)
	}
	res := admin.PostRaw("/w/default/guards/alerting", url.Values{"heartbeat_url": {""}})
	handlerstest.ExpectStatus(t, "no csrf", res, http.StatusForbidden)
	handlerstest.ExpectBody(t, "no csrf", res, "This form has expired")
	if after := len(e.AuditActions()); after != before {
		t.Fatalf("refused requests were audited")
	}
}

func TestUIHealthAlarmForm(t *testing.T) {
	t.Parallel()
	e := handlerstest.NewEnv(t)
	ctx := context.Background()
	editor := e.SignedIn(models.RoleEditor)
	handlerstest.ExpectBody(t, "guards page", editor.Get("/w/default/guards"), `data-testid="health-dead_letters_open"`, "open dead letters waiting for review")

	// An editor sets a threshold and turns another alarm off; both audited.
	handlerstest.ExpectRedirect(t, "set threshold", editor.Post("/w/default/guards/health/dead_letters_open",
		url.Values{"threshold": {"5"}, "enabled": {"true"}}), "/w/default/guards")
	if got := e.AuditActions()[0]; got != "health_alarm.update" {
		t.Fatalf("audited as %q", got)
	}
	handlerstest.ExpectRedirect(t, "turn off", editor.Post("/w/default/guards/health/sync_lag_seconds", url.Values{"threshold": {""}}), "/w/default/guards")
	list, err := e.Store.HealthAlarmList(ctx, e.WS.ID)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]models.HealthAlarm{}
	for _, a := range list {
		got[a.Metric] = a
	}
	if a := got["dead_letters_open"]; a.Threshold != 5 || !a.Enabled {
		t.Fatalf("dead_letters_open saved as %+v", a)
	}
	if a := got["sync_lag_seconds"]; a.Threshold != 900 || a.Enabled {
		t.Fatalf("sync_lag_seconds (empty threshold = default, unchecked = off) saved as %+v", a)
	}

	before := len(e.AuditActions())
	for _, b := range []struct {
		metric, threshold, msg string
	}{
		{"dead_letters_open", "lots", "Enter a number"},
		{"dead_letters_open", "-1", "Threshold must be a number from 0 to 1e9"},
		{"ingest_rejection_rate", "150", "A rate threshold is a percentage from 0 to 100"},
	} {
		res := editor.Post("/w/default/guards/health/"+b.metric, url.Values{"threshold": {b.threshold}, "enabled": {"true"}})
		handlerstest.ExpectStatus(t, "bad threshold "+b.threshold, res, http.StatusUnprocessableEntity)
		handlerstest.ExpectBody(t, "bad threshold "+b.threshold, res, b.msg, `value="`+b.threshold+`"`)
	}
	handlerstest.ExpectStatus(t, "unknown metric", editor.Post("/w/default/guards/health/nope", url.Values{"threshold": {"1"}}), http.StatusNotFound)

	viewer := e.SignedIn(models.RoleViewer)
	viewer.Get("/w/default/guards")
	res := viewer.Post("/w/default/guards/health/dead_letters_open", url.Values{"threshold": {"1"}})
	handlerstest.ExpectStatus(t, "viewer", res, http.StatusForbidden)
	handlerstest.ExpectBody(t, "viewer", res, "Your role does not allow this action")
	res = editor.PostRaw("/w/default/guards/health/dead_letters_open", url.Values{"threshold": {"1"}})
	handlerstest.ExpectStatus(t, "no csrf", res, http.StatusForbidden)
	handlerstest.ExpectBody(t, "no csrf", res, "This form has expired")
	if after := len(e.AuditActions()); after != before {
		t.Fatalf("refused health alarm forms were audited")
	}
}

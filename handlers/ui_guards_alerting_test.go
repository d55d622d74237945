package handlers_test

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/leadgate/leadgate/models"
)

func TestUIAlertingSettingsForm(t *testing.T) {
	t.Parallel()
	e := newUIEnv(t)
	ctx := context.Background()
	admin := e.signedIn(models.RoleAdmin)
	expectBody(t, "guards page", admin.get("/w/default/guards"), `data-testid="alerting-form"`, "Save alerting settings")

	// An admin saves a heartbeat and two allowed hosts, one per line; audited with before/after.
	form := url.Values{"heartbeat_url": {"https://relay.internal/ping"}, "allowed_hosts": {"Relay.internal\r\n10.0.0.5"}}
	expectRedirect(t, "save alerting", admin.post("/w/default/guards/alerting", form), "/w/default/guards")
	s, err := e.store.GuardSettingsGet(ctx, e.ws.ID)
	if err != nil {
		t.Fatal(err)
	}
	if s.Alerting.HeartbeatURL != "https://relay.internal/ping" || strings.Join(s.Alerting.AllowedHosts, ",") != "relay.internal,10.0.0.5" {
		t.Fatalf("saved %+v", s.Alerting)
	}
	if got := e.auditActions()[0]; got != "guards.alerting.update" {
		t.Fatalf("audited as %q", got)
	}
	expectBody(t, "page shows saved values", admin.get("/w/default/guards"), "https://relay.internal/ping", "relay.internal\n10.0.0.5")

	// Bad input comes back inline, as typed, and changes nothing.
	before := len(e.auditActions())
	bad := []struct {
		form url.Values
		msg  string
	}{
		{url.Values{"heartbeat_url": {"http://hc.example.com/ping"}}, "only https URLs are allowed"},
		{url.Values{"allowed_hosts": {"https://relay.internal:8443"}}, "An allowed host is a host name or IP address"},
		{url.Values{"heartbeat_url": {"https://10.1.2.3/ping"}}, "the address is not public"},
	}
	for _, b := range bad {
		res := admin.post("/w/default/guards/alerting", b.form)
		expectStatus(t, "bad alerting "+b.msg, res, http.StatusUnprocessableEntity)
		expectBody(t, "bad alerting "+b.msg, res, b.msg, `class="field-error"`)
	}
	if after := len(e.auditActions()); after != before {
		t.Fatalf("refused alerting forms were audited")
	}

	// Editors and viewers read the settings but may not change them; no CSRF token, no change.
	for _, role := range []string{models.RoleEditor, models.RoleViewer} {
		c := e.signedIn(role)
		expectBody(t, role+" reads", c.get("/w/default/guards"), "Only admins change these settings")
		res := c.post("/w/default/guards/alerting", url.Values{"heartbeat_url": {""}})
		expectStatus(t, role+" saves alerting", res, http.StatusForbidden)
	}
	res := admin.postRaw("/w/default/guards/alerting", url.Values{"heartbeat_url": {""}})
	expectStatus(t, "no csrf", res, http.StatusForbidden)
	expectBody(t, "no csrf", res, "This form has expired")
	if after := len(e.auditActions()); after != before {
		t.Fatalf("refused requests were audited")
	}
}

func TestUIHealthAlarmForm(t *testing.T) {
	t.Parallel()
	e := newUIEnv(t)
	ctx := context.Background()
	editor := e.signedIn(models.RoleEditor)
	expectBody(t, "guards page", editor.get("/w/default/guards"), `data-testid="health-dead_letters_open"`, "open dead letters waiting for review")

	// An editor sets a threshold and turns another alarm off; both audited.
	expectRedirect(t, "set threshold", editor.post("/w/default/guards/health/dead_letters_open",
		url.Values{"threshold": {"5"}, "enabled": {"true"}}), "/w/default/guards")
	if got := e.auditActions()[0]; got != "health_alarm.update" {
		t.Fatalf("audited as %q", got)
	}
	expectRedirect(t, "turn off", editor.post("/w/default/guards/health/sync_lag_seconds", url.Values{"threshold": {""}}), "/w/default/guards")
	list, err := e.store.HealthAlarmList(ctx, e.ws.ID)
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

	before := len(e.auditActions())
	for _, b := range []struct {
		metric, threshold, msg string
	}{
		{"dead_letters_open", "lots", "Enter a number"},
		{"dead_letters_open", "-1", "Threshold must be a number from 0 to 1e9"},
		{"ingest_rejection_rate", "150", "A rate threshold is a percentage from 0 to 100"},
	} {
		res := editor.post("/w/default/guards/health/"+b.metric, url.Values{"threshold": {b.threshold}, "enabled": {"true"}})
		expectStatus(t, "bad threshold "+b.threshold, res, http.StatusUnprocessableEntity)
		expectBody(t, "bad threshold "+b.threshold, res, b.msg, `value="`+b.threshold+`"`)
	}
	expectStatus(t, "unknown metric", editor.post("/w/default/guards/health/nope", url.Values{"threshold": {"1"}}), http.StatusNotFound)

	viewer := e.signedIn(models.RoleViewer)
	viewer.get("/w/default/guards")
	res := viewer.post("/w/default/guards/health/dead_letters_open", url.Values{"threshold": {"1"}})
	expectStatus(t, "viewer", res, http.StatusForbidden)
	expectBody(t, "viewer", res, "Your role does not allow this action")
	res = editor.postRaw("/w/default/guards/health/dead_letters_open", url.Values{"threshold": {"1"}})
	expectStatus(t, "no csrf", res, http.StatusForbidden)
	expectBody(t, "no csrf", res, "This form has expired")
	if after := len(e.auditActions()); after != before {
		t.Fatalf("refused health alarm forms were audited")
	}
}

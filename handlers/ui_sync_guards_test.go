package handlers_test

import (
	"context"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/leadgate/leadgate/models"
)

func TestUIDestinations(t *testing.T) {
	t.Parallel()
	e := newUIEnv(t)
	ctx := context.Background()
	c := e.signedIn(models.RoleEditor)
	page := c.get("/w/default/destinations")
	expectStatus(t, "list", page, http.StatusOK)
	expectBody(t, "list", page, `data-testid="destination-form"`, `name="api_token"`)

	// Inline errors come from the API's own validation.
	before := len(e.auditActions())
	res := c.post("/w/default/destinations", url.Values{"name": {"AC"}, "kind": {"activecampaign"}, "base_url": {"https://acct.api-us1.com"}})
	expectStatus(t, "no token", res, http.StatusUnprocessableEntity)
	expectBody(t, "no token", res, `id="err-api_token"`, "Api_token is required")
	res = c.post("/w/default/destinations", url.Values{"name": {"AC"}, "kind": {"sandbox"}, "batch_size": {"lots"}})
	expectBody(t, "bad number", res, `id="err-batch_size"`)
	if n := len(e.auditActions()); n != before {
		t.Fatalf("rejected forms wrote %d audit entries", n-before)
	}

	res = c.post("/w/default/destinations", url.Values{"name": {"AC main"}, "kind": {"activecampaign"}, "base_url": {"https://acct.api-us1.com"},
		"api_token": {"ac-secret-token-123"}, "stage_field": {"12"}, "rate_limit_rps": {"5"}, "batch_size": {"20"}})
	if res.status != http.StatusSeeOther {
		t.Fatalf("create: %d %.300s", res.status, res.body)
	}
	requireAudit(t, e, "destination.create")
	path := res.header.Get("Location")
	detail := c.get(path)
	expectBody(t, "detail", detail, "AC main", `data-testid="destination-stats"`, "stored, encrypted", `data-testid="test-connection"`)
	for _, p := range []string{path, "/w/default/destinations"} {
		if body := c.get(p).body; strings.Contains(body, "ac-secret-token-123") {
			t.Fatalf("%s shows the API token", p)
		}
	}
	id, _ := strconv.ParseInt(regexp.MustCompile(`\d+$`).FindString(path), 10, 64)

	expectRedirect(t, "pause", c.post(path+"/paused", url.Values{"paused": {"true"}}), path)
	requireAudit(t, e, "destination.update")
	if d, _ := e.store.DestinationGet(ctx, e.ws.ID, id); !d.Paused {
		t.Fatal("destination not paused")
	}
	expectBody(t, "paused detail", c.get(path), `data-testid="paused-reason"`, "Resume")
	expectRedirect(t, "resume", c.post(path+"/paused", url.Values{"paused": {"false"}}), path)
	requireAudit(t, e, "destination.update")
	if d, _ := e.store.DestinationGet(ctx, e.ws.ID, id); d.Paused {
		t.Fatal("destination still paused")
	}

	// Editing keeps the stored token when the field is left empty.
	before = len(e.auditActions())
	expectRedirect(t, "edit", c.post(path, url.Values{"name": {"AC renamed"}, "base_url": {"https://acct.api-us1.com"}, "rate_limit_rps": {"4"}, "batch_size": {"10"}}), path)
	requireAudit(t, e, "destination.update")
	d, _ := e.store.DestinationGet(ctx, e.ws.ID, id)
	if d.Name != "AC renamed" || d.RateLimitRPS != 4 || len(d.APITokenEnc) == 0 {
		t.Fatalf("edited destination: %+v", d)
	}
	res = c.post(path, url.Values{"name": {""}, "batch_size": {"10"}})
	expectStatus(t, "edit without a name", res, http.StatusUnprocessableEntity)
	expectBody(t, "edit without a name", res, `id="err-name"`)
	if n := len(e.auditActions()); n != before+1 {
		t.Fatalf("edits wrote %d audit entries, want 1", n-before)
	}

	// Whether bulk imports start the account's automations is a setting of the form, checked by the API.
	expectBody(t, "automations default", c.get(path), `<option value="live" selected>`)
	expectRedirect(t, "automations", c.post(path, url.Values{"name": {"AC renamed"}, "base_url": {"https://acct.api-us1.com"}, "batch_size": {"10"}, "automations": {"never"}}), path)
	if d, _ := e.store.DestinationGet(ctx, e.ws.ID, id); d.Config.Automations != "never" {
		t.Fatalf("automations = %q, want never", d.Config.Automations)
	}
	expectBody(t, "automations shown", c.get(path), `<option value="never" selected>`)
	res = c.post(path, url.Values{"name": {"AC renamed"}, "base_url": {"https://acct.api-us1.com"}, "batch_size": {"10"}, "automations": {"sometimes"}})
	expectStatus(t, "bad automations", res, http.StatusUnprocessableEntity)
	expectBody(t, "bad automations", res, `id="err-automations"`)

	// The test connection reports the CRM's answer (no network here: it fails, clearly).
	expectRedirect(t, "test", c.post(path+"/test", nil), path)
	expectBody(t, "test result", c.get(path), "Connection failed:")
	expectStatus(t, "unknown", c.get("/w/default/destinations/99999"), http.StatusNotFound)
}

func TestUIGuards(t *testing.T) {
	t.Parallel()
	e := newUIEnv(t)
	ctx := context.Background()
	src := e.seedSource("Web form")
	c := e.signedIn(models.RoleEditor)
	page := c.get("/w/default/guards")
	expectStatus(t, "guards", page, http.StatusOK)
	expectBody(t, "guards", page, `data-testid="loop-form"`, `data-testid="breakers"`, `data-testid="filters-`+strconv.FormatInt(src.ID, 10)+`"`,
		`data-testid="silence-form"`, `data-testid="channel-form"`)

	res := c.post("/w/default/guards/loop", url.Values{"breaker_max": {"many"}})
	expectStatus(t, "bad loop number", res, http.StatusUnprocessableEntity)
	expectBody(t, "bad loop number", res, `id="err-breaker_max"`)
	expectRedirect(t, "loop", c.post("/w/default/guards/loop", url.Values{"breaker_max": {"5"}, "breaker_window_seconds": {"600"}, "echo_window_seconds": {"90"}}), "/w/default/guards")
	requireAudit(t, e, "guards.loop.update")
	if s, _ := e.store.GuardSettingsGet(ctx, e.ws.ID); s.Loop.BreakerMax != 5 || s.Loop.EchoWindowSeconds != 90 {
		t.Fatalf("loop settings: %+v", s.Loop)
	}

	fp := "/w/default/guards/filters/" + strconv.FormatInt(src.ID, 10)
	res = c.post(fp, url.Values{"rule_name": {"broken"}, "rule_expr": {"payload.(("}, "rule_action": {"drop"}})
	expectStatus(t, "bad filter", res, http.StatusUnprocessableEntity)
	expectBody(t, "bad filter", res, `role="alert"`, "payload.((")
	expectRedirect(t, "filters", c.post(fp, url.Values{"rule_name": {"tests", ""}, "rule_expr": {`email endsWith "@test.example"`, ""}, "rule_action": {"drop", "drop"}}), "/w/default/guards")
	requireAudit(t, e, "source_filters.update")
	expectBody(t, "filters shown", c.get("/w/default/guards"), `value="email endsWith &#34;@test.example&#34;"`)

	res = c.post("/w/default/guards/silence", url.Values{"metric": {"apply"}, "threshold_minutes": {"0"}})
	expectStatus(t, "bad alarm", res, http.StatusUnprocessableEntity)
	expectBody(t, "bad alarm", res, `id="err-threshold_minutes"`)
	expectRedirect(t, "alarm", c.post("/w/default/guards/silence", url.Values{"source_id": {strconv.FormatInt(src.ID, 10)}, "metric": {"apply"},
		"threshold_minutes": {"90"}, "reminder_minutes": {"240"}}), "/w/default/guards")
	requireAudit(t, e, "silence_alarm.create")
	alarms, _ := e.store.SilenceAlarmList(ctx, e.ws.ID)
	if len(alarms) != 1 || alarms[0].ThresholdSeconds != 5400 {
		t.Fatalf("alarms: %+v", alarms)
	}
	expectBody(t, "alarm listed", c.get("/w/default/guards"), `data-testid="silence-alarms"`, `name="threshold_minutes" value="90"`)
	expectRedirect(t, "delete alarm", c.post("/w/default/guards/silence/"+strconv.FormatInt(alarms[0].ID, 10)+"/delete", nil), "/w/default/guards")
	requireAudit(t, e, "silence_alarm.delete")

	res = c.post("/w/default/guards/channels", url.Values{"name": {"Ops hook"}, "kind": {"webhook"}, "min_severity": {"warning"}, "url": {"http://10.0.0.1/x"}})
	expectStatus(t, "private webhook", res, http.StatusUnprocessableEntity)
	expectBody(t, "private webhook", res, `id="err-url"`)
	expectRedirect(t, "channel", c.post("/w/default/guards/channels", url.Values{"name": {"Ops hook"}, "kind": {"webhook"}, "min_severity": {"warning"},
		"url": {"https://hooks.example.com/leadgate"}, "secret": {"sign-me"}}), "/w/default/guards")
	requireAudit(t, e, "alert_channel.create")
	list := c.get("/w/default/guards")
	expectBody(t, "channel listed", list, `data-testid="alert-channels"`, "https://hooks.example.com/leadgate", "secrets set: signing_secret")
	if strings.Contains(list.body, "sign-me") {
		t.Fatal("the page shows the channel's secret")
	}
	chans, _ := e.store.AlertChannelList(ctx, e.ws.ID, false)
	cp := "/w/default/guards/channels/" + strconv.FormatInt(chans[0].ID, 10)
	expectRedirect(t, "test send", c.post(cp+"/test", nil), "/w/default/guards")
	expectBody(t, "test send result", c.get("/w/default/guards"), "The test alert failed")
	expectRedirect(t, "delete channel", c.post(cp+"/delete", nil), "/w/default/guards")
	requireAudit(t, e, "alert_channel.delete")

	expectRedirect(t, "reset an untripped breaker", c.post("/w/default/guards/breakers/00000000-0000-0000-0000-000000000001/reset", nil), "/w/default/guards")
	expectBody(t, "reset an untripped breaker", c.get("/w/default/guards"), "not tripped")
}

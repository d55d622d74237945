package ui_test

import (
	"context"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/leadgate/leadgate/handlers/handlerstest"
	"github.com/leadgate/leadgate/models"
)

func TestUIDestinations(t *testing.T) {
	t.Parallel()
	e := handlerstest.NewEnv(t)
	ctx := context.Background()
	c := e.SignedIn(models.RoleEditor)
	page := c.Get("/w/default/destinations")
	handlerstest.ExpectStatus(t, "list", page, http.StatusOK)
	handlerstest.ExpectBody(t, "list", page, `data-testid="destination-form"`, `name="api_token"`)

	// Inline errors come from the API's own validation.
	before := len(e.AuditActions())
	res := c.Post("/w/default/destinations", url.Values{"name": {"AC"}, "kind": {"activecampaign"}, "base_url": {"https://acct.api-us1.com"}})
	handlerstest.ExpectStatus(t, "no token", res, http.StatusUnprocessableEntity)
	handlerstest.ExpectBody(t, "no token", res, `id="err-api_token"`, "Api_token is required")
	res = c.Post("/w/default/destinations", url.Values{"name": {"AC"}, "kind": {"sandbox"}, "batch_size": {"lots"}})
	handlerstest.ExpectBody(t, "bad number", res, `id="err-batch_size"`)
	if n := len(e.AuditActions()); n != before {
		t.Fatalf("rejected forms wrote %d audit entries", n-before)
	}

	res = c.Post("/w/default/destinations", url.Values{"name": {"AC main"}, "kind": {"activecampaign"}, "base_url": {"https://acct.api-us1.com"},
		"api_token": {"ac-secret-token-123"}, "stage_field": {"12"}, "rate_limit_rps": {"5"}, "batch_size": {"20"}})
	if res.Status != http.StatusSeeOther {
		t.Fatalf("create: %d %.300s", res.Status, res.Body)
	}
	handlerstest.RequireAudit(t, e, "destination.create")
	path := res.Header.Get("Location")
	detail := c.Get(path)
	handlerstest.ExpectBody(t, "detail", detail, "AC main", `data-testid="destination-stats"`, "stored, encrypted", `data-testid="test-connection"`)
	for _, p := range []string{path, "/w/default/destinations"} {
		if body := c.Get(p).Body; strings.Contains(body, "ac-secret-token-123") {
			t.Fatalf("%s shows the API token", p)
		}
	}
	id, _ := strconv.ParseInt(regexp.MustCompile(`\d+$`).FindString(path), 10, 64)

	handlerstest.ExpectRedirect(t, "pause", c.Post(path+"/paused", url.Values{"paused": {"true"}}), path)
	handlerstest.RequireAudit(t, e, "destination.update")
	if d, _ := e.Store.DestinationGet(ctx, e.WS.ID, id); !d.Paused {
		t.Fatal("destination not paused")
	}
	handlerstest.ExpectBody(t, "paused detail", c.Get(path), `data-testid="paused-reason"`, "Resume")
	handlerstest.ExpectRedirect(t, "resume", c.Post(path+"/paused", url.Values{"paused": {"false"}}), path)
	handlerstest.RequireAudit(t, e, "destination.update")
	if d, _ := e.Store.DestinationGet(ctx, e.WS.ID, id); d.Paused {
		t.Fatal("destination still paused")
	}

	// Editing keeps the stored token when the field is left empty.
	before = len(e.AuditActions())
	handlerstest.ExpectRedirect(t, "edit", c.Post(path, url.Values{"name": {"AC renamed"}, "base_url": {"https://acct.api-us1.com"}, "rate_limit_rps": {"4"}, "batch_size": {"10"}}), path)
	handlerstest.RequireAudit(t, e, "destination.update")
	d, _ := e.Store.DestinationGet(ctx, e.WS.ID, id)
	if d.Name != "AC renamed" || d.RateLimitRPS != 4 || len(d.APITokenEnc) == 0 {
		t.Fatalf("edited destination: %+v", d)
	}
	res = c.Post(path, url.Values{"name": {""}, "batch_size": {"10"}})
	handlerstest.ExpectStatus(t, "edit without a name", res, http.StatusUnprocessableEntity)
	handlerstest.ExpectBody(t, "edit without a name", res, `id="err-name"`)
	if n := len(e.AuditActions()); n != before+1 {
		t.Fatalf("edits wrote %d audit entries, want 1", n-before)
	}

	// Whether bulk imports start the account's automations is a setting of the form, checked by the API.
	handlerstest.ExpectBody(t, "automations default", c.Get(path), `<option value="live" selected>`)
	handlerstest.ExpectRedirect(t, "automations", c.Post(path, url.Values{"name": {"AC renamed"}, "base_url": {"https://acct.api-us1.com"}, "batch_size": {"10"}, "automations": {"never"}}), path)
	if d, _ := e.Store.DestinationGet(ctx, e.WS.ID, id); d.Config.Automations != "never" {
		t.Fatalf("automations = %q, want never", d.Config.Automations)
	}
	handlerstest.ExpectBody(t, "automations shown", c.Get(path), `<option value="never" selected>`)
	res = c.Post(path, url.Values{"name": {"AC renamed"}, "base_url": {"https://acct.api-us1.com"}, "batch_size": {"10"}, "automations": {"sometimes"}})
	handlerstest.ExpectStatus(t, "bad automations", res, http.StatusUnprocessableEntity)
	handlerstest.ExpectBody(t, "bad automations", res, `id="err-automations"`)

	// The account's daily request quota is a setting of the form: shown as stored, checked by the action.
	handlerstest.ExpectRedirect(t, "daily quota", c.Post(path, url.Values{"name": {"AC renamed"}, "base_url": {"https://acct.api-us1.com"}, "batch_size": {"10"}, "daily_limit": {"1000000"}}), path)
	if d, _ := e.Store.DestinationGet(ctx, e.WS.ID, id); d.Config.DailyLimit != 1_000_000 {
		t.Fatalf("daily_limit = %d, want 1000000", d.Config.DailyLimit)
	}
	handlerstest.ExpectBody(t, "daily quota shown", c.Get(path), `name="daily_limit" value="1000000"`)
	res = c.Post(path, url.Values{"name": {"AC renamed"}, "base_url": {"https://acct.api-us1.com"}, "batch_size": {"10"}, "daily_limit": {"-5"}})
	handlerstest.ExpectStatus(t, "bad daily quota", res, http.StatusUnprocessableEntity)
	handlerstest.ExpectBody(t, "bad daily quota", res, `id="err-daily_limit"`, "Daily_limit must be -1")

	// The test connection reports the CRM's answer (no network here: it fails, clearly).
	handlerstest.ExpectRedirect(t, "test", c.Post(path+"/test", nil), path)
	handlerstest.ExpectBody(t, "test result", c.Get(path), "Connection failed:")
	handlerstest.ExpectStatus(t, "unknown", c.Get("/w/default/destinations/99999"), http.StatusNotFound)
}

func TestUIGuards(t *testing.T) {
	t.Parallel()
	e := handlerstest.NewEnv(t)
	ctx := context.Background()
	src := e.SeedSource("Web form")
	c := e.SignedIn(models.RoleEditor)
	page := c.Get("/w/default/guards")
	handlerstest.ExpectStatus(t, "guards", page, http.StatusOK)
	handlerstest.ExpectBody(t, "guards", page, `data-testid="loop-form"`, `data-testid="breakers"`, `data-testid="filters-`+strconv.FormatInt(src.ID, 10)+`"`,
		`data-testid="silence-form"`, `data-testid="channel-form"`)

	res := c.Post("/w/default/guards/loop", url.Values{"breaker_max": {"many"}})
	handlerstest.ExpectStatus(t, "bad loop number", res, http.StatusUnprocessableEntity)
	handlerstest.ExpectBody(t, "bad loop number", res, `id="err-breaker_max"`)
	handlerstest.ExpectRedirect(t, "loop", c.Post("/w/default/guards/loop", url.Values{"breaker_max": {"5"}, "breaker_window_seconds": {"600"}, "echo_window_seconds": {"90"}}), "/w/default/guards")
	handlerstest.RequireAudit(t, e, "guards.loop.update")
	if s, _ := e.Store.GuardSettingsGet(ctx, e.WS.ID); s.Loop.BreakerMax != 5 || s.Loop.EchoWindowSeconds != 90 {
		t.Fatalf("loop settings: %+v", s.Loop)
	}

	fp := "/w/default/guards/filters/" + strconv.FormatInt(src.ID, 10)
	res = c.Post(fp, url.Values{"rule_name": {"broken"}, "rule_expr": {"payload.(("}, "rule_action": {"drop"}})
	handlerstest.ExpectStatus(t, "bad filter", res, http.StatusUnprocessableEntity)
	handlerstest.ExpectBody(t, "bad filter", res, `role="alert"`, "payload.((")
	handlerstest.ExpectRedirect(t, "filters", c.Post(fp, url.Values{"rule_name": {"tests", ""}, "rule_expr": {`email endsWith "@test.example"`, ""}, "rule_action": {"drop", "drop"}}), "/w/default/guards")
	handlerstest.RequireAudit(t, e, "source_filters.update")
	handlerstest.ExpectBody(t, "filters shown", c.Get("/w/default/guards"), `value="email endsWith &#34;@test.example&#34;"`)

	res = c.Post("/w/default/guards/silence", url.Values{"metric": {"apply"}, "threshold_minutes": {"0"}})
	handlerstest.ExpectStatus(t, "bad alarm", res, http.StatusUnprocessableEntity)
	handlerstest.ExpectBody(t, "bad alarm", res, `id="err-threshold_minutes"`)
	handlerstest.ExpectRedirect(t, "alarm", c.Post("/w/default/guards/silence", url.Values{"source_id": {strconv.FormatInt(src.ID, 10)}, "metric": {"apply"},
		"threshold_minutes": {"90"}, "reminder_minutes": {"240"}}), "/w/default/guards")
	handlerstest.RequireAudit(t, e, "silence_alarm.create")
	alarms, _ := e.Store.SilenceAlarmList(ctx, e.WS.ID)
	if len(alarms) != 1 || alarms[0].ThresholdSeconds != 5400 {
		t.Fatalf("alarms: %+v", alarms)
	}
	handlerstest.ExpectBody(t, "alarm listed", c.Get("/w/default/guards"), `data-testid="silence-alarms"`, `name="threshold_minutes" value="90"`)
	handlerstest.ExpectRedirect(t, "delete alarm", c.Post("/w/default/guards/silence/"+strconv.FormatInt(alarms[0].ID, 10)+"/delete", nil), "/w/default/guards")
	handlerstest.RequireAudit(t, e, "silence_alarm.delete")

	res = c.Post("/w/default/guards/channels", url.Values{"name": {"Ops hook"}, "kind": {"webhook"}, "min_severity": {"warning"}, "url": {"http://10.0.0.1/x"}})
	handlerstest.ExpectStatus(t, "private webhook", res, http.StatusUnprocessableEntity)
	handlerstest.ExpectBody(t, "private webhook", res, `id="err-url"`)
	handlerstest.ExpectRedirect(t, "channel", c.Post("/w/default/guards/channels", url.Values{"name": {"Ops hook"}, "kind": {"webhook"}, "min_severity": {"warning"},
		"url": {"https://hooks.example.com/leadgate"}, "secret": {"sign-me"}}), "/w/default/guards")
	handlerstest.RequireAudit(t, e, "alert_channel.create")
	list := c.Get("/w/default/guards")
	handlerstest.ExpectBody(t, "channel listed", list, `data-testid="alert-channels"`, "https://hooks.example.com/leadgate", "secrets set: signing_secret")
	if strings.Contains(list.Body, "sign-me") {
		t.Fatal("the page shows the channel's secret")
	}
	chans, _ := e.Store.AlertChannelList(ctx, e.WS.ID, false)
	cp := "/w/default/guards/channels/" + strconv.FormatInt(chans[0].ID, 10)
	handlerstest.ExpectRedirect(t, "test send", c.Post(cp+"/test", nil), "/w/default/guards")
	handlerstest.ExpectBody(t, "test send result", c.Get("/w/default/guards"), "The test alert failed")
	handlerstest.ExpectRedirect(t, "delete channel", c.Post(cp+"/delete", nil), "/w/default/guards")
	handlerstest.RequireAudit(t, e, "alert_channel.delete")

	handlerstest.ExpectRedirect(t, "reset an untripped breaker", c.Post("/w/default/guards/breakers/00000000-0000-0000-0000-000000000001/reset", nil), "/w/default/guards")
	handlerstest.ExpectBody(t, "reset an untripped breaker", c.Get("/w/default/guards"), "not tripped")
}

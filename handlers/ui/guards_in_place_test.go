package ui_test

import (
	"context"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"

	"github.com/leadgate/leadgate/handlers/handlerstest"
	"github.com/leadgate/leadgate/models"
)

func TestUILoopFormShowsTheValuesInForce(t *testing.T) {
	t.Parallel()
	e := handlerstest.NewEnv(t)
	c := e.SignedIn(models.RoleEditor)
	// Nothing saved: the defaults are in force (600 s echo window, 20 changes within 600 s).
	page := c.Get("/w/default/guards")
	handlerstest.ExpectBody(t, "defaults in force", page, `name="echo_window_seconds" value="600"`, `name="breaker_max" value="20"`,
		`name="breaker_window_seconds" value="600"`, `name="loop_field" value="last_automation_source"`)
	for _, stale := range []string{`placeholder="120"`, `placeholder="3600"`} {
		if strings.Contains(page.Body, stale) {
			t.Fatalf("the loop form still offers %s, not a value in force", stale)
		}
	}

	// Saved in place: the card comes back with the new values and a note, no reload.
	res := c.PostHTMX("/w/default/guards/loop", url.Values{"echo_window_seconds": {"300"}, "breaker_max": {"7"}, "breaker_window_seconds": {"900"},
		"loop_field": {"last_automation_source"}, "loop_value": {"leadgate"}, "sync_field": {"sync_timestamp"}})
	handlerstest.ExpectStatus(t, "save in place", res, http.StatusOK)
	handlerstest.ExpectBody(t, "save in place", res, `id="loop-form"`, `name="breaker_max" value="7"`, `name="breaker_window_seconds" value="900"`, "Loop breaker settings saved.")
	if strings.Contains(res.Body, "<!doctype html>") {
		t.Fatal("an htmx save answered the whole page")
	}
	s, _ := e.Store.GuardSettingsGet(context.Background(), e.WS.ID)
	if s.Loop.BreakerMax != 7 || s.Loop.BreakerWindowSeconds != 900 || s.Loop.EchoWindowSeconds != 300 {
		t.Fatalf("saved loop settings: %+v", s.Loop)
	}
	handlerstest.RequireAudit(t, e, "guards.loop.update")
	res = c.PostHTMX("/w/default/guards/loop", url.Values{"breaker_max": {"many"}})
	handlerstest.ExpectBody(t, "refused in place", res, `id="loop-form"`, `id="err-breaker_max"`)
	handlerstest.ExpectBody(t, "reload", c.Get("/w/default/guards"), `name="breaker_max" value="7"`)
}

func TestUISilenceThresholdEditedInPlace(t *testing.T) {
	t.Parallel()
	e := handlerstest.NewEnv(t)
	ctx := context.Background()
	src := e.SeedSource("Web form")
	c := e.SignedIn(models.RoleEditor)
	handlerstest.ExpectRedirect(t, "add alarm", c.Post("/w/default/guards/silence", url.Values{"source_id": {strconv.FormatInt(src.ID, 10)}, "metric": {"apply"},
		"rule": {"static"}, "threshold_minutes": {"90"}, "reminder_minutes": {"240"}}), "/w/default/guards")
	alarms, _ := e.Store.SilenceAlarmList(ctx, e.WS.ID)
	if len(alarms) != 1 {
		t.Fatalf("alarms: %+v", alarms)
	}
	id := strconv.FormatInt(alarms[0].ID, 10)
	checked, _ := e.Store.SilenceAlarmGet(ctx, e.WS.ID, alarms[0].ID)
	handlerstest.ExpectBody(t, "editable", c.Get("/w/default/guards"), `data-testid="silence-edit"`, `name="threshold_minutes" value="90"`)

	res := c.PostHTMX("/w/default/guards/silence/"+id, url.Values{"threshold_minutes": {"15"}, "reminder_minutes": {"240"}, "enabled": {"true"}})
	handlerstest.ExpectStatus(t, "edit in place", res, http.StatusOK)
	handlerstest.ExpectBody(t, "edit in place", res, `id="silence-card"`, `name="threshold_minutes" value="15"`, "Silence alarm saved.")
	if strings.Contains(res.Body, "<!doctype html>") {
		t.Fatal("an htmx save answered the whole page")
	}
	if res.Header.Get("HX-Trigger") != "alarms-changed" {
		t.Fatalf("HX-Trigger %q: the alarm state elsewhere on the page is not told to refresh", res.Header.Get("HX-Trigger"))
	}
	got, _ := e.Store.SilenceAlarmGet(ctx, e.WS.ID, alarms[0].ID)
	if got.ThresholdSeconds != 900 || got.ReminderSeconds != 14400 || got.Rule != models.SilenceRuleStatic || got.SourceID == nil || *got.SourceID != src.ID || !got.Enabled {
		t.Fatalf("alarm after the edit: %+v", got)
	}
	if got.LastCheckedAt == nil || checked.LastCheckedAt != nil && !got.LastCheckedAt.After(*checked.LastCheckedAt) {
		t.Fatal("the saved alarm was not evaluated again")
	}
	handlerstest.RequireAudit(t, e, "silence_alarm.update")

	res = c.PostHTMX("/w/default/guards/silence/"+id, url.Values{"threshold_minutes": {"0"}, "enabled": {"true"}})
	handlerstest.ExpectBody(t, "refused in place", res, `id="silence-card"`, `id="err-threshold_minutes"`)
	if after, _ := e.Store.SilenceAlarmGet(ctx, e.WS.ID, alarms[0].ID); after.ThresholdSeconds != 900 {
		t.Fatalf("a refused edit changed the threshold to %d s", after.ThresholdSeconds)
	}

	// Health alarms too: in place, with the state evaluated under the new threshold.
	res = c.PostHTMX("/w/default/guards/health/dead_letters_open", url.Values{"threshold": {"0"}, "enabled": {"true"}})
	handlerstest.ExpectBody(t, "health in place", res, `id="health-card"`, "Health alarm dead_letters_open saved (on).", `data-testid="health-value">0 dead letters<`)
}

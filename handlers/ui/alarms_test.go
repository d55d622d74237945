package ui_test

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/leadgate/leadgate/handlers/handlerstest"
	"github.com/leadgate/leadgate/models"
)

// alarmFixture sets off one alarm of every kind in the default workspace.
func alarmFixture(t *testing.T, e *handlerstest.Env) (silent, refusing models.Source) {
	t.Helper()
	ctx := context.Background()
	db := e.Store.DB()
	mk := func(name string) models.Source {
		src := models.Source{WorkspaceID: e.WS.ID, Name: name, Kind: "standard-webhooks", Channel: "web_form", Enabled: true}
		if err := e.Store.SourceCreate(ctx, &src); err != nil {
			t.Fatal(err)
		}
		return src
	}
	silent, refusing = mk("Voice agent"), mk("Web form")
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	now := time.Now()
	must(db.Exec(`INSERT INTO silence_alarms (workspace_id, source_id, metric, rule, threshold_seconds, enabled, silent, silent_since, message)
		VALUES (?, ?, 'apply', 'static', 300, true, true, ?, 'No event from Voice agent for 12 minutes')`, e.WS.ID, silent.ID, now.Add(-12*time.Minute)).Error)
	_, err := e.Store.SourceAlarmFire(ctx, e.WS.ID, refusing.ID, models.SourceAlarmSignatureRefused, "10 deliveries refused: bad signature", now.Add(-3*time.Minute))
	must(err)
	d := models.Destination{WorkspaceID: e.WS.ID, Name: "HubSpot", Kind: "hubspot", BaseURL: "https://api.hubapi.com", Enabled: true, BatchSize: 10}
	must(e.Store.DestinationCreate(ctx, &d))
	_, _, err = e.Store.DestinationPause(ctx, d.ID, "the CRM refused the token (401)")
	must(err)
	must(e.Store.HealthAlarmConfigure(ctx, e.WS.ID, "dead_letters_open", 25, true))
	must(db.Exec(`UPDATE health_alarms SET firing = true, firing_since = ?, last_value = 48 WHERE workspace_id = ? AND metric = 'dead_letters_open'`, now.Add(-time.Hour), e.WS.ID).Error)
	_, err = e.Store.HeartbeatTick(ctx, now.Add(-10*time.Minute))
	must(err)
	for range 3 {
		_, err = e.Store.DeadLetterAdd(ctx, models.DeadLetter{WorkspaceID: e.WS.ID, Kind: "transient", Reason: "test"})
		must(err)
	}
	return silent, refusing
}

func TestUIAlarmsShowWherePeopleLook(t *testing.T) {
	t.Parallel()
	e := handlerstest.NewEnv(t)
	alarmFixture(t, e)
	c := e.SignedIn(models.RoleViewer)
	kinds := []string{"silence", "signature_refused", "health", "destination_paused", "deadman"}

	t.Run("Pipeline health shows every firing alarm with what to do and a link", func(t *testing.T) {
		for _, page := range []string{"/w/default/", "/w/default/health"} {
			res := c.Get(page)
			handlerstest.ExpectStatus(t, page, res, http.StatusOK)
			for _, k := range kinds {
				handlerstest.ExpectBody(t, page, res, `data-testid="alarm-`+k+`"`)
			}
			handlerstest.ExpectBody(t, page, res, "No event from Voice agent for 12 minutes", "for 12 min", "HubSpot is paused: the CRM refused the token (401)",
				"The scheduler has not ticked since", "dead_letters_open is 48.0", "resume it", `href="/w/default/destinations/`)
		}
	})

	t.Run("the nav counts alarms firing and open dead letters on every workspace page", func(t *testing.T) {
		res := c.Get("/w/default/events")
		handlerstest.ExpectBody(t, "events page", res, `data-testid="nav-count-dashboard"`, `5<span class="sr-only"> alarms firing</span>`,
			`data-testid="nav-count-dead-letters"`, `3<span class="sr-only"> open</span>`)
		if strings.Contains(res.Body, `data-testid="alarm-banners"`) {
			t.Fatal("the events page shows banners of alarms that do not concern it")
		}
	})

	t.Run("each page shows the alarms that concern it", func(t *testing.T) {
		src := c.Get("/w/default/sources")
		handlerstest.ExpectBody(t, "sources", src, `data-testid="alarm-silence"`, `data-testid="alarm-signature_refused"`)
		if strings.Contains(src.Body, `data-testid="alarm-destination_paused"`) {
			t.Fatal("the sources page shows the paused destination's banner")
		}
		handlerstest.ExpectBody(t, "destinations", c.Get("/w/default/destinations"), `data-testid="alarm-destination_paused"`)
		handlerstest.ExpectBody(t, "guards", c.Get("/w/default/guards"), `data-testid="alarm-health"`, `data-testid="alarm-deadman"`)
	})

	t.Run("a source row says silent for how long, or refusing deliveries", func(t *testing.T) {
		res := c.Get("/w/default/sources")
		handlerstest.ExpectBody(t, "sources", res, `data-testid="source-alarm">silent 12 min<`, `data-testid="source-alarm">refusing deliveries<`)
	})

	t.Run("the API lists the same alarms", func(t *testing.T) {
		_, tok, err := e.Store.TokenCreate(context.Background(), "alarms", models.RoleViewer)
		if err != nil {
			t.Fatal(err)
		}
		req, _ := http.NewRequest(http.MethodGet, e.Srv.URL+"/api/v1/workspaces/default/alarms/firing", nil)
		req.Header.Set("Authorization", "Bearer "+tok)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var body struct {
			Alarms []models.FiringAlarm `json:"alarms"`
		}
		if err := json.NewDecoder(resp.Body).Decode(&body); err != nil || resp.StatusCode != http.StatusOK {
			t.Fatalf("GET alarms/firing: %d %v", resp.StatusCode, err)
		}
		got := map[string]bool{}
		for _, a := range body.Alarms {
			got[a.Kind] = a.Action != "" && a.Link != ""
		}
		for _, k := range kinds {
			if !got[k] {
				t.Errorf("API alarms %v lack %s (with an action and a link)", got, k)
			}
		}
	})
}

func TestUIAlarmBannerGoesWhenTheAlarmClears(t *testing.T) {
	t.Parallel()
	e := handlerstest.NewEnv(t)
	silent, _ := alarmFixture(t, e)
	c := e.SignedIn(models.RoleViewer)
	handlerstest.ExpectBody(t, "firing", c.Get("/w/default/health"), `data-testid="alarm-silence"`)
	if err := e.Store.DB().Exec(`UPDATE silence_alarms SET silent = false, silent_since = NULL WHERE source_id = ?`, silent.ID).Error; err != nil {
		t.Fatal(err)
	}
	res := c.Get("/w/default/health")
	if strings.Contains(res.Body, `data-testid="alarm-silence"`) {
		t.Fatal("the silence banner stays after the source recovered")
	}
	if strings.Contains(c.Get("/w/default/sources").Body, "silent 12 min") {
		t.Fatal("the source row still says silent after it recovered")
	}
}

func TestUIOutcomeGridFlagsAHighQuarantineShare(t *testing.T) {
	t.Parallel()
	e := handlerstest.NewEnv(t)
	src := models.Source{WorkspaceID: e.WS.ID, Name: "Form", Kind: "standard-webhooks", Channel: "web_form", Enabled: true}
	if err := e.Store.SourceCreate(context.Background(), &src); err != nil {
		t.Fatal(err)
	}
	c := e.SignedIn(models.RoleViewer)
	for range 18 {
		e.Event(src, "form_submitted", "applied", `{}`)
	}
	for range 2 {
		e.Event(src, "form_submitted", "quarantined", `{}`)
	}
	if strings.Contains(c.Get("/w/default/health").Body, `data-testid="flag-quarantined"`) {
		t.Fatal("10 % quarantined is flagged; the threshold is above 10 %")
	}
	for range 4 {
		e.Event(src, "form_submitted", "quarantined", `{}`)
	}
	handlerstest.ExpectBody(t, "25 % quarantined", c.Get("/w/default/health"), `data-testid="flag-quarantined"`, "25 % of accepted events are quarantined",
		`href="/w/default/dead-letters"`)
}

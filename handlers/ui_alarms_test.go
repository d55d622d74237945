package handlers_test

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/leadgate/leadgate/models"
)

// alarmFixture sets off one alarm of every kind in the default workspace.
func alarmFixture(t *testing.T, e *uiEnv) (silent, refusing models.Source) {
	t.Helper()
	ctx := context.Background()
	db := e.store.DB()
	mk := func(name string) models.Source {
		src := models.Source{WorkspaceID: e.ws.ID, Name: name, Kind: "standard-webhooks", Channel: "web_form", Enabled: true}
		if err := e.store.SourceCreate(ctx, &src); err != nil {
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
		VALUES (?, ?, 'apply', 'static', 300, true, true, ?, 'No event from Voice agent for 12 minutes')`, e.ws.ID, silent.ID, now.Add(-12*time.Minute)).Error)
	_, err := e.store.SourceAlarmFire(ctx, e.ws.ID, refusing.ID, models.SourceAlarmSignatureRefused, "10 deliveries refused: bad signature", now.Add(-3*time.Minute))
	must(err)
	d := models.Destination{WorkspaceID: e.ws.ID, Name: "HubSpot", Kind: "hubspot", BaseURL: "https://api.hubapi.com", Enabled: true, BatchSize: 10}
	must(e.store.DestinationCreate(ctx, &d))
	_, _, err = e.store.DestinationPause(ctx, d.ID, "the CRM refused the token (401)")
	must(err)
	must(e.store.HealthAlarmConfigure(ctx, e.ws.ID, "dead_letters_open", 25, true))
	must(db.Exec(`UPDATE health_alarms SET firing = true, firing_since = ?, last_value = 48 WHERE workspace_id = ? AND metric = 'dead_letters_open'`, now.Add(-time.Hour), e.ws.ID).Error)
	_, err = e.store.HeartbeatTick(ctx, now.Add(-10*time.Minute))
	must(err)
	for range 3 {
		_, err = e.store.DeadLetterAdd(ctx, models.DeadLetter{WorkspaceID: e.ws.ID, Kind: "transient", Reason: "test"})
		must(err)
	}
	return silent, refusing
}

func TestUIAlarmsShowWherePeopleLook(t *testing.T) {
	t.Parallel()
	e := newUIEnv(t)
	alarmFixture(t, e)
	c := e.signedIn(models.RoleViewer)
	kinds := []string{"silence", "signature_refused", "health", "destination_paused", "deadman"}

	t.Run("Pipeline health shows every firing alarm with what to do and a link", func(t *testing.T) {
		for _, page := range []string{"/w/default/", "/w/default/health"} {
			res := c.get(page)
			expectStatus(t, page, res, http.StatusOK)
			for _, k := range kinds {
				expectBody(t, page, res, `data-testid="alarm-`+k+`"`)
			}
			expectBody(t, page, res, "No event from Voice agent for 12 minutes", "for 12 min", "HubSpot is paused: the CRM refused the token (401)",
				"The scheduler has not ticked since", "dead_letters_open is 48.0", "resume it", `href="/w/default/destinations/`)
		}
	})

	t.Run("the nav counts alarms firing and open dead letters on every workspace page", func(t *testing.T) {
		res := c.get("/w/default/events")
		expectBody(t, "events page", res, `data-testid="nav-count-dashboard"`, `5<span class="sr-only"> alarms firing</span>`,
			`data-testid="nav-count-dead-letters"`, `3<span class="sr-only"> open</span>`)
		if strings.Contains(res.body, `data-testid="alarm-banners"`) {
			t.Fatal("the events page shows banners of alarms that do not concern it")
		}
	})

	t.Run("each page shows the alarms that concern it", func(t *testing.T) {
		src := c.get("/w/default/sources")
		expectBody(t, "sources", src, `data-testid="alarm-silence"`, `data-testid="alarm-signature_refused"`)
		if strings.Contains(src.body, `data-testid="alarm-destination_paused"`) {
			t.Fatal("the sources page shows the paused destination's banner")
		}
		expectBody(t, "destinations", c.get("/w/default/destinations"), `data-testid="alarm-destination_paused"`)
		expectBody(t, "guards", c.get("/w/default/guards"), `data-testid="alarm-health"`, `data-testid="alarm-deadman"`)
	})

	t.Run("a source row says silent for how long, or refusing deliveries", func(t *testing.T) {
		res := c.get("/w/default/sources")
		expectBody(t, "sources", res, `data-testid="source-alarm">silent 12 min<`, `data-testid="source-alarm">refusing deliveries<`)
	})

	t.Run("the API lists the same alarms", func(t *testing.T) {
		_, tok, err := e.store.TokenCreate(context.Background(), "alarms", models.RoleViewer)
		if err != nil {
			t.Fatal(err)
		}
		req, _ := http.NewRequest(http.MethodGet, e.srv.URL+"/api/v1/workspaces/default/alarms/firing", nil)
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
	e := newUIEnv(t)
	silent, _ := alarmFixture(t, e)
	c := e.signedIn(models.RoleViewer)
	expectBody(t, "firing", c.get("/w/default/health"), `data-testid="alarm-silence"`)
	if err := e.store.DB().Exec(`UPDATE silence_alarms SET silent = false, silent_since = NULL WHERE source_id = ?`, silent.ID).Error; err != nil {
		t.Fatal(err)
	}
	res := c.get("/w/default/health")
	if strings.Contains(res.body, `data-testid="alarm-silence"`) {
		t.Fatal("the silence banner stays after the source recovered")
	}
	if strings.Contains(c.get("/w/default/sources").body, "silent 12 min") {
		t.Fatal("the source row still says silent after it recovered")
	}
}

func TestUIOutcomeGridFlagsAHighQuarantineShare(t *testing.T) {
	t.Parallel()
	e := newUIEnv(t)
	src := models.Source{WorkspaceID: e.ws.ID, Name: "Form", Kind: "standard-webhooks", Channel: "web_form", Enabled: true}
	if err := e.store.SourceCreate(context.Background(), &src); err != nil {
		t.Fatal(err)
	}
	c := e.signedIn(models.RoleViewer)
	for range 18 {
		e.event(src, "form_submitted", "applied", `{}`)
	}
	for range 2 {
		e.event(src, "form_submitted", "quarantined", `{}`)
	}
	if strings.Contains(c.get("/w/default/health").body, `data-testid="flag-quarantined"`) {
		t.Fatal("10 % quarantined is flagged; the threshold is above 10 %")
	}
	for range 4 {
		e.event(src, "form_submitted", "quarantined", `{}`)
	}
	expectBody(t, "25 % quarantined", c.get("/w/default/health"), `data-testid="flag-quarantined"`, "25 % of accepted events are quarantined",
		`href="/w/default/dead-letters"`)
}

package api_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/google/uuid"

	"github.com/leadgate/leadgate/cmd/leadgate/app"
	"github.com/leadgate/leadgate/cmd/leadgate/config"
	"github.com/leadgate/leadgate/internal/testkit"
	"github.com/leadgate/leadgate/models"
	"github.com/leadgate/leadgate/web"
)

// guardEnv is a real leadgate process (app.New + web.Routes) with an editor
// and an admin token.
type guardEnv struct {
	t             *testing.T
	app           *app.App
	srv           *httptest.Server
	store         *models.Store
	ws            int64
	editor, admin string
	src           models.Source
}

func newGuardEnv(t *testing.T) *guardEnv {
	t.Helper()
	env := map[string]string{"LEADGATE_DATABASE_URL": testkit.MigratedDatabase(t), "LEADGATE_REDIS_URL": testkit.RedisDB(t),
		"LEADGATE_SECRET_KEY": "guards-test-secret-0123456789", "LEADGATE_SPOOL_DIR": "off",
		"LEADGATE_EGRESS_ALLOWED_HOSTS": "127.0.0.1"}
	cfg, err := config.FromEnv(func(k string) string { return env[k] })
	if err != nil {
		t.Fatal(err)
	}
	ctx, log := context.Background(), slog.New(slog.DiscardHandler)
	store, err := models.Open(ctx, cfg.DatabaseURL, log)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = store.Close() })
	if err := store.Migrate(ctx, log); err != nil {
		t.Fatal(err)
	}
	a, err := app.New(ctx, cfg, store, log)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(a.Close)
	g := &guardEnv{t: t, app: a, store: store, srv: httptest.NewServer(web.Routes(a.Deps()))}
	t.Cleanup(g.srv.Close)
	ws, _ := store.WorkspaceBySlug(ctx, "default")
	g.ws = ws.ID
	_, g.editor, _ = store.TokenCreate(ctx, "editor", models.RoleEditor)
	_, g.admin, _ = store.TokenCreate(ctx, "admin", models.RoleAdmin)
	g.src = models.Source{WorkspaceID: ws.ID, Name: "Web form", Kind: "standard-webhooks", Enabled: true}
	if err := store.SourceCreate(ctx, &g.src); err != nil {
		t.Fatal(err)
	}
	return g
}

// call sends a JSON request and decodes the JSON answer.
func (g *guardEnv) call(token, method, path, body string) (int, map[string]any) {
	g.t.Helper()
	req, _ := http.NewRequest(method, g.srv.URL+"/api/v1/workspaces/default"+path, bytes.NewBufferString(body))
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		g.t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	var out map[string]any
	_ = json.Unmarshal(raw, &out)
	return resp.StatusCode, out
}

func (g *guardEnv) audited(action string) int {
	g.t.Helper()
	entries, err := g.store.AuditList(context.Background(), g.ws, models.Page{Limit: 500})
	if err != nil {
		g.t.Fatal(err)
	}
	n := 0
	for _, e := range entries {
		if e.Action == action {
			n++
		}
	}
	return n
}

func TestGuardsAPI(t *testing.T) {
	t.Parallel()
	g := newGuardEnv(t)
	filters := fmt.Sprintf("/sources/%d/filters", g.src.ID)

	t.Run("MalformedFilterRejectedAtSave", func(t *testing.T) {
		status, body := g.call(g.editor, "PUT", filters, `{"rules":[{"name":"internal","expr":"email_domain == \"acme.com\"","action":"drop"},
			{"name":"spam","expr":"payload.honeypot !=","action":"drop"}]}`)
		if status != 400 || body["field"] != "rules[1].expr" || !strings.Contains(fmt.Sprint(body["error"]), "invalid expression") {
			t.Fatalf("%d %v, want 400 naming rules[1].expr", status, body)
		}
		if _, got := g.call(g.editor, "GET", filters, ""); len(got["rules"].([]any)) != 0 || g.audited("source_filters.update") != 0 {
			t.Fatalf("a refused rule set was stored: %v", got)
		}
	})
	t.Run("FilterSavedAuditedAndTested", func(t *testing.T) {
		status, body := g.call(g.editor, "PUT", filters, `{"rules":[{"name":"paid","expr":"attribution.utm_source == \"ads\"","action":"tag","tags":["paid"]},
			{"name":"internal","expr":"email_domain == \"acme.com\"","action":"drop"}]}`)
		if status != 200 || body["version"] != float64(1) {
			t.Fatalf("%d %v", status, body)
		}
		if g.audited("source_filters.update") != 1 {
			t.Fatal("the save was not audited")
		}
		_, v := g.call(g.editor, "POST", filters+"/test", `{"event":{"email":"bob@acme.com","email_domain":"acme.com","attribution":{"utm_source":"ads"}}}`)
		if v["drop"] != true || v["rule"] != "internal" || fmt.Sprint(v["tags"]) != "[paid]" {
			t.Fatalf("test verdict %v", v)
		}
		if status, _ := g.call(g.editor, "DELETE", filters, ""); status != 204 || g.audited("source_filters.delete") != 1 {
			t.Fatalf("delete: %d", status)
		}
	})
	t.Run("LoopSettings", func(t *testing.T) {
		if status, body := g.call(g.editor, "PUT", "/guards/loop", `{"breaker_max":-1}`); status != 400 || body["field"] != "breaker_max" {
			t.Fatalf("%d %v", status, body)
		}
		status, body := g.call(g.editor, "PUT", "/guards/loop", `{"breaker_max":5,"own_source_ids":["1160452"]}`)
		eff, _ := body["effective"].(map[string]any)
		if status != 200 || eff["breaker_max"] != float64(5) || eff["echo_window_seconds"] != float64(600) || g.audited("guards.loop.update") != 1 {
			t.Fatalf("%d %v", status, body)
		}
	})
	t.Run("BreakerReset", func(t *testing.T) {
		contact := uuid.NewString()
		if status, _ := g.call(g.editor, "POST", "/guards/breakers/"+contact+"/reset", ""); status != 404 {
			t.Fatalf("reset of an untripped breaker: %d", status)
		}
		s := models.LoopSettings{BreakerMax: 1}
		for range 2 {
			if _, err := g.app.Guards.Breaker.Allow(context.Background(), g.ws, contact, s); err != nil {
				t.Fatal(err)
			}
		}
		if _, body := g.call(g.editor, "GET", "/guards/breakers", ""); len(body["breakers"].([]any)) != 1 {
			t.Fatalf("breakers %v", body)
		}
		if status, body := g.call(g.editor, "POST", "/guards/breakers/"+contact+"/reset", ""); status != 200 || body["status"] != "reset" {
			t.Fatalf("%d %v", status, body)
		}
		if d, _ := g.app.Guards.Breaker.Allow(context.Background(), g.ws, contact, s); !d.Allowed || g.audited("guards.breaker.reset") != 1 {
			t.Fatalf("after reset: %+v", d)
		}
	})
	t.Run("AlertChannelsAndSSRF", func(t *testing.T) {
		status, body := g.call(g.editor, "POST", "/alerts/channels", `{"name":"ops","kind":"webhook","config":{"url":"https://10.0.0.8/hook"}}`)
		if status != 400 || body["field"] != "config.url" {
			t.Fatalf("private URL: %d %v", status, body)
		}
		if status, _ := g.call(g.editor, "PUT", "/guards/alerting", `{"allowed_hosts":["10.0.0.8"]}`); status != 403 {
			t.Fatalf("an editor changed the SSRF allowlist: %d", status)
		}
		if status, _ := g.call(g.admin, "PUT", "/guards/alerting", `{"allowed_hosts":["10.0.0.8"]}`); status != 200 || g.audited("guards.alerting.update") != 1 {
			t.Fatalf("admin allowlist: %d", status)
		}
		status, body = g.call(g.editor, "POST", "/alerts/channels", `{"name":"ops","kind":"webhook","config":{"url":"https://10.0.0.8/hook"},"secrets":{"signing_secret":"s3cret"}}`)
		if status != 201 || fmt.Sprint(body["secrets_set"]) != "[signing_secret]" || strings.Contains(fmt.Sprint(body), "s3cret") {
			t.Fatalf("create: %d %v", status, body)
		}
		status, body = g.call(g.editor, "POST", "/alerts/channels", `{"name":"slack","kind":"slack","secrets":{"webhook_url":"http://hooks.slack.com/services/x"}}`)
		if status != 400 || body["field"] != "secrets.webhook_url" || !strings.Contains(fmt.Sprint(body["error"]), "https") {
			t.Fatalf("http slack URL: %d %v", status, body)
		}
		if g.audited("alert_channel.create") != 1 {
			t.Fatal("channel creation not audited once")
		}
	})
	t.Run("Alarms", func(t *testing.T) {
		status, body := g.call(g.editor, "POST", "/alarms/silence", `{"metric":"apply","business_hours":{"time_zone":"Mars/Base","from":"09:00","to":"17:00"}}`)
		if status != 400 || body["field"] != "business_hours" {
			t.Fatalf("%d %v", status, body)
		}
		status, body = g.call(g.editor, "POST", "/alarms/silence", fmt.Sprintf(`{"source_id":%d,"business_hours":{"time_zone":"Europe/Berlin","weekdays":["mon","fri"],"from":"09:00","to":"17:00"}}`, g.src.ID))
		if status != 201 || body["threshold_seconds"] != float64(5400) || g.audited("silence_alarm.create") != 1 {
			t.Fatalf("%d %v", status, body)
		}
		if status, body := g.call(g.editor, "PUT", "/alarms/health/sync_lag_seconds", `{"threshold":600}`); status != 200 || g.audited("health_alarm.update") != 1 {
			t.Fatalf("%d %v", status, body)
		}
		_, body = g.call(g.editor, "GET", "/alarms/health", "")
		if list := body["health_alarms"].([]any); len(list) != 6 {
			t.Fatalf("health alarms %v", list)
		}
	})
}

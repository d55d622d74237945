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
	"time"

	"github.com/google/uuid"

	"github.com/leadgate/leadgate/cmd/leadgate/app"
	"github.com/leadgate/leadgate/cmd/leadgate/config"
	"github.com/leadgate/leadgate/internal/testkit"
	"github.com/leadgate/leadgate/models"
	"github.com/leadgate/leadgate/web"
)

// lcEnv is a real leadgate process for the lifecycle API: app.New +
// web.Routes behind httptest, its own database and Redis DB, an editor token.
type lcEnv struct {
	t     *testing.T
	ctx   context.Context
	app   *app.App
	srv   *httptest.Server
	store *models.Store
	ws    int64
	token string
	src   models.Source
}

func newLCEnv(t *testing.T) *lcEnv {
	t.Helper()
	env := map[string]string{
		"LEADGATE_DATABASE_URL": testkit.MigratedDatabase(t),
		"LEADGATE_REDIS_URL":    testkit.RedisDB(t),
		"LEADGATE_SECRET_KEY":   "lifecycle-test-secret-0123456789",
		"LEADGATE_SPOOL_DIR":    "off",
		"LEADGATE_PUBLIC_URL":   "http://localhost:8080",
		// CRM fakes and webhook receivers listen on 127.0.0.1: open the SSRF guard for them.
		"LEADGATE_EGRESS_ALLOWED_HOSTS": "127.0.0.1",
	}
	cfg, err := config.FromEnv(func(k string) string { return env[k] })
	if err != nil {
		t.Fatalf("config: %v", err)
	}
	ctx := context.Background()
	log := lcLogger()
	store, err := models.Open(ctx, cfg.DatabaseURL, log)
	if err != nil {
		t.Fatalf("open store: %v", err)
	}
	t.Cleanup(func() { _ = store.Close() })
	if err := store.Migrate(ctx, log); err != nil {
		t.Fatalf("migrate: %v", err)
	}
	a, err := app.New(ctx, cfg, store, log)
	if err != nil {
		t.Fatalf("app: %v", err)
	}
	t.Cleanup(a.Close)
	srv := httptest.NewServer(web.Routes(a.Deps()))
	t.Cleanup(srv.Close)
	ws, err := store.WorkspaceBySlug(ctx, "default")
	if err != nil {
		t.Fatalf("default workspace: %v", err)
	}
	_, token, err := store.TokenCreate(ctx, "auditor", models.RoleEditor)
	if err != nil {
		t.Fatalf("token: %v", err)
	}
	src := models.Source{WorkspaceID: ws.ID, Name: "Web form", Kind: "standard-webhooks", Channel: "web_form", Enabled: true,
		Config: models.SourceConfig{EventStages: map[string]string{"form_submitted": "Discovered", "email_replied": "Engaged", "deal_won": "Closed"}}}
	if err := store.SourceCreate(ctx, &src); err != nil {
		t.Fatalf("source: %v", err)
	}
	return &lcEnv{t: t, ctx: ctx, app: a, srv: srv, store: store, ws: ws.ID, token: token, src: src}
}

// call sends a JSON request to the workspace API and decodes the answer.
func (e *lcEnv) call(method, path string, body any) (int, map[string]any) {
	e.t.Helper()
	var rd io.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		rd = bytes.NewReader(b)
	}
	req, _ := http.NewRequest(method, e.srv.URL+"/api/v1/workspaces/default"+path, rd)
	req.Header.Set("Authorization", "Bearer "+e.token)
	req.Header.Set("Content-Type", "application/json")
	resp, err := e.srv.Client().Do(req)
	if err != nil {
		e.t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	var out map[string]any
	_ = json.Unmarshal(raw, &out)
	return resp.StatusCode, out
}

// applied stores one event as ingest would and applies it.
func (e *lcEnv) applied(typ, email, phone string, at time.Time, fields map[string]any) string {
	e.t.Helper()
	id := uuid.Must(uuid.NewV7()).String()
	if fields == nil {
		fields = map[string]any{}
	}
	fj, _ := json.Marshal(fields)
	ev := models.Event{ID: id, WorkspaceID: e.ws, SourceID: e.src.ID, EventType: typ, OccurredAt: at, ReceivedAt: time.Now().UTC(),
		Fields: fj, Attribution: json.RawMessage(`{}`), Payload: json.RawMessage(`{}`), Status: models.EventPending}
	if email != "" {
		ev.Email = &email
	}
	if phone != "" {
		ev.Phone = &phone
	}
	if _, err := e.store.IngestStore(e.ctx, []models.IngestItem{{Event: ev, Key: "k-" + id}}, time.Hour); err != nil {
		e.t.Fatalf("store event: %v", err)
	}
	if err := e.app.Applier.Apply(e.ctx, id); err != nil {
		e.t.Fatalf("apply: %v", err)
	}
	return id
}

// lastAudit returns the newest audit row of an action.
func (e *lcEnv) lastAudit(action string) (models.AuditEntry, int) {
	e.t.Helper()
	list, err := e.store.AuditList(e.ctx, e.ws, models.Page{Limit: 500})
	if err != nil {
		e.t.Fatalf("audit: %v", err)
	}
	n, first := 0, models.AuditEntry{}
	for _, a := range list {
		if a.Action == action {
			if n == 0 {
				first = a
			}
			n++
		}
	}
	return first, n
}

// wantAudit checks the newest row of action: the actor, a time, and
// before/after holding each given top-level key with its value.
func (e *lcEnv) wantAudit(action string, before, after map[string]any) models.AuditEntry {
	e.t.Helper()
	a, n := e.lastAudit(action)
	if n == 0 {
		e.t.Fatalf("no %s audit row", action)
	}
	if !strings.Contains(a.Actor, "auditor") || a.At.IsZero() || a.WorkspaceID == nil || *a.WorkspaceID != e.ws {
		e.t.Errorf("%s audit actor=%q at=%v ws=%v, want the auditor token, a time and the workspace", action, a.Actor, a.At, a.WorkspaceID)
	}
	for name, pair := range map[string]struct {
		raw  json.RawMessage
		want map[string]any
	}{"before": {a.Before, before}, "after": {a.After, after}} {
		var got map[string]any
		if err := json.Unmarshal(pair.raw, &got); err != nil {
			e.t.Errorf("%s audit %s = %s: %v", action, name, pair.raw, err)
			continue
		}
		for k, v := range pair.want {
			if fmt.Sprint(got[k]) != fmt.Sprint(v) {
				e.t.Errorf("%s audit %s[%s] = %v, want %v (all: %s)", action, name, k, got[k], v, pair.raw)
			}
		}
	}
	return a
}

func lcLogger() *slog.Logger { return slog.New(slog.DiscardHandler) }

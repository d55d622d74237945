package handlers_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"os"
	"regexp"
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

// uiEnv is a real leadgate process (app.New + web.Routes with the web app)
// on its own database and Redis DB, served by httptest.
type uiEnv struct {
	t     *testing.T
	app   *app.App
	srv   *httptest.Server
	store *models.Store
	ws    models.Workspace // the default workspace
}

const uiPassword = "correct horse battery"

func newUIEnv(t *testing.T) *uiEnv {
	t.Helper()
	return newUIEnvWith(t, nil)
}

// newUIEnvWith is newUIEnv with some settings of the environment overridden.
func newUIEnvWith(t *testing.T, override map[string]string) *uiEnv {
	t.Helper()
	env := map[string]string{
		"LEADGATE_DATABASE_URL": testkit.MigratedDatabase(t),
		"LEADGATE_REDIS_URL":    testkit.RedisDB(t),
		"LEADGATE_SECRET_KEY":   "ui-test-secret-key-0123456789",
		"LEADGATE_SPOOL_DIR":    "off",
		"LEADGATE_PUBLIC_URL":   "http://localhost:8080",
		// CRM fakes and webhook receivers listen on 127.0.0.1: open the SSRF guard for them.
		"LEADGATE_EGRESS_ALLOWED_HOSTS": "127.0.0.1",
	}
	for k, v := range override {
		env[k] = v
	}
	cfg, err := config.FromEnv(func(k string) string { return env[k] })
	if err != nil {
		t.Fatalf("config: %v", err)
	}
	ctx := context.Background()
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	if os.Getenv("UI_TEST_LOG") != "" {
		log = slog.New(slog.NewTextHandler(os.Stderr, nil))
	}
	store, err := models.Open(ctx, cfg.DatabaseURL, log)
	if err != nil {
		t.Fatalf("open store: %v", err)
	}
	t.Cleanup(func() { store.Close() })
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
	return &uiEnv{t: t, app: a, srv: srv, store: store, ws: ws}
}

// user creates an active account with uiPassword.
func (e *uiEnv) user(email, role string) models.User {
	e.t.Helper()
	u, err := e.store.UserCreate(context.Background(), email, uiPassword, role, false)
	if err != nil {
		e.t.Fatalf("create user %s: %v", email, err)
	}
	return u
}

// signedIn returns a client signed in as a new user with role.
func (e *uiEnv) signedIn(role string) *uiClient {
	e.t.Helper()
	email := role + "-" + uuid.NewString()[:8] + "@example.com"
	e.user(email, role)
	c := e.client()
	if res := c.login(email, uiPassword); res.status != http.StatusSeeOther {
		e.t.Fatalf("login as %s: status %d", role, res.status)
	}
	return c
}

// auditActions lists the audit history's actions, newest first.
func (e *uiEnv) auditActions() []string {
	e.t.Helper()
	list, err := e.store.AuditList(context.Background(), 0, models.Page{Limit: 500})
	if err != nil {
		e.t.Fatalf("audit list: %v", err)
	}
	out := make([]string, len(list))
	for i, a := range list {
		out[i] = a.Action
	}
	return out
}

// event stores one inbox event for source src.
func (e *uiEnv) event(src models.Source, typ, status string, payload string) string {
	e.t.Helper()
	id := uuid.Must(uuid.NewV7()).String()
	email := "lead-" + id[len(id)-6:] + "@example.com"
	ev := models.Event{ID: id, WorkspaceID: src.WorkspaceID, SourceID: src.ID, EventType: typ, OccurredAt: time.Now().UTC(),
		Email: &email, Status: status, Payload: json.RawMessage(payload), Fields: json.RawMessage(`{}`), Attribution: json.RawMessage(`{}`)}
	if _, err := e.store.IngestStore(context.Background(), []models.IngestItem{{Event: ev, Key: "k-" + id}}, time.Hour); err != nil {
		e.t.Fatalf("store event: %v", err)
	}
	return id
}

// uiResponse is a fully read HTTP answer.
type uiResponse struct {
	status int
	header http.Header
	body   string
}

// uiClient is a browser stand-in: a cookie jar, no redirect following, and
// the CSRF token of the last page it saw.
type uiClient struct {
	t    *testing.T
	base string
	hc   *http.Client
	csrf string
}

func (e *uiEnv) client() *uiClient {
	jar, _ := cookiejar.New(nil)
	return &uiClient{t: e.t, base: e.srv.URL, hc: &http.Client{
		Jar:           jar,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}}
}

var csrfInput = regexp.MustCompile(`name="gorilla.csrf.Token" value="([^"]+)"`)

func (c *uiClient) do(req *http.Request) uiResponse {
	c.t.Helper()
	res, err := c.hc.Do(req)
	if err != nil {
		c.t.Fatalf("%s %s: %v", req.Method, req.URL.Path, err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	if m := csrfInput.FindStringSubmatch(string(b)); m != nil {
		c.csrf = m[1]
	}
	return uiResponse{status: res.StatusCode, header: res.Header, body: string(b)}
}

func (c *uiClient) get(path string, header ...string) uiResponse {
	c.t.Helper()
	req, _ := http.NewRequest(http.MethodGet, c.base+path, nil)
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	return c.do(req)
}

// post submits a form with the CSRF token (fetched from /login if none yet).
func (c *uiClient) post(path string, form url.Values) uiResponse {
	c.t.Helper()
	if c.csrf == "" {
		c.get("/login")
	}
	f := url.Values{}
	for k, v := range form {
		f[k] = v
	}
	f.Set("gorilla.csrf.Token", c.csrf)
	return c.postRaw(path, f)
}

// postRaw submits a form exactly as given (no CSRF token added).
func (c *uiClient) postRaw(path string, form url.Values) uiResponse {
	c.t.Helper()
	req, _ := http.NewRequest(http.MethodPost, c.base+path, bytes.NewBufferString(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	return c.do(req)
}

func (c *uiClient) login(email, password string) uiResponse {
	c.t.Helper()
	return c.post("/login", url.Values{"email": {email}, "password": {password}})
}

// expectStatus fails unless res has the status.
func expectStatus(t *testing.T, what string, res uiResponse, status int) {
	t.Helper()
	if res.status != status {
		t.Fatalf("%s: status %d, want %d; body: %.400s", what, res.status, status, res.body)
	}
}

// expectRedirect fails unless res redirects to location. A redirect to the
// sign-in page may carry the page asked for (?next=…); loginNext checks it.
func expectRedirect(t *testing.T, what string, res uiResponse, location string) {
	t.Helper()
	got := res.header.Get("Location")
	if location == "/login" && strings.HasPrefix(got, "/login?next=") {
		got = "/login"
	}
	if res.status != http.StatusSeeOther || got != location {
		t.Fatalf("%s: status %d to %q, want 303 to %q", what, res.status, res.header.Get("Location"), location)
	}
}

// expectBody fails unless the body contains every fragment.
func expectBody(t *testing.T, what string, res uiResponse, fragments ...string) {
	t.Helper()
	for _, f := range fragments {
		if !strings.Contains(res.body, f) {
			t.Fatalf("%s: body lacks %q; body: %.600s", what, f, res.body)
		}
	}
}

// copyCookies is what someone who read the browser's cookies holds: a new client with the same cookies.
func (e *uiEnv) copyCookies(c *uiClient) *uiClient {
	e.t.Helper()
	u, _ := url.Parse(c.base)
	cp := e.client()
	jar, _ := cookiejar.New(nil)
	jar.SetCookies(u, c.hc.Jar.Cookies(u))
	cp.hc.Jar = jar
	return cp
}

// loginVia signs in with extra request headers (a proxy's X-Forwarded-For).
func (c *uiClient) loginVia(header http.Header, email, password string) uiResponse {
	c.t.Helper()
	if c.csrf == "" {
		c.get("/login")
	}
	form := url.Values{"email": {email}, "password": {password}, "gorilla.csrf.Token": {c.csrf}}
	req, _ := http.NewRequest(http.MethodPost, c.base+"/login", strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	for k, v := range header {
		req.Header[k] = v
	}
	return c.do(req)
}

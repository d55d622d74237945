// Package handlerstest is the harness the API and page tests share: a real leadgate process (app.New
// and web.Routes with the web app) on its own database and Redis DB, a browser stand-in, and seeds.
// Only tests import it.
package handlerstest

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
	"golang.org/x/crypto/bcrypt"

	"github.com/leadgate/leadgate/cmd/leadgate/app"
	"github.com/leadgate/leadgate/cmd/leadgate/config"
	"github.com/leadgate/leadgate/internal/testkit"
	"github.com/leadgate/leadgate/models"
	"github.com/leadgate/leadgate/web"
)

// Env is a real leadgate process (app.New + web.Routes with the web app)
// on its own database and Redis DB, served by httptest.
type Env struct {
	T     *testing.T
	App   *app.App
	Srv   *httptest.Server
	Store *models.Store
	WS    models.Workspace // the default workspace
}

const Password = "correct horse battery"

func NewEnv(t *testing.T) *Env {
	t.Helper()
	return NewEnvWith(t, nil)
}

// NewEnvWith is NewEnv with some settings of the environment overridden.
func NewEnvWith(t *testing.T, override map[string]string) *Env {
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
	store, err := models.Open(ctx, cfg.DatabaseURL, log, models.WithPasswordCost(bcrypt.MinCost)) // tests sign in often
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
	return &Env{T: t, App: a, Srv: srv, Store: store, WS: ws}
}

// User creates an active account with Password.
func (e *Env) User(email, role string) models.User {
	e.T.Helper()
	u, err := e.Store.UserCreate(context.Background(), email, Password, role, false)
	if err != nil {
		e.T.Fatalf("create user %s: %v", email, err)
	}
	return u
}

// SignedIn returns a client signed in as a new user with role.
func (e *Env) SignedIn(role string) *Client {
	e.T.Helper()
	email := role + "-" + uuid.NewString()[:8] + "@example.com"
	e.User(email, role)
	c := e.Client()
	if res := c.Login(email, Password); res.Status != http.StatusSeeOther {
		e.T.Fatalf("login as %s: status %d", role, res.Status)
	}
	return c
}

// AuditActions lists the audit history's actions, newest first.
func (e *Env) AuditActions() []string {
	e.T.Helper()
	list, err := e.Store.AuditList(context.Background(), 0, models.Page{Limit: 500})
	if err != nil {
		e.T.Fatalf("audit list: %v", err)
	}
	out := make([]string, len(list))
	for i, a := range list {
		out[i] = a.Action
	}
	return out
}

// Event stores one inbox event for source src.
func (e *Env) Event(src models.Source, typ, status string, payload string) string {
	e.T.Helper()
	id := uuid.Must(uuid.NewV7()).String()
	email := "lead-" + id[len(id)-6:] + "@example.com"
	ev := models.Event{ID: id, WorkspaceID: src.WorkspaceID, SourceID: src.ID, EventType: typ, OccurredAt: time.Now().UTC(),
		Email: &email, Status: status, Payload: json.RawMessage(payload), Fields: json.RawMessage(`{}`), Attribution: json.RawMessage(`{}`)}
	if _, err := e.Store.IngestStore(context.Background(), []models.IngestItem{{Event: ev, Key: "k-" + id}}, time.Hour); err != nil {
		e.T.Fatalf("store event: %v", err)
	}
	return id
}

// Response is a fully read HTTP answer.
type Response struct {
	Status int
	Header http.Header
	Body   string
}

// Client is a browser stand-in: a cookie jar, no redirect following, and
// the CSRF token of the last page it saw.
type Client struct {
	t    *testing.T
	Base string
	hc   *http.Client
	CSRF string
}

func (e *Env) Client() *Client {
	jar, _ := cookiejar.New(nil)
	return &Client{t: e.T, Base: e.Srv.URL, hc: &http.Client{
		Jar:           jar,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}}
}

var csrfInput = regexp.MustCompile(`name="gorilla.csrf.Token" value="([^"]+)"`)

func (c *Client) Do(req *http.Request) Response {
	c.t.Helper()
	res, err := c.hc.Do(req)
	if err != nil {
		c.t.Fatalf("%s %s: %v", req.Method, req.URL.Path, err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	if m := csrfInput.FindStringSubmatch(string(b)); m != nil {
		c.CSRF = m[1]
	}
	return Response{Status: res.StatusCode, Header: res.Header, Body: string(b)}
}

func (c *Client) Get(path string, header ...string) Response {
	c.t.Helper()
	req, _ := http.NewRequest(http.MethodGet, c.Base+path, nil)
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	return c.Do(req)
}

// Post submits a form with the CSRF token (fetched from /login if none yet).
func (c *Client) Post(path string, form url.Values) Response {
	c.t.Helper()
	if c.CSRF == "" {
		c.Get("/login")
	}
	f := url.Values{}
	for k, v := range form {
		f[k] = v
	}
	f.Set("gorilla.csrf.Token", c.CSRF)
	return c.PostRaw(path, f)
}

// PostRaw submits a form exactly as given (no CSRF token added).
func (c *Client) PostRaw(path string, form url.Values) Response {
	c.t.Helper()
	req, _ := http.NewRequest(http.MethodPost, c.Base+path, bytes.NewBufferString(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	return c.Do(req)
}

func (c *Client) Login(email, password string) Response {
	c.t.Helper()
	return c.Post("/login", url.Values{"email": {email}, "password": {password}})
}

// ExpectStatus fails unless res has the status.
func ExpectStatus(t *testing.T, what string, res Response, status int) {
	t.Helper()
	if res.Status != status {
		t.Fatalf("%s: status %d, want %d; body: %.400s", what, res.Status, status, res.Body)
	}
}

// ExpectRedirect fails unless res redirects to location. A redirect to the
// sign-in page may carry the page asked for (?next=…); loginNext checks it.
func ExpectRedirect(t *testing.T, what string, res Response, location string) {
	t.Helper()
	got := res.Header.Get("Location")
	if location == "/login" && strings.HasPrefix(got, "/login?next=") {
		got = "/login"
	}
	if res.Status != http.StatusSeeOther || got != location {
		t.Fatalf("%s: status %d to %q, want 303 to %q", what, res.Status, res.Header.Get("Location"), location)
	}
}

// ExpectBody fails unless the body contains every fragment.
func ExpectBody(t *testing.T, what string, res Response, fragments ...string) {
	t.Helper()
	for _, f := range fragments {
		if !strings.Contains(res.Body, f) {
			t.Fatalf("%s: body lacks %q; body: %.600s", what, f, res.Body)
		}
	}
}

// CopyCookies is what someone who read the browser's cookies holds: a new client with the same cookies.
func (e *Env) CopyCookies(c *Client) *Client {
	e.T.Helper()
	u, _ := url.Parse(c.Base)
	cp := e.Client()
	jar, _ := cookiejar.New(nil)
	jar.SetCookies(u, c.hc.Jar.Cookies(u))
	cp.hc.Jar = jar
	return cp
}

// LoginVia signs in with extra request headers (a proxy's X-Forwarded-For).
func (c *Client) LoginVia(header http.Header, email, password string) Response {
	c.t.Helper()
	if c.CSRF == "" {
		c.Get("/login")
	}
	form := url.Values{"email": {email}, "password": {password}, "gorilla.csrf.Token": {c.CSRF}}
	req, _ := http.NewRequest(http.MethodPost, c.Base+"/login", strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	for k, v := range header {
		req.Header[k] = v
	}
	return c.Do(req)
}

package apply_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/leadgate/leadgate/cmd/leadgate/app"
	"github.com/leadgate/leadgate/cmd/leadgate/config"
	"github.com/leadgate/leadgate/ingest"
	"github.com/leadgate/leadgate/ingest/signature"
	"github.com/leadgate/leadgate/internal/testkit"
	"github.com/leadgate/leadgate/lifecycle"
	"github.com/leadgate/leadgate/models"
	"github.com/leadgate/leadgate/web"
)

// binDir holds the leadgate binary built once for the package's tests.
var binDir string

// binOnce guards the one build of the binary shared by the process tests.
var binOnce = sync.OnceValues(func() (string, error) {
	out := filepath.Join(binDir, "leadgate")
	cmd := exec.Command("go", "build", "-o", out, "github.com/leadgate/leadgate/cmd/leadgate")
	cmd.Stderr = os.Stderr
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("go build: %w", err)
	}
	return out, nil
})

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "leadgate-apply-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	binDir = dir
	code := m.Run()
	_ = os.RemoveAll(dir)
	os.Exit(code)
}

// leadgateBinary builds cmd/leadgate once per package run.
func leadgateBinary(t testing.TB) string {
	t.Helper()
	bin, err := binOnce()
	if err != nil {
		t.Fatalf("build leadgate: %v", err)
	}
	return bin
}

// stack is the real product on its own database and Redis DB: ingest and
// API through app.New + web.Routes behind httptest; workers are separate
// OS processes of the leadgate binary started with worker().
type stack struct {
	t     testing.TB
	ctx   context.Context
	env   map[string]string
	store *models.Store
	app   *app.App
	srv   *httptest.Server
	token string
	ws    int64

	mu      sync.Mutex
	workers map[string]*worker
}

// swSource is a standard-webhooks source created through the API.
type swSource struct {
	Kind, URL, Secret string
}

func newStack(t testing.TB) *stack {
	t.Helper()
	ctx := context.Background()
	s := &stack{t: t, ctx: ctx, workers: map[string]*worker{}}
	s.srv = httptest.NewUnstartedServer(nil)
	s.env = map[string]string{
		"LEADGATE_DATABASE_URL":       testkit.MigratedDatabase(t),
		"LEADGATE_REDIS_URL":          testkit.RedisDB(t),
		"LEADGATE_SECRET_KEY":         "apply-race-test-secret-0123456789",
		"LEADGATE_PUBLIC_URL":         "http://" + s.srv.Listener.Addr().String(),
		"LEADGATE_SPOOL_DIR":          "off",
		"LEADGATE_WORKER_CONCURRENCY": "8",
		"LEADGATE_LOG_LEVEL":          "warn",
	}
	cfg, err := config.FromEnv(func(k string) string { return s.env[k] })
	if err != nil {
		t.Fatalf("config: %v", err)
	}
	if s.store, err = models.Open(ctx, cfg.DatabaseURL, testLogger()); err != nil {
		t.Fatalf("open store: %v", err)
	}
	t.Cleanup(func() { _ = s.store.Close() })
	if err := s.store.Migrate(ctx, testLogger()); err != nil {
		t.Fatalf("migrate: %v", err)
	}
	t.Cleanup(s.stopWorkers) // before the database and Redis DB go away
	if s.app, err = app.New(ctx, cfg, s.store, testLogger()); err != nil {
		t.Fatalf("app.New: %v", err)
	}
	t.Cleanup(s.app.Close)
	s.srv.Config.Handler = web.Routes(s.app.Deps())
	s.srv.Start()
	t.Cleanup(s.srv.Close)
	_, s.token, err = s.store.TokenCreate(ctx, "race-admin", models.RoleAdmin)
	if err != nil {
		t.Fatalf("token: %v", err)
	}
	ws, err := s.store.WorkspaceBySlug(ctx, "default")
	if err != nil {
		t.Fatal(err)
	}
	s.ws = ws.ID
	return s
}

// api calls the admin API on the default workspace.
func (s *stack) api(method, path string, body any) (int, []byte) {
	s.t.Helper()
	var rd io.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		rd = bytes.NewReader(b)
	}
	req, _ := http.NewRequest(method, s.srv.URL+"/api/v1/workspaces/default"+path, rd)
	req.Header.Set("Authorization", "Bearer "+s.token)
	req.Header.Set("Content-Type", "application/json")
	resp, err := s.srv.Client().Do(req)
	if err != nil {
		s.t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, raw
}

// putRules saves stage rules through PUT /stages.
func (s *stack) putRules(r lifecycle.Rules) {
	s.t.Helper()
	if status, raw := s.api(http.MethodPut, "/stages", r); status != http.StatusOK {
		s.t.Fatalf("PUT /stages = %d %s", status, raw)
	}
}

// source creates a standard-webhooks source with its event stages.
func (s *stack) source(name, channel string, stages map[string]string, verifiesPhone bool) swSource {
	s.t.Helper()
	status, raw := s.api(http.MethodPost, "/sources", map[string]any{"name": name, "kind": "standard-webhooks", "channel": channel,
		"default_region": "US", "event_stages": stages, "verifies_phone": verifiesPhone})
	if status != http.StatusCreated {
		s.t.Fatalf("create source %s = %d %s", name, status, raw)
	}
	var out struct {
		IngestURL string `json:"ingest_url"`
		Secret    string `json:"secret"`
	}
	if err := json.Unmarshal(raw, &out); err != nil {
		s.t.Fatal(err)
	}
	return swSource{Kind: "standard-webhooks", URL: out.IngestURL, Secret: out.Secret}
}

// delivery is one signed webhook request.
type delivery struct {
	src  swSource
	id   string // webhook-id: the idempotency id, equal for a duplicate
	body []byte
}

// send signs and POSTs a delivery and returns the ingest status field.
func (s *stack) send(d delivery) (string, error) {
	req := signature.Request{Method: http.MethodPost, URL: d.src.URL, Header: http.Header{"Content-Type": {"application/json"}}, Body: d.body}
	sc := signature.SignConfig{Config: ingest.VerifyConfig(models.SourceConfig{}, nil), Secret: d.src.Secret, DeliveryID: d.id}
	if err := signature.Sign(d.src.Kind, sc, &req, time.Now()); err != nil {
		return "", fmt.Errorf("sign: %w", err)
	}
	hr, err := http.NewRequest(http.MethodPost, req.URL, bytes.NewReader(req.Body))
	if err != nil {
		return "", err
	}
	hr.Header = req.Header
	resp, err := s.srv.Client().Do(hr)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	var out struct{ Status string }
	_ = json.Unmarshal(raw, &out)
	if resp.StatusCode != http.StatusOK {
		return "", fmt.Errorf("ingest answered %d %s", resp.StatusCode, raw)
	}
	return out.Status, nil
}

// sendAll delivers concurrently and counts the answers by status.
func (s *stack) sendAll(ds []delivery, senders int) map[string]int {
	s.t.Helper()
	var mu sync.Mutex
	counts := map[string]int{}
	var firstErr error
	work := make(chan delivery)
	var wg sync.WaitGroup
	for range senders {
		wg.Go(func() {
			for d := range work {
				status, err := s.send(d)
				mu.Lock()
				if err != nil && firstErr == nil {
					firstErr = err
				}
				counts[status]++
				mu.Unlock()
			}
		})
	}
	for _, d := range ds {
		work <- d
	}
	close(work)
	wg.Wait()
	if firstErr != nil {
		s.t.Fatalf("delivery failed: %v", firstErr)
	}
	return counts
}

// stats reads GET /stats.
func (s *stack) stats() models.Stats {
	s.t.Helper()
	status, raw := s.api(http.MethodGet, "/stats", nil)
	if status != http.StatusOK {
		s.t.Fatalf("stats = %d %s", status, raw)
	}
	var st models.Stats
	if err := json.Unmarshal(raw, &st); err != nil {
		s.t.Fatal(err)
	}
	return st
}

// settle waits until every accepted event has an outcome.
func (s *stack) settle(accepted int64, timeout time.Duration, tick func()) models.Stats {
	s.t.Helper()
	var st models.Stats
	testkit.Eventually(s.t, timeout, "every accepted event reaches an outcome", func() bool {
		if tick != nil {
			tick()
		}
		st = s.stats()
		return st.Events.Accepted == accepted && st.Events.Unresolved == 0
	})
	return st
}

// worker is one `leadgate serve --role worker` OS process.
type worker struct {
	cmd  *exec.Cmd
	log  *bytes.Buffer
	done chan struct{}
}

// worker starts a worker process on the stack's database and Redis DB; it is
// stopped when the test ends.
func (s *stack) worker(name string) *worker {
	s.t.Helper()
	cmd := exec.Command(leadgateBinary(s.t), "serve", "--role", "worker")
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + s.t.TempDir()}
	for k, v := range s.env {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	w := &worker{cmd: cmd, log: &bytes.Buffer{}, done: make(chan struct{})}
	cmd.Stdout, cmd.Stderr = io.Discard, &lockedWriter{w: w.log}
	if err := cmd.Start(); err != nil {
		s.t.Fatalf("start worker %s: %v", name, err)
	}
	go func() { _ = cmd.Wait(); close(w.done) }()
	s.mu.Lock()
	s.workers[name] = w
	s.mu.Unlock()
	return w
}

// stopWorkers stops every worker process at once: SIGTERM, then SIGKILL
// after 3 s (the assertions are done; a slow graceful shutdown proves nothing).
func (s *stack) stopWorkers() {
	s.mu.Lock()
	defer s.mu.Unlock()
	var wg sync.WaitGroup
	for name, w := range s.workers {
		wg.Go(func() {
			began := time.Now()
			w.stop(syscall.SIGTERM, 3*time.Second)
			s.t.Logf("worker %s stopped in %s", name, time.Since(began).Round(time.Millisecond))
		})
	}
	wg.Wait()
	for name, w := range s.workers {
		if logs := w.log.String(); strings.Contains(logs, "level=ERROR") || testing.Verbose() {
			s.t.Logf("worker %s log:\n%s", name, tail(logs, 4000))
		}
	}
}

// stop signals the process and waits for it to exit (SIGKILL after timeout).
func (w *worker) stop(sig syscall.Signal, timeout time.Duration) {
	select {
	case <-w.done:
		return
	default:
	}
	_ = w.cmd.Process.Signal(sig)
	select {
	case <-w.done:
	case <-time.After(timeout):
		_ = w.cmd.Process.Kill()
		<-w.done
	}
}

// lockedWriter serializes writes from a process's pipe copier and readers.
type lockedWriter struct {
	mu sync.Mutex
	w  *bytes.Buffer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

func tail(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return "…" + s[len(s)-n:]
}

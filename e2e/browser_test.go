//go:build proof

package e2e

import (
	"context"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"golang.org/x/crypto/bcrypt"

	"github.com/leadgate/leadgate/cmd/leadgate/app"
	"github.com/leadgate/leadgate/cmd/leadgate/config"
	"github.com/leadgate/leadgate/internal/testkit"
	"github.com/leadgate/leadgate/models"
	"github.com/leadgate/leadgate/web"
)

// chromiumPath is Debian's Chromium, which .ci/run installs.
const chromiumPath = "/usr/bin/chromium"

// The browser's viewport: a common laptop screen.
const (
	viewportWidth  = 1440
	viewportHeight = 860
)

// stack is one leadgate process (web + worker) on its own database and Redis DB.
type stack struct {
	t     *testing.T
	app   *app.App
	store *models.Store
	url   string
}

func newStack(t *testing.T) *stack {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	base := "http://" + ln.Addr().String()
	env := map[string]string{
		"LEADGATE_DATABASE_URL":       testkit.MigratedDatabase(t),
		"LEADGATE_REDIS_URL":          testkit.RedisDB(t),
		"LEADGATE_SECRET_KEY":         "e2e-test-secret-key-0123456789",
		"LEADGATE_SPOOL_DIR":          "off",
		"LEADGATE_PUBLIC_URL":         base,
		"LEADGATE_WORKER_CONCURRENCY": "4",
	}
	cfg, err := config.FromEnv(func(k string) string { return env[k] })
	if err != nil {
		t.Fatalf("config: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	if os.Getenv("E2E_LOG") != "" {
		log = slog.New(slog.NewTextHandler(os.Stderr, nil))
	}
	store, err := models.Open(ctx, cfg.DatabaseURL, log, models.WithPasswordCost(bcrypt.MinCost)) // tests sign in often
	if err != nil {
		t.Fatalf("open store: %v", err)
	}
	if err := store.Migrate(ctx, log); err != nil {
		t.Fatalf("migrate: %v", err)
	}
	a, err := app.New(ctx, cfg, store, log)
	if err != nil {
		t.Fatalf("app: %v", err)
	}
	srv := httptest.NewUnstartedServer(web.Routes(a.Deps()))
	srv.Listener.Close()
	srv.Listener = ln
	srv.Start()
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		if err := a.RunWorker(ctx); err != nil {
			t.Errorf("worker: %v", err)
		}
	}()
	t.Cleanup(func() {
		cancel()
		wg.Wait()
		srv.Close()
		a.Close()
		store.Close()
	})
	return &stack{t: t, app: a, store: store, url: base}
}

// browser is a headless Chromium tab that records every console problem.
type browser struct {
	t        *testing.T
	ctx      context.Context
	base     string
	mu       sync.Mutex
	problems []string
	shots    string // screenshot folder, "" when not asked for
	axe      string // axe-core's source, loaded on the first scan
}

func newBrowser(t *testing.T, base string) *browser {
	t.Helper()
	if _, err := os.Stat(chromiumPath); err != nil {
		t.Skipf("no Chromium at %s: %v", chromiumPath, err)
	}
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(chromiumPath),
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("no-first-run", true),
		chromedp.UserDataDir(t.TempDir()),
		chromedp.WindowSize(1440, 900),
	)
	allocCtx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancelTab := chromedp.NewContext(allocCtx)
	ctx, cancelTime := context.WithTimeout(ctx, 8*time.Minute)
	t.Cleanup(func() { cancelTime(); cancelTab(); cancelAlloc() })
	b := &browser{t: t, ctx: ctx, base: base}
	b.do("set the viewport", chromedp.EmulateViewport(viewportWidth, viewportHeight))
	if os.Getenv("LEADGATE_SCREENSHOTS") == "1" {
		b.shots = filepath.Join("..", "docs", "screenshots")
		if err := os.MkdirAll(b.shots, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	messages := chromedp.Console(ctx)
	go func() {
		for m, err := range messages {
			if err != nil {
				return
			}
			// Errors, exceptions and CSP reports are defects; htmx's own
			// debug chatter is not.
			if m.IsException() || m.Type == chromedp.ConsoleError || strings.Contains(m.Text, "Content Security Policy") {
				b.mu.Lock()
				b.problems = append(b.problems, m.String()+" at "+m.URL)
				b.mu.Unlock()
			}
		}
	}()
	return b
}

// do runs actions, failing the test with what was being done.
func (b *browser) do(what string, actions ...chromedp.Action[chromedp.Void]) {
	b.t.Helper()
	if err := chromedp.Do(b.ctx, actions...); err != nil {
		b.t.Fatalf("%s: %v", what, err)
	}
}

// open navigates to a path of the app and waits for sel.
func (b *browser) open(path, sel string) {
	b.t.Helper()
	b.do("open "+path, chromedp.Navigate(b.base+path), chromedp.WaitVisible(chromedp.CSS(sel)))
}

// text returns the visible text of the first element matching sel.
func (b *browser) text(sel string) string {
	b.t.Helper()
	s, err := chromedp.Run(b.ctx, chromedp.Text(chromedp.CSS(sel)))
	if err != nil {
		b.t.Fatalf("text of %s: %v", sel, err)
	}
	return strings.TrimSpace(s)
}

// eventually reloads path until check holds for the text of sel (15 s at most).
func (b *browser) eventually(path, sel, what string, check func(string) bool) string {
	b.t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for {
		b.open(path, sel)
		got := b.text(sel)
		if check(got) {
			return got
		}
		if time.Now().After(deadline) {
			b.t.Fatalf("%s: %s on %s still reads %q", what, sel, path, got)
		}
		time.Sleep(300 * time.Millisecond)
	}
}

// shot saves a full-page PNG as docs/screenshots/name.png when asked to.
func (b *browser) shot(name string) {
	b.t.Helper()
	b.shotAt(name, viewportWidth, viewportHeight)
}

// shotAt saves a full-page PNG at a viewport width, then restores that viewport.
func (b *browser) shotAt(name string, width, height int64) {
	b.t.Helper()
	if b.shots == "" {
		return
	}
	// Grow the viewport to the whole page first, so the sticky sidebar
	// (100vh) runs the full height as it does on a tall screen.
	h, err := chromedp.Run(b.ctx, chromedp.Evaluate[int64](`Math.ceil(document.documentElement.scrollHeight)`))
	if err != nil {
		b.t.Fatalf("page height: %v", err)
	}
	b.do("grow the viewport", chromedp.EmulateViewport(width, max(h, height)))
	png, err := chromedp.Run(b.ctx, chromedp.CaptureScreenshot())
	if err != nil {
		b.t.Fatalf("screenshot %s: %v", name, err)
	}
	b.do("restore the viewport", chromedp.EmulateViewport(width, height))
	if err := os.WriteFile(filepath.Join(b.shots, name+".png"), png, 0o644); err != nil {
		b.t.Fatal(err)
	}
}

// checkConsole fails on any console error, exception or CSP violation seen so far.
func (b *browser) checkConsole() {
	b.t.Helper()
	b.mu.Lock()
	defer b.mu.Unlock()
	if len(b.problems) > 0 {
		b.t.Fatalf("the browser console reported problems:\n%s", strings.Join(b.problems, "\n"))
	}
}

// post sends a raw request from Go (the sender side of a webhook).
func post(t *testing.T, req *http.Request) *http.Response {
	t.Helper()
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("POST %s: %v", req.URL, err)
	}
	return res
}

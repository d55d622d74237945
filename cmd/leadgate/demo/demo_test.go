package demo_test

import (
	"context"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/leadgate/leadgate/cmd/leadgate/app"
	"github.com/leadgate/leadgate/cmd/leadgate/config"
	"github.com/leadgate/leadgate/cmd/leadgate/demo"
	"github.com/leadgate/leadgate/internal/testkit"
	"github.com/leadgate/leadgate/models"
	"github.com/leadgate/leadgate/web"
)

// TestDemoBringsEveryDashboardSectionToLife runs the demo traffic for a few
// seconds against a real leadgate (ingest, workers, sandbox CRM) and checks
// that the dashboard's sections, the dead letters and a silence alarm all
// have data.
func TestDemoBringsEveryDashboardSectionToLife(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	base := "http://" + ln.Addr().String()
	env := map[string]string{"LEADGATE_DATABASE_URL": testkit.MigratedDatabase(t), "LEADGATE_REDIS_URL": testkit.RedisDB(t),
		"LEADGATE_PUBLIC_URL": base, "LEADGATE_SPOOL_DIR": "off", "LEADGATE_SECRET_KEY": "demo-test-secret-key-0123456789",
		"LEADGATE_EGRESS_ALLOWED_HOSTS": "127.0.0.1"}
	cfg, err := config.FromEnv(func(k string) string { return env[k] })
	if err != nil {
		t.Fatal(err)
	}
	store, err := models.Open(ctx, cfg.DatabaseURL, log)
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	if err := store.Migrate(ctx, log); err != nil {
		t.Fatal(err)
	}
	a, err := app.New(ctx, cfg, store, log)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	srv := httptest.NewUnstartedServer(web.Routes(a.Deps()))
	srv.Listener.Close()
	srv.Listener = ln
	srv.Start()
	defer srv.Close()
	wctx, stopWorker := context.WithCancel(ctx)
	workerDone := make(chan struct{})
	go func() { a.RunWorker(wctx); close(workerDone) }()
	// The worker stops before the app closes its Redis client.
	defer func() { stopWorker(); <-workerDone }()

	graph := demo.NewGraph()
	graphSrv := httptest.NewServer(graph)
	defer graphSrv.Close()
	envDemo, err := demo.Setup{Store: store, Box: a.Box, PublicURL: base, GraphURL: graphSrv.URL, AlarmThreshold: time.Second}.Ensure(ctx)
	if err != nil {
		t.Fatal(err)
	}
	traffic := &demo.Traffic{Env: envDemo, Graph: graph, Client: srv.Client(), Log: log, Every: 15 * time.Millisecond,
		QuietAfter: 4 * time.Second, QuietFor: time.Hour, Seed: 7}
	tctx, stop := context.WithTimeout(ctx, 9*time.Second)
	defer stop()
	if err := traffic.Run(tctx); err != nil {
		t.Fatal(err)
	}
	// On a loaded machine a delivery may time out; the demo is about having
	// data everywhere, durability is proven elsewhere.
	t.Logf("demo sent %d deliveries, %d not answered 200: %v", traffic.Sent(), traffic.Failed(), traffic.Failures())
	if traffic.Sent() < 100 || traffic.Failed() > traffic.Sent()/50 {
		t.Fatalf("demo sent %d deliveries, %d not answered 200: %v", traffic.Sent(), traffic.Failed(), traffic.Failures())
	}
	ws := envDemo.Workspace
	testkit.Eventually(t, 60*time.Second, "demo events to be applied", func() bool {
		st, err := store.StatsGet(ctx, ws.ID)
		return err == nil && st.Events.Applied > 20 && st.Events.Unresolved < st.Events.Accepted/10
	})
	st, err := store.StatsGet(ctx, ws.ID)
	if err != nil {
		t.Fatal(err)
	}
	if st.Events.Duplicates == 0 || st.Events.Rejected == 0 || st.Events.Quarantined == 0 || st.DeadLetters == 0 {
		t.Errorf("demo stats lack a section: %+v", st)
	}
	stages, err := store.ContactStageCounts(ctx, ws.ID)
	if err != nil {
		t.Fatal(err)
	}
	if len(stages) < 3 {
		t.Errorf("funnel has only %v; the demo journeys should fill at least three stages", stages)
	}
	testkit.Eventually(t, 30*time.Second, "the sandbox CRM to receive contacts", func() bool {
		var n int64
		store.DB().Raw(`SELECT count(*) FROM sandbox_contacts`).Scan(&n)
		return n > 10
	})

	// The voice agent stayed quiet past its 1 s threshold: the silence alarm fires.
	a.Guards.Monitor.Now = func() time.Time { return time.Now().Add(time.Minute) } // a minute of silence later
	if err := a.Guards.Monitor.CheckSilence(ctx); err != nil {
		t.Fatal(err)
	}
	alarms, err := store.SilenceAlarmList(ctx, ws.ID)
	if err != nil || len(alarms) != 1 || !alarms[0].Silent {
		t.Fatalf("silence alarm = %+v, %v; want one firing", alarms, err)
	}

	// Every dashboard section renders with data for a signed-in viewer.
	if _, err := store.UserCreate(ctx, "viewer@example.com", "correct horse battery", models.RoleViewer, false); err != nil {
		t.Fatal(err)
	}
	page := login(t, srv, "viewer@example.com", "correct horse battery", "/w/"+demo.Slug+"/")
	for _, section := range []string{`data-testid="kpi-received"`, `data-testid="kpi-duplicate-rate"`, `data-testid="kpi-dead-letters"`,
		`data-testid="rate-chart"`, `data-testid="funnel"`} {
		if !strings.Contains(page, section) {
			t.Errorf("dashboard lacks %s", section)
		}
	}
}

var csrfField = regexp.MustCompile(`name="gorilla.csrf.Token" value="([^"]+)"`)

// login signs in through the real login form and returns the body of path.
func login(t *testing.T, srv *httptest.Server, email, password, path string) string {
	t.Helper()
	jar, _ := cookiejar.New(nil)
	c := &http.Client{Jar: jar}
	resp, err := c.Get(srv.URL + "/login")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	m := csrfField.FindSubmatch(body)
	if m == nil {
		t.Fatal("login page has no CSRF field")
	}
	form := url.Values{"email": {email}, "password": {password}, "gorilla.csrf.Token": {string(m[1])}}
	req, _ := http.NewRequest(http.MethodPost, srv.URL+"/login", strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Origin", srv.URL)
	req.Header.Set("Referer", srv.URL+"/login")
	if resp, err = c.Do(req); err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp, err = c.Get(srv.URL + path); err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK || resp.Request.URL.Path != path {
		t.Fatalf("GET %s after login: %d at %s", path, resp.StatusCode, resp.Request.URL.Path)
	}
	return string(b)
}

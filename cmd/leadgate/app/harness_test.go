package app_test

import (
	"bytes"
	"cmp"
	"context"
	"crypto"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hibiken/asynq"
	"github.com/redis/go-redis/v9"

	"github.com/leadgate/leadgate/cmd/leadgate/app"
	"github.com/leadgate/leadgate/cmd/leadgate/config"
	"github.com/leadgate/leadgate/ingest"
	"github.com/leadgate/leadgate/ingest/signature"
	"github.com/leadgate/leadgate/internal/redisconn"
	"github.com/leadgate/leadgate/internal/testkit"
	"github.com/leadgate/leadgate/jobs"
	"github.com/leadgate/leadgate/models"
	"github.com/leadgate/leadgate/web"
)

// opts shapes one test's leadgate process.
type opts struct {
	spool      bool          // a spool directory (default: off, so Postgres down answers 503)
	pgProxy    bool          // reach Postgres through a cuttable proxy
	redisProxy bool          // reach Redis through a cuttable proxy
	window     time.Duration // content-hash dedupe window (default 1h)
	maxBody    int64         // body limit (default 1 MiB)
	redisURL   string        // a throwaway Redis deployment (Sentinel, Cluster) instead of a leased DB
	dbURL      string        // a throwaway Postgres deployment (a primary and standby) instead of a test database
}

// harness is a real leadgate process (app.New + web.Routes) on its own
// database and Redis DB, served by httptest.
type harness struct {
	t       testing.TB
	app     *app.App
	srv     *httptest.Server
	store   *models.Store         // direct, never through the proxy
	rdb     redis.UniversalClient // direct client on the test's Redis DB
	redisDB int
	admin   string
	pg      *testkit.Proxy
	redis   *testkit.Proxy
	clock   *clock
}

// clock is the ingest service's clock; tests move it instead of sleeping.
type clock struct{ offset atomic.Int64 }

func (c *clock) Now() time.Time          { return time.Now().Add(time.Duration(c.offset.Load())) }
func (c *clock) Advance(d time.Duration) { c.offset.Add(int64(d)) }

// testLogger discards logs unless LEADGATE_TEST_LOG is set.
func testLogger() *slog.Logger {
	if os.Getenv("LEADGATE_TEST_LOG") == "" {
		return slog.New(slog.DiscardHandler)
	}
	return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
}

func newHarness(t testing.TB, o opts) *harness {
	t.Helper()
	ctx := context.Background()
	log := testLogger()
	dbURL := o.dbURL
	if dbURL == "" {
		dbURL = testkit.MigratedDatabase(t)
	}
	redisURL := o.redisURL
	if redisURL == "" {
		redisURL = testkit.RedisDB(t)
	}

	direct, err := models.Open(ctx, dbURL, log)
	if err != nil {
		t.Fatalf("open store: %v", err)
	}
	t.Cleanup(func() { _ = direct.Close() })
	if err := direct.Migrate(ctx, log); err != nil {
		t.Fatalf("migrate: %v", err)
	}

	h := &harness{t: t, store: direct, clock: &clock{}}
	target, err := redisconn.Parse(redisURL)
	if err != nil {
		t.Fatal(err)
	}
	h.redisDB = target.DB
	h.rdb = target.Client(8)
	t.Cleanup(func() { _ = h.rdb.Close() })

	appDB, appRedis := dbURL, redisURL
	if o.pgProxy {
		h.pg = testkit.NewProxy(t, "127.0.0.1:5432")
		appDB = withHost(t, dbURL, h.pg.Addr())
	}
	if o.redisProxy {
		h.redis = testkit.NewProxy(t, target.Addrs[0])
		appRedis = withHost(t, redisURL, h.redis.Addr())
	}
	store := direct
	if o.pgProxy {
		if store, err = models.Open(ctx, appDB, log); err != nil {
			t.Fatalf("open store through proxy: %v", err)
		}
		t.Cleanup(func() { _ = store.Close() })
	}

	h.srv = httptest.NewUnstartedServer(nil)
	env := map[string]string{
		"LEADGATE_DATABASE_URL": appDB,
		"LEADGATE_REDIS_URL":    appRedis,
		"LEADGATE_SECRET_KEY":   "test-secret-key-0123456789abcdef",
		"LEADGATE_PUBLIC_URL":   "http://" + h.srv.Listener.Addr().String(),
		"LEADGATE_SPOOL_DIR":    "off",
		// CRM fakes and webhook receivers listen on 127.0.0.1: open the SSRF guard for them.
		"LEADGATE_EGRESS_ALLOWED_HOSTS": "127.0.0.1",
	}
	if o.spool {
		env["LEADGATE_SPOOL_DIR"] = t.TempDir()
	}
	if o.window > 0 {
		env["LEADGATE_IDEMPOTENCY_WINDOW"] = o.window.String()
	}
	if o.maxBody > 0 {
		env["LEADGATE_MAX_BODY_BYTES"] = strconv.FormatInt(o.maxBody, 10)
	}
	cfg, err := config.FromEnv(func(k string) string { return env[k] })
	if err != nil {
		t.Fatalf("config: %v", err)
	}
	a, err := app.New(ctx, cfg, store, log)
	if err != nil {
		t.Fatalf("app.New: %v", err)
	}
	t.Cleanup(a.Close)
	a.Ingest.Now = h.clock.Now
	h.app = a
	h.srv.Config.Handler = web.Routes(a.Deps())
	h.srv.Start()
	t.Cleanup(h.srv.Close)

	_, plain, err := direct.TokenCreate(ctx, "test-admin", models.RoleAdmin)
	if err != nil {
		t.Fatalf("token: %v", err)
	}
	h.admin = plain
	return h
}

// with is the harness bound to a subtest's t.
func (h *harness) with(t testing.TB) *harness {
	c := *h
	c.t = t
	return &c
}

// withHost replaces the host:port of a service URL (to go through a proxy).
func withHost(t testing.TB, raw, hostport string) string {
	t.Helper()
	u, err := url.Parse(raw)
	if err != nil {
		t.Fatal(err)
	}
	u.Host = hostport
	return u.String()
}

// reply is one HTTP answer.
type reply struct {
	Status int
	Header http.Header
	Raw    []byte
	JSON   map[string]any
}

func (r reply) str(key string) string {
	s, _ := r.JSON[key].(string)
	return s
}

func (r reply) String() string { return fmt.Sprintf("%d %s", r.Status, bytes.TrimSpace(r.Raw)) }

func (h *harness) do(req *http.Request) reply {
	h.t.Helper()
	resp, err := h.srv.Client().Do(req)
	if err != nil {
		h.t.Fatalf("%s %s: %v", req.Method, req.URL, err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		h.t.Fatalf("read answer: %v", err)
	}
	r := reply{Status: resp.StatusCode, Header: resp.Header, Raw: raw}
	if strings.HasPrefix(resp.Header.Get("Content-Type"), "application/json") {
		if err := json.Unmarshal(raw, &r.JSON); err != nil {
			h.t.Fatalf("answer is not a JSON object: %v: %s", err, raw)
		}
	}
	return r
}

// api calls the admin API as the test's admin.
func (h *harness) api(method, path string, body any) reply {
	h.t.Helper()
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			h.t.Fatal(err)
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, h.srv.URL+"/api/v1/workspaces/default"+path, rd)
	if err != nil {
		h.t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+h.admin)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	return h.do(req)
}

// source is a source created through the admin API.
type source struct {
	ID          int64
	Kind        string
	URL         string // ingest URL
	Token       string
	Secret      string
	VerifyToken string
	Config      models.SourceConfig
}

// createSource POSTs a source; in holds name/kind/secret and config fields.
func (h *harness) createSource(in map[string]any) source {
	h.t.Helper()
	if _, ok := in["name"]; !ok {
		in["name"] = fmt.Sprintf("%v source", in["kind"])
	}
	r := h.api(http.MethodPost, "/sources", in)
	if r.Status != http.StatusCreated {
		h.t.Fatalf("create source %v: %s", in["kind"], r)
	}
	var cfg models.SourceConfig
	b, _ := json.Marshal(in)
	_ = json.Unmarshal(b, &cfg)
	s := source{ID: int64(r.JSON["id"].(float64)), Kind: r.str("kind"), URL: r.str("ingest_url"), Secret: r.str("secret"),
		VerifyToken: r.str("verify_token"), Config: cfg}
	s.Token = s.URL[strings.LastIndex(s.URL, "/")+1:]
	if s.VerifyToken != "" {
		s.Config.VerifyToken = s.VerifyToken
	}
	return s
}

// delivery is one webhook request before it is sent.
type delivery struct {
	URL         string
	ContentType string
	Header      http.Header
	Body        []byte
}

// sign says how to sign a delivery; the zero value signs with the source's
// secret at the harness clock's now.
type sign struct {
	secret string        // another secret (wrong or previous)
	key    crypto.Signer // gohighlevel private key
	id     string        // standard-webhooks webhook-id
	at     time.Time
}

// signed builds a delivery of body to src, signed per its kind.
func (h *harness) signed(src source, contentType string, body []byte, o sign) delivery {
	h.t.Helper()
	if o.at.IsZero() {
		o.at = h.clock.Now()
	}
	sc := signature.SignConfig{Config: ingest.VerifyConfig(src.Config, nil), Secret: cmp.Or(o.secret, src.Secret),
		PrivateKey: o.key, DeliveryID: o.id}
	req := signature.Request{Method: http.MethodPost, URL: src.URL, Header: http.Header{"Content-Type": {contentType}}, Body: body}
	if err := signature.Sign(src.Kind, sc, &req, o.at); err != nil {
		h.t.Fatalf("sign %s: %v", src.Kind, err)
	}
	return delivery{URL: req.URL, ContentType: contentType, Header: req.Header, Body: req.Body}
}

// send POSTs a delivery.
func (h *harness) send(d delivery) reply {
	h.t.Helper()
	req, err := http.NewRequest(http.MethodPost, d.URL, bytes.NewReader(d.Body))
	if err != nil {
		h.t.Fatal(err)
	}
	for k, v := range d.Header {
		req.Header[k] = append([]string(nil), v...)
	}
	if d.ContentType != "" {
		req.Header.Set("Content-Type", d.ContentType)
	}
	return h.do(req)
}

// swDelivery is a standard-webhooks delivery with a given webhook-id.
func (h *harness) swDelivery(src source, id string, body string) delivery {
	h.t.Helper()
	return h.signed(src, "application/json", []byte(body), sign{id: id})
}

// events lists inbox events through the API (?query).
func (h *harness) events(query string) []map[string]any {
	h.t.Helper()
	r := h.api(http.MethodGet, "/events?limit=500&"+query, nil)
	if r.Status != http.StatusOK {
		h.t.Fatalf("list events: %s", r)
	}
	raw, _ := r.JSON["events"].([]any)
	out := make([]map[string]any, len(raw))
	for i, e := range raw {
		out[i] = e.(map[string]any)
	}
	return out
}

// inboxCount counts every inbox row in the test's database.
func (h *harness) inboxCount() int64 {
	h.t.Helper()
	var n int64
	if err := h.store.DB().Raw("SELECT count(*) FROM events").Scan(&n).Error; err != nil {
		h.t.Fatalf("count events: %v", err)
	}
	return n
}

// stats reads GET /stats.
func (h *harness) stats() models.EventCounts {
	h.t.Helper()
	r := h.api(http.MethodGet, "/stats", nil)
	if r.Status != http.StatusOK {
		h.t.Fatalf("stats: %s", r)
	}
	var st models.Stats
	if err := json.Unmarshal(r.Raw, &st); err != nil {
		h.t.Fatal(err)
	}
	return st.Events
}

// applyTasks lists the apply tasks waiting in asynq (pending and scheduled),
// once the batch triggers announced so far have been sent.
func (h *harness) applyTasks() []string {
	h.t.Helper()
	h.app.Trigger.Wait()
	// asynq lists only queues named in its registry set, which a client fills
	// on its first enqueue per process; after FLUSHDB the long-lived app
	// client does not refill it (workers still find the tasks). Register the
	// queue as a fresh client would, so the inspector sees what is there.
	if err := h.rdb.SAdd(context.Background(), "asynq:queues", jobs.QueueApply).Err(); err != nil {
		h.t.Fatalf("register apply queue: %v", err)
	}
	ins := asynq.NewInspectorFromRedisClient(h.rdb)
	var ids []string
	pending, err := ins.ListPendingTasks(jobs.QueueApply, asynq.PageSize(1000))
	if err != nil && !errors.Is(err, asynq.ErrQueueNotFound) {
		h.t.Fatalf("inspect apply queue: %v", err)
	}
	for _, ti := range pending {
		ids = append(ids, ti.ID)
	}
	return ids
}

// applyTrigger is the task id of the batch trigger that wakes the apply drainers: one at a time.
const applyTrigger = "apply:batch"

// get fetches a public path (health, readiness).
func (h *harness) get(path string) reply {
	h.t.Helper()
	req, err := http.NewRequest(http.MethodGet, h.srv.URL+path, nil)
	if err != nil {
		h.t.Fatal(err)
	}
	return h.do(req)
}

// sweep runs one stranded-event sweep against the real Redis.
func (h *harness) sweep() int {
	h.t.Helper()
	sw := &jobs.SweepStranded{Store: h.store, Queue: h.app.Queue, Log: testLogger(), Grace: 0}
	n, err := sw.Sweep(context.Background())
	if err != nil {
		h.t.Fatalf("sweep: %v", err)
	}
	return n
}

package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/leadgate/leadgate/ingest/signature"
	"github.com/tidwall/gjson"
)

// fakeIngest answers like leadgate's /hooks/{token}: it verifies the
// signature and answers queued for a new delivery id, duplicate for a seen one.
type fakeIngest struct {
	kind, secret, path string

	mu        sync.Mutex
	seen      map[string]bool
	strangers atomic.Int64 // requests to any other path
	refused   atomic.Int64
}

func (f *fakeIngest) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path != f.path || r.Method != http.MethodPost {
		f.strangers.Add(1)
		http.NotFound(w, r)
		return
	}
	body, _ := io.ReadAll(r.Body)
	req := signature.Request{Method: r.Method, URL: "http://" + r.Host + r.URL.RequestURI(), Header: r.Header, Body: body}
	if err := signature.Verify(f.kind, signature.Config{Secrets: []string{f.secret}}, req, time.Now()); err != nil {
		f.refused.Add(1)
		w.WriteHeader(http.StatusUnauthorized)
		return
	}
	key := r.Header.Get("webhook-id")
	if key == "" {
		key = gjson.GetBytes(body, "event_id").String()
	}
	if key == "" {
		key = string(body)
	}
	f.mu.Lock()
	status := "queued"
	if f.seen[key] {
		status = "duplicate"
	}
	f.seen[key] = true
	f.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(map[string]string{"status": status, "event_id": key})
}

func newFakeIngest(t *testing.T, kind string) (*fakeIngest, *httptest.Server) {
	t.Helper()
	secret, err := signature.NewSecret(kind)
	if err != nil {
		t.Fatal(err)
	}
	f := &fakeIngest{kind: kind, secret: secret, path: "/hooks/src_test", seen: map[string]bool{}}
	srv := httptest.NewServer(f)
	t.Cleanup(srv.Close)
	return f, srv
}

func TestLoadgenFixedRate(t *testing.T) {
	for _, kind := range loadgenKinds {
		t.Run(kind, func(t *testing.T) {
			f, srv := newFakeIngest(t, kind)
			cfg := loadgenConfig{URL: srv.URL + f.path, Secret: f.secret, Kind: kind, Rate: 200, Duration: 400 * time.Millisecond,
				Concurrency: 4, DupRatio: 0.3, Timeout: 5 * time.Second}
			res, err := runLoadgen(context.Background(), cfg)
			if err != nil {
				t.Fatal(err)
			}
			// The pacer hands out a delivery only once its slot on the 200/s schedule has come, and stops at
			// --duration: however busy the machine, no more than 200/s × 0.4 s = 80 are sent, and some are.
			if res.Sent < 1 || res.Sent > 80 {
				t.Fatalf("sent %d deliveries, want between 1 and the schedule's 80", res.Sent)
			}
			if res.TargetRPS != 200 || res.Elapsed <= 0 {
				t.Fatalf("reported target %v/s over %s, want 200/s over the run", res.TargetRPS, res.Elapsed)
			}
			if res.Errors != 0 || f.refused.Load() != 0 || res.ByCode[http.StatusOK] != res.Sent {
				t.Fatalf("answers %v, errors %d (%s), refused %d: every delivery must be authentic and answered 200",
					res.ByCode, res.Errors, res.FirstErr, f.refused.Load())
			}
			if res.ByStatus["queued"]+res.ByStatus["duplicate"] != res.Sent || res.ByStatus["duplicate"] < res.Dups/2 || res.Dups == 0 {
				t.Fatalf("statuses %v with %d repeats: repeats must come back as duplicates", res.ByStatus, res.Dups)
			}
			if res.P50 <= 0 || res.P50 > res.P99 || res.P99 > res.Max {
				t.Fatalf("latencies p50 %s p99 %s max %s are not ordered", res.P50, res.P99, res.Max)
			}
			if n := f.strangers.Load(); n != 0 {
				t.Fatalf("%d requests went elsewhere than --url", n)
			}
		})
	}
}

func TestLoadgenMaxRateStopsByItself(t *testing.T) {
	f, srv := newFakeIngest(t, signature.KindStandardWebhooks)
	var out bytes.Buffer
	start := time.Now()
	err := cmdLoadgen(context.Background(), []string{"--url", srv.URL + f.path, "--secret", f.secret, "--duration", "300ms", "--concurrency", "8"},
		&out, io.Discard, nil)
	if err != nil {
		t.Fatal(err)
	}
	if took := time.Since(start); took > 10*time.Second { // only a run ignoring --duration misses this
		t.Fatalf("a 300ms run at max rate took %s", took)
	}
	for _, want := range []string{"accepted/s", "queued/s", "answers     200 ", "latency     p50", "p95", "p99", "max"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}
	if f.refused.Load() != 0 || f.strangers.Load() != 0 {
		t.Fatalf("refused %d, elsewhere %d", f.refused.Load(), f.strangers.Load())
	}
}

// TestLoadgenNeverFollowsRedirects: a redirect answer is counted, not followed.
func TestLoadgenNeverFollowsRedirects(t *testing.T) {
	var elsewhere atomic.Int64
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { elsewhere.Add(1) }))
	defer other.Close()
	redirecting := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, other.URL+"/x", http.StatusTemporaryRedirect)
	}))
	defer redirecting.Close()
	secret, _ := signature.NewSecret(signature.KindStandardWebhooks)
	res, err := runLoadgen(context.Background(), loadgenConfig{URL: redirecting.URL + "/hooks/x", Secret: secret, Kind: signature.KindStandardWebhooks,
		Rate: 100, Duration: 100 * time.Millisecond, Concurrency: 2, Timeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if elsewhere.Load() != 0 || res.ByCode[http.StatusTemporaryRedirect] == 0 || res.Accepted != 0 {
		t.Fatalf("answers %v, %d requests followed the redirect", res.ByCode, elsewhere.Load())
	}
}

func TestLoadgenFlags(t *testing.T) {
	secret, _ := signature.NewSecret(signature.KindStandardWebhooks)
	ok := []string{"--url", "http://127.0.0.1:1/hooks/x", "--secret", secret}
	cases := []struct {
		name string
		args []string
		want string // "" = valid
	}{
		{"defaults", ok, ""},
		{"token kind needs no secret", []string{"--url", "http://127.0.0.1:1/hooks/x", "--kind", "token"}, ""},
		{"missing url", []string{"--secret", secret}, "--url is required"},
		{"not http", append(ok, "--url", "ftp://x/hooks/y"), "must be an http(s) URL"},
		{"missing secret", []string{"--url", "http://127.0.0.1:1/hooks/x"}, "--secret is required"},
		{"unsupported kind", append(ok, "--kind", "stripe"), "loadgen drives"},
		{"negative rate", append(ok, "--rate", "-1"), "--rate"},
		{"zero duration", append(ok, "--duration", "0s"), "--duration"},
		{"zero concurrency", append(ok, "--concurrency", "0"), "--concurrency"},
		{"dup ratio of one", append(ok, "--dup-ratio", "1"), "--dup-ratio"},
		{"stray argument", append(ok, "extra"), "unexpected argument"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cfg, err := parseLoadgen(c.args, io.Discard)
			switch {
			case c.want == "" && err != nil:
				t.Fatalf("unexpected error %v", err)
			case c.want == "" && (cfg.Kind != signature.KindStandardWebhooks && cfg.Kind != signature.KindToken || cfg.Duration != 10*time.Second):
				t.Fatalf("defaults: %+v", cfg)
			case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
				t.Fatalf("error %v, want it to mention %q", err, c.want)
			}
		})
	}
	// A secret the kind cannot use is caught before any request is sent.
	_, err := runLoadgen(context.Background(), loadgenConfig{URL: "http://127.0.0.1:1/hooks/x", Secret: "not-base64!", Kind: signature.KindStandardWebhooks,
		Duration: time.Second, Concurrency: 1, Timeout: time.Second})
	if err == nil || !strings.Contains(err.Error(), "cannot sign") {
		t.Fatalf("bad secret: %v, want a signing error", err)
	}
}

func TestPercentile(t *testing.T) {
	var d []time.Duration
	for i := 1; i <= 100; i++ {
		d = append(d, time.Duration(i)*time.Millisecond)
	}
	for p, want := range map[float64]time.Duration{50: 50 * time.Millisecond, 95: 95 * time.Millisecond, 99: 99 * time.Millisecond, 100: 100 * time.Millisecond} {
		if got := percentile(d, p); got != want {
			t.Errorf("p%v = %s, want %s", p, got, want)
		}
	}
	if percentile(nil, 99) != 0 {
		t.Error("percentile of nothing must be 0")
	}
}

// TestLoadgenLeadsAreDistinct: every unique lead has its own email and
// phone, or the apply step would see identity conflicts instead of load.
func TestLoadgenLeadsAreDistinct(t *testing.T) {
	tr, err := newTraffic(loadgenConfig{URL: "http://127.0.0.1:1/hooks/x", Kind: signature.KindToken})
	if err != nil {
		t.Fatal(err)
	}
	emails, phones := map[string]bool{}, map[string]bool{}
	for range 30000 {
		d := tr.next()
		email, phone := gjson.GetBytes(d.body, "email").String(), gjson.GetBytes(d.body, "phone").String()
		if emails[email] || phones[phone] {
			t.Fatalf("lead %s / %s repeats an earlier one", email, phone)
		}
		emails[email], phones[phone] = true, true
	}
}

// TestSustainedStepVerdict: a step holds only when ingest took the rate, answered every delivery 200,
// no event waited longer than allowed and the backlog did not grow.
func TestSustainedStepVerdict(t *testing.T) {
	ok := func() *loadgenResult { return &loadgenResult{Elapsed: 10 * time.Second, Sent: 10000, Accepted: 10000} }
	for _, tc := range []struct {
		name        string
		res         *loadgenResult
		oldest      time.Duration
		first, last float64
		pass        bool
	}{
		{"kept up", ok(), 800 * time.Millisecond, 300, 320, true},
		{"an event waited too long", ok(), 6 * time.Second, 300, 300, false},
		{"the backlog grew", ok(), 2 * time.Second, 300, 2000, false},
		{"ingest could not take the rate", &loadgenResult{Elapsed: 10 * time.Second, Sent: 9000, Accepted: 9000}, 0, 0, 0, false},
		{"some deliveries refused", &loadgenResult{Elapsed: 10 * time.Second, Sent: 10000, Accepted: 9990}, 0, 0, 0, false},
	} {
		s := &step{rate: 1000, res: tc.res, oldest: tc.oldest, first: tc.first, last: tc.last}
		s.judge(5 * time.Second)
		if s.pass != tc.pass {
			t.Errorf("%s: pass = %v (%s), want %v", tc.name, s.pass, s.why, tc.pass)
		}
	}
}

// TestTrivialBaselineServesTheSameLoad: the baseline handler answers every delivery 200 "queued".
func TestTrivialBaselineServesTheSameLoad(t *testing.T) {
	cfg := loadgenConfig{URL: "http://127.0.0.1:1/hooks/x", Kind: signature.KindHMAC, Secret: "s", Duration: 300 * time.Millisecond,
		Concurrency: 4, Timeout: time.Second}
	res, err := trivialBaseline(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if res.Accepted == 0 || res.Accepted != res.Sent || res.ByStatus["queued"] != res.Accepted {
		t.Errorf("trivial handler: %+v, want every delivery answered 200 queued", res)
	}
}

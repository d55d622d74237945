package crmfake

import (
	"bytes"
	"encoding/json"
	"io"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"sync"
	"time"
)

// Options are the behaviours every fake shares.
type Options struct {
	Token      string        // the API token / bearer token the fake accepts ("" accepts any non-empty one)
	RateLimit  int           // requests allowed per RateWindow; 0 = unlimited
	RateWindow time.Duration // default: the CRM's documented window (AC 1 s, HubSpot 10 s, GHL 10 s)
	RetryAfter int           // Retry-After seconds sent with a 429; default 1
	FailRate   float64       // share of requests answered 503 at random (after the rate limit check)
	Latency    time.Duration // added to every request
	Seed       uint64        // seeds the random 503s (same seed, same sequence)
	// LatencyMax, when above Latency, makes each request's latency uniform in [Latency, LatencyMax] (a real
	// CRM's spread, so concurrent senders overlap unevenly).
	LatencyMax time.Duration
}

// Request is one request the fake received.
type Request struct {
	Time   time.Time // when it arrived (before any injected latency)
	Method string
	Path   string
	Query  string
	Body   []byte
	Status int
}

// Response is a canned answer queued with FailNext.
type Response struct {
	Method string // "" matches any method
	Path   string // "" matches any path; else the exact request path
	Status int
	Header http.Header
	Body   string
}

// server is the machinery shared by the fakes.
type server struct {
	srv  *httptest.Server
	opts Options

	mu        sync.Mutex
	rng       *rand.Rand
	requests  []Request
	admitted  []time.Time // arrival times of requests that counted against the rate limit
	authFail  int         // status answered to every request while set
	rate400   bool        // answer AC's importer-style 400 "Rate limit exceeded"
	queued    []Response
	failRate  float64
	nextID    int
	authorize func(*http.Request, Options) bool
	shapes    errorShapes
	acts      actions // native side effects (actions.go)
	// limits, when set, replaces the generic rate limit with the CRM's own (HubSpot: per-tier windows, a
	// daily quota, exempt endpoints). It runs under mu, counts the request, and returns the headers every
	// answer carries and, when the request is refused, the writer of the refusal.
	limits func(r *http.Request, arrived time.Time) (http.Header, func(http.ResponseWriter))
}

// errorShapes writes the CRM-specific bodies of the injected errors.
type errorShapes struct {
	unauthorized func(w http.ResponseWriter, status int)
	rateLimited  func(w http.ResponseWriter, retryAfter int)
	unavailable  func(w http.ResponseWriter)
}

func newServer(opts Options, defWindow time.Duration, authorize func(*http.Request, Options) bool, shapes errorShapes, h http.Handler) *server {
	if opts.RateWindow <= 0 {
		opts.RateWindow = defWindow
	}
	if opts.RetryAfter <= 0 {
		opts.RetryAfter = 1
	}
	s := &server{opts: opts, rng: rand.New(rand.NewPCG(opts.Seed, 0x5eed)), failRate: opts.FailRate,
		authorize: authorize, shapes: shapes}
	s.srv = httptest.NewServer(s.wrap(h))
	return s
}

// wrap applies latency, auth, canned answers, the rate limit and random 503s, and records the request.
func (s *server) wrap(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		arrived := time.Now()
		body, _ := io.ReadAll(io.LimitReader(r.Body, 16<<20))
		r.Body = io.NopCloser(bytes.NewReader(body))
		if lat := s.latency(); lat > 0 {
			time.Sleep(lat)
		}
		rec := &statusRecorder{ResponseWriter: w, status: http.StatusOK}
		idx := s.record(Request{Time: arrived, Method: r.Method, Path: r.URL.Path, Query: r.URL.RawQuery, Body: body})
		defer func() { s.setStatus(idx, rec.status) }()
		if s.intercept(rec, r, arrived) {
			return
		}
		h.ServeHTTP(rec, r)
	})
}

// intercept answers the request itself when an injected behaviour applies.
func (s *server) intercept(w http.ResponseWriter, r *http.Request, arrived time.Time) bool {
	s.mu.Lock()
	authFail := s.authFail
	if authFail == 0 && !s.authorize(r, s.opts) {
		authFail = http.StatusUnauthorized
	}
	if authFail != 0 {
		s.mu.Unlock()
		s.shapes.unauthorized(w, authFail)
		return true
	}
	for i, q := range s.queued {
		if (q.Method == "" || q.Method == r.Method) && (q.Path == "" || q.Path == r.URL.Path) {
			s.queued = slices.Delete(s.queued, i, i+1)
			s.mu.Unlock()
			for k, v := range q.Header {
				w.Header()[k] = v
			}
			if q.Body != "" {
				w.Header().Set("Content-Type", "application/json")
			}
			w.WriteHeader(q.Status)
			_, _ = io.WriteString(w, q.Body)
			return true
		}
	}
	if s.limits != nil {
		h, refuse := s.limits(r, arrived)
		for k, v := range h {
			w.Header()[k] = v
		}
		if refuse != nil {
			s.mu.Unlock()
			refuse(w)
			return true
		}
	} else if s.opts.RateLimit > 0 {
		cut := arrived.Add(-s.opts.RateWindow)
		i := 0
		for i < len(s.admitted) && !s.admitted[i].After(cut) {
			i++
		}
		s.admitted = s.admitted[i:]
		if len(s.admitted) >= s.opts.RateLimit {
			s.mu.Unlock()
			w.Header().Set("Retry-After", strconv.Itoa(s.opts.RetryAfter))
			s.shapes.rateLimited(w, s.opts.RetryAfter)
			return true
		}
		s.admitted = append(s.admitted, arrived)
	}
	if s.rate400 {
		s.mu.Unlock()
		writeJSON(w, http.StatusBadRequest, map[string]any{"success": 0, "message": "Rate limit exceeded.",
			"failureReasons": []string{"Up to 100 imports may be requested per minute."}})
		return true
	}
	fail := s.failRate > 0 && s.rng.Float64() < s.failRate
	s.mu.Unlock()
	if fail {
		s.shapes.unavailable(w)
		return true
	}
	return false
}

// latency is one request's injected latency.
func (s *server) latency() time.Duration {
	if s.opts.LatencyMax > s.opts.Latency {
		return s.opts.Latency + rand.N(s.opts.LatencyMax-s.opts.Latency)
	}
	return s.opts.Latency
}

func (s *server) record(r Request) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.requests = append(s.requests, r)
	return len(s.requests) - 1
}

func (s *server) setStatus(i, status int) {
	s.mu.Lock()
	s.requests[i].Status = status
	s.mu.Unlock()
}

// newID returns the next numeric id as a string (ids start at 1 and are never reused).
func (s *server) newID() string {
	s.nextID++
	return strconv.Itoa(s.nextID)
}

// Close shuts the fake down.
func (s *server) Close() { s.srv.Close() }

// Requests returns a copy of every request received so far, in arrival order.
func (s *server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.requests)
}

// MaxRequestsInWindow is the most requests that arrived within any window of length d.
func (s *server) MaxRequestsInWindow(d time.Duration) int {
	reqs := s.Requests()
	times := make([]time.Time, len(reqs))
	for i, r := range reqs {
		times[i] = r.Time
	}
	return MaxInWindow(times, d)
}

// SetAuthFailure makes every request fail with status (401, 402 or 403) until called with 0.
func (s *server) SetAuthFailure(status int) {
	s.mu.Lock()
	s.authFail = status
	s.mu.Unlock()
}

// SetFailRate changes the share of random 503s.
func (s *server) SetFailRate(rate float64) {
	s.mu.Lock()
	s.failRate = rate
	s.mu.Unlock()
}

// SetRateLimit400 makes every request answer ActiveCampaign's 400 {"message":"Rate limit exceeded."}
// until called with false.
func (s *server) SetRateLimit400(on bool) {
	s.mu.Lock()
	s.rate400 = on
	s.mu.Unlock()
}

// FailNext queues a canned answer for the next request matching its Method and Path.
func (s *server) FailNext(r Response) {
	s.mu.Lock()
	s.queued = append(s.queued, r)
	s.mu.Unlock()
}

// MaxInWindow is the largest number of times within any window of length d: a window [t, t+d) starting
// at any instant. times need not be sorted.
func MaxInWindow(times []time.Time, d time.Duration) int {
	ts := slices.Clone(times)
	slices.SortFunc(ts, func(a, b time.Time) int { return a.Compare(b) })
	best, j := 0, 0
	for i := range ts {
		for ts[i].Sub(ts[j]) >= d {
			j++
		}
		best = max(best, i-j+1)
	}
	return best
}

type statusRecorder struct {
	http.ResponseWriter
	status int
}

func (r *statusRecorder) WriteHeader(status int) {
	r.status = status
	r.ResponseWriter.WriteHeader(status)
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

// decode reads a JSON body into v; on failure it answers 400 and returns false.
func decode(w http.ResponseWriter, r *http.Request, v any, bad func(w http.ResponseWriter, msg string)) bool {
	if err := json.NewDecoder(r.Body).Decode(v); err != nil {
		bad(w, "invalid JSON body: "+err.Error())
		return false
	}
	return true
}

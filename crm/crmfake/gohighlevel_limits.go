package crmfake

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"sync"
	"time"
)

// GHL's documented request budget (highlevel-api-docs docs/oauth/Authorization.md "What are current rate
// limits for API 2.0?"): a burst of 100 requests per 10 s and 200,000 a day, per app per location, shown on
// every answer in X-RateLimit-Max / -Remaining / -Interval-Milliseconds and X-RateLimit-Limit-Daily /
// -Daily-Remaining.
const (
	ghlBurstDefault = 100
	ghlDailyDefault = 200_000
)

type ghlLimits struct {
	mu       sync.Mutex
	burst    int // the enforced burst (Options.RateLimit) or GHL's default when unenforced
	window   time.Duration
	daily    int
	used     int         // requests counted against the daily budget
	recent   []time.Time // arrivals within the burst window, for X-RateLimit-Remaining
	resetsAt time.Time   // 0: no Retry-After on a daily 429 (GHL documents none)
}

func newGHLLimits(o GHLOptions) *ghlLimits {
	l := &ghlLimits{burst: o.RateLimit, window: o.RateWindow, daily: o.DailyLimit}
	if l.burst <= 0 {
		l.burst = ghlBurstDefault
	}
	if l.window <= 0 {
		l.window = 10 * time.Second
	}
	if l.daily <= 0 {
		l.daily = ghlDailyDefault
	}
	return l
}

// header writes the five X-RateLimit-* headers; exhausted marks an answer to a burst 429.
func (l *ghlLimits) header(h http.Header, exhausted bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	cut := time.Now().Add(-l.window)
	l.recent = slices.DeleteFunc(l.recent, func(t time.Time) bool { return !t.After(cut) })
	remaining := max(0, l.burst-len(l.recent))
	if exhausted {
		remaining = 0
	}
	h.Set("X-RateLimit-Max", strconv.Itoa(l.burst))
	h.Set("X-RateLimit-Remaining", strconv.Itoa(remaining))
	h.Set("X-RateLimit-Interval-Milliseconds", strconv.FormatInt(l.window.Milliseconds(), 10))
	h.Set("X-RateLimit-Limit-Daily", strconv.Itoa(l.daily))
	h.Set("X-RateLimit-Daily-Remaining", strconv.Itoa(max(0, l.daily-l.used)))
}

// admit counts one request against the daily budget; false when the day's budget is spent.
func (l *ghlLimits) admit() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.used >= l.daily {
		return false
	}
	l.used++
	l.recent = append(l.recent, time.Now())
	return true
}

// SetDailyRemaining sets how many requests the location has left today (the next ones past it are a
// daily 429). resetIn > 0 adds a Retry-After to those 429s; GHL documents none, so 0 sends none.
func (f *GoHighLevel) SetDailyRemaining(n int, resetIn time.Duration) {
	f.limits.mu.Lock()
	defer f.limits.mu.Unlock()
	f.limits.used = max(0, f.limits.daily-n)
	f.limits.resetsAt = time.Time{}
	if resetIn > 0 {
		f.limits.resetsAt = time.Now().Add(resetIn)
	}
}

// limited checks the Version header every v2 operation requires (a required header parameter, enum
// "2021-07-28", in every apps/*.json operation), counts the request against the daily budget and writes
// the rate-limit headers on every answer.
func (f *GoHighLevel) limited(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if v := r.Header.Get("Version"); v != "2021-07-28" {
			ghlBad(w, "Version header must be 2021-07-28 (got "+strconv.Quote(v)+")")
			return
		}
		if !f.limits.admit() {
			f.limits.header(w.Header(), false)
			f.limits.mu.Lock()
			reset := f.limits.resetsAt
			f.limits.mu.Unlock()
			if !reset.IsZero() {
				w.Header().Set("Retry-After", strconv.Itoa(max(1, int(time.Until(reset).Seconds()))))
			}
			writeJSON(w, http.StatusTooManyRequests, map[string]any{"statusCode": 429, "message": "Daily API request limit reached"})
			return
		}
		f.limits.header(w.Header(), false)
		h.ServeHTTP(w, r)
	})
}

// AnswerAfterCommit makes the next request matching r.Method and r.Path do its work (commit) and then
// answer r.Status and r.Body instead of its real answer, the way GHL has been seen answering 422 to a
// create that still created the contact. Status 0 loses the answer: the connection is closed after the
// commit, as when a timeout or a network fault eats the answer of a write that happened. The real answer
// is kept when the request fails on its own (non-2xx).
func (f *GoHighLevel) AnswerAfterCommit(r Response) {
	f.mu.Lock()
	f.after = append(f.after, ghlAfter{Response: r})
	f.mu.Unlock()
}

// TimeoutAfterCommit makes the next request matching method and path do its work and then answer
// nothing until the client gives up (its timeout): a write that committed and timed out.
func (f *GoHighLevel) TimeoutAfterCommit(method, path string) {
	f.mu.Lock()
	f.after = append(f.after, ghlAfter{Response: Response{Method: method, Path: path}, hold: true})
	f.mu.Unlock()
}

type ghlAfter struct {
	Response
	hold bool // wait for the client to give up before dropping the connection
}

func (f *GoHighLevel) afterCommit(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		f.mu.Lock()
		i := slices.IndexFunc(f.after, func(q ghlAfter) bool {
			return (q.Method == "" || q.Method == r.Method) && (q.Path == "" || q.Path == r.URL.Path)
		})
		var canned ghlAfter
		if i >= 0 {
			canned = f.after[i]
			f.after = slices.Delete(f.after, i, i+1)
		}
		f.mu.Unlock()
		if i < 0 {
			h.ServeHTTP(w, r)
			return
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, r)
		if rec.Code < 200 || rec.Code > 299 {
			for k, v := range rec.Header() {
				w.Header()[k] = v
			}
			w.WriteHeader(rec.Code)
			_, _ = io.Copy(w, bytes.NewReader(rec.Body.Bytes()))
			return
		}
		if canned.hold {
			select {
			case <-r.Context().Done(): // the client timed out and closed the connection
			case <-time.After(time.Minute):
			}
		}
		if canned.Status == 0 {
			panic(http.ErrAbortHandler) // the write committed; its answer never reaches the client
		}
		for k, v := range canned.Header {
			w.Header()[k] = v
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(canned.Status)
		_, _ = io.WriteString(w, canned.Body)
	})
}

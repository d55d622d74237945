package crm

import (
	"context"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"
)

// DailyBudget is a destination's daily request quota as its CRM last reported it.
type DailyBudget struct {
	Limit     int       // requests allowed per day
	Remaining int       // requests left today when the answer was read
	At        time.Time // when that answer was read
}

// DailyBudgetReporter is implemented by destinations whose CRM reports a daily request quota on its
// answers (GoHighLevel: X-RateLimit-Limit-Daily / X-RateLimit-Daily-Remaining), so that sync can spread a
// backlog over the day instead of spending the quota at once.
type DailyBudgetReporter interface {
	// DailyBudget returns the last budget seen; false before any answer carried one.
	DailyBudget() (DailyBudget, bool)
}

// ghlBudget holds the last daily budget GoHighLevel reported.
type ghlBudget struct {
	mu   sync.Mutex
	last DailyBudget
	seen bool
}

// observe records the budget headers of an answer (GHL sends them on every v2 answer).
func (b *ghlBudget) observe(h http.Header, now time.Time) {
	limit, err1 := strconv.Atoi(strings.TrimSpace(h.Get("X-RateLimit-Limit-Daily")))
	left, err2 := strconv.Atoi(strings.TrimSpace(h.Get("X-RateLimit-Daily-Remaining")))
	if err1 != nil || err2 != nil {
		return
	}
	b.mu.Lock()
	b.last, b.seen = DailyBudget{Limit: limit, Remaining: left, At: now}, true
	b.mu.Unlock()
}

// DailyBudget returns the daily budget of the location as its last answer reported it.
func (g *goHighLevel) DailyBudget() (DailyBudget, bool) {
	g.budget.mu.Lock()
	defer g.budget.mu.Unlock()
	return g.budget.last, g.budget.seen
}

// do sends one request and reads its rate-limit headers. A 429 that says the day's budget is spent
// (X-RateLimit-Daily-Remaining: 0) is a Quota fault of the destination, held until the reset; a 429 with
// budget left for the day is the burst limit and stays RateLimited.
func (g *goHighLevel) do(ctx context.Context, c call, calls *int) (int, error) {
	var h http.Header
	c.header = &h
	status, err := g.api.do(ctx, c, calls)
	if h != nil {
		g.budget.observe(h, g.cfg.Now())
	}
	var e *Error
	if status == http.StatusTooManyRequests && errors.As(err, &e) && strings.TrimSpace(h.Get("X-RateLimit-Daily-Remaining")) == "0" {
		e.Class = Quota
		e.RetryAfter = ghlDailyReset(h, g.cfg.Now())
		e.Message = "gohighlevel: the location's daily API limit is used up (" + h.Get("X-RateLimit-Limit-Daily") +
			" requests a day); writes resume after the reset: " + e.Message
	}
	return status, err
}

// ghlDailyReset is how long the daily quota stays spent: Retry-After when the answer has one, else until
// the next midnight UTC. GoHighLevel documents neither a reset header nor the time of day the budget
// resets, so midnight UTC is a guess that a live account would have to confirm.
func ghlDailyReset(h http.Header, now time.Time) time.Duration {
	if d := parseRetryAfter(h.Get("Retry-After"), now); d > 0 {
		return d
	}
	now = now.UTC()
	midnight := time.Date(now.Year(), now.Month(), now.Day()+1, 0, 0, 0, 0, time.UTC)
	return midnight.Sub(now)
}

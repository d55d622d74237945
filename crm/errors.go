package crm

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/leadgate/leadgate/internal/egress"
)

// Class tells the outbox relay what to do with a failure (issue 4 §7).
type Class int

const (
	// RateLimited: pause the destination for RetryAfter and requeue without counting a failure.
	RateLimited Class = iota + 1
	// Transient: 5xx, 423, timeouts, network errors: back off and retry, then a transient dead letter.
	Transient
	// Auth: 401/402/403: pause the destination, keep all work, alert once.
	Auth
	// Invalid: 4xx validation or a mapping problem: invalid_mapping dead letter, never auto-retried.
	Invalid
	// NotFound: a remote id that no longer exists.
	NotFound
	// Setup: a fault of the destination itself rather than of one contact (a loop-breaker or stage
	// field the account lacks, a mapped field that does not exist): every contact would fail the same
	// way, so the destination pauses with the reason and holds its work.
	Setup
	// Quota: the destination's daily request quota is used up; RetryAfter runs to its reset.
	Quota
)

// String names the class as dead letters and metrics do.
func (c Class) String() string {
	switch c {
	case RateLimited:
		return "rate_limited"
	case Transient:
		return "transient"
	case Auth:
		return "auth"
	case Invalid:
		return "invalid"
	case NotFound:
		return "not_found"
	case Setup:
		return "setup"
	case Quota:
		return "quota"
	default:
		return "unknown"
	}
}

// Error is a classified CRM failure.
type Error struct {
	Class      Class
	Status     int           // HTTP status; 0 for network errors and local validation
	RetryAfter time.Duration // from Retry-After (or the CRM's documented minimum wait); 0 when unknown
	Message    string
	// ExistingID is the id of the existing record a duplicate/conflict answer names (HubSpot 409
	// "Existing ID: N", GoHighLevel 400 meta.contactId); "" otherwise.
	ExistingID string
	// cause is the transport error behind a network failure (errors.As reaches an SSRF refusal through it).
	cause error
}

// Unwrap returns the transport error behind a network failure, if any.
func (e *Error) Unwrap() error { return e.cause }

func (e *Error) Error() string {
	if e.Status != 0 {
		return fmt.Sprintf("crm %s (HTTP %d): %s", e.Class, e.Status, e.Message)
	}
	return fmt.Sprintf("crm %s: %s", e.Class, e.Message)
}

// ClassOf returns the class of err when it is (or wraps) an *Error, else Transient.
func ClassOf(err error) Class {
	var e *Error
	if errors.As(err, &e) {
		return e.Class
	}
	return Transient
}

// Default waits when a rate-limit answer carries no usable Retry-After.
const (
	defaultRateLimitWait = time.Second
	hubspotLockedWait    = 2 * time.Second // 423 Locked: locks last 2 s
	maxMessageLen        = 500
)

// classifyStatus turns a non-2xx response into an *Error. body is the (possibly truncated) response body.
func classifyStatus(status int, header http.Header, body []byte) *Error {
	msg := errorMessage(body)
	if msg == "" {
		msg = http.StatusText(status)
	}
	e := &Error{Status: status, Message: msg, ExistingID: existingID(status, msg, body)}
	switch {
	case status == http.StatusTooManyRequests:
		e.Class = RateLimited
		e.RetryAfter = rateLimitWait(header)
	case status == http.StatusBadRequest && strings.Contains(strings.ToLower(string(body)), "rate limit exceeded"):
		// ActiveCampaign's importer answers its rate limit with a 400: a rate limit, not a validation error.
		e.Class = RateLimited
		e.RetryAfter = rateLimitWait(header)
	case status == http.StatusUnauthorized || status == http.StatusPaymentRequired || status == http.StatusForbidden:
		e.Class = Auth
	case status == http.StatusNotFound:
		e.Class = NotFound
	case status == http.StatusLocked:
		e.Class = Transient
		e.RetryAfter = max(parseRetryAfter(header.Get("Retry-After"), time.Now()), hubspotLockedWait)
	case status >= 500 || status == 477 || status == http.StatusRequestTimeout:
		e.Class = Transient
		e.RetryAfter = parseRetryAfter(header.Get("Retry-After"), time.Now())
	default:
		e.Class = Invalid
	}
	return e
}

// rateLimitWait is Retry-After, else HubSpot's interval header, else one second.
func rateLimitWait(h http.Header) time.Duration {
	if d := parseRetryAfter(h.Get("Retry-After"), time.Now()); d > 0 {
		return d
	}
	for _, name := range []string{"X-HubSpot-RateLimit-Interval-Milliseconds", "X-RateLimit-Interval-Milliseconds"} {
		if ms, err := strconv.Atoi(strings.TrimSpace(h.Get(name))); err == nil && ms > 0 {
			return time.Duration(ms) * time.Millisecond
		}
	}
	return defaultRateLimitWait
}

// parseRetryAfter reads a Retry-After value: delay seconds or an HTTP date. 0 when absent or unparsable.
func parseRetryAfter(v string, now time.Time) time.Duration {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0
	}
	if secs, err := strconv.ParseFloat(v, 64); err == nil {
		if secs <= 0 || secs > 7*24*3600 {
			return 0
		}
		return time.Duration(secs * float64(time.Second))
	}
	if t, err := http.ParseTime(v); err == nil && t.After(now) {
		return t.Sub(now)
	}
	return 0
}

// transportError classifies a failure to get any response: timeouts and network errors are transient;
// a cancelled context is reported as such so the caller can tell shutdown from failure.
func transportError(ctx context.Context, op string, err error) *Error {
	if ctx.Err() != nil {
		return &Error{Class: Transient, Message: fmt.Sprintf("%s: %v", op, ctx.Err())}
	}
	if egress.IsBlocked(err) {
		// The SSRF guard refused the base URL's address: a configuration problem like a revoked token, so
		// the destination pauses with the reason and keeps its work instead of retrying into a wall.
		return &Error{Class: Auth, Message: fmt.Sprintf("%s: %v", op, err), cause: err}
	}
	return &Error{Class: Transient, Message: fmt.Sprintf("%s: %v", op, err)}
}

// invalidf is a local validation / mapping failure.
func invalidf(format string, args ...any) *Error {
	return &Error{Class: Invalid, Message: fmt.Sprintf(format, args...)}
}

// errorMessage extracts a human-readable message from the error bodies of the three CRMs:
// AC {"errors":[{"title","detail"}]} / {"message"}, HubSpot {"message"}, GHL {"message": string|[]string}.
func errorMessage(body []byte) string {
	var b struct {
		Message any `json:"message"`
		Errors  []struct {
			Title  string `json:"title"`
			Detail string `json:"detail"`
		} `json:"errors"`
	}
	if err := jsonUnmarshal(body, &b); err != nil {
		return truncate(strings.TrimSpace(string(body)))
	}
	var parts []string
	switch m := b.Message.(type) {
	case string:
		parts = append(parts, m)
	case []any:
		for _, x := range m {
			parts = append(parts, fmt.Sprint(x))
		}
	}
	for _, e := range b.Errors {
		s := strings.TrimSpace(strings.TrimSpace(e.Title) + " " + strings.TrimSpace(e.Detail))
		if s != "" {
			parts = append(parts, s)
		}
	}
	return truncate(strings.Join(parts, "; "))
}

func truncate(s string) string {
	if len(s) > maxMessageLen {
		return s[:maxMessageLen] + "…"
	}
	return s
}

// existingID finds the existing record named by a duplicate answer: HubSpot's 409 message or
// GoHighLevel's 400 meta.contactId.
func existingID(status int, msg string, body []byte) string {
	switch status {
	case http.StatusConflict:
		return hsExistingID(msg)
	case http.StatusBadRequest:
		var b struct {
			Meta struct {
				ContactID string `json:"contactId"`
			} `json:"meta"`
		}
		if jsonUnmarshal(body, &b) == nil {
			return b.Meta.ContactID
		}
	}
	return ""
}

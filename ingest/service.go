// Package ingest turns webhook deliveries into durable inbox events: it looks
// up the source, verifies the signature, maps and normalizes the payload,
// deduplicates by idempotency key, stores (or spools) and enqueues.
package ingest

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"mime"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"github.com/google/uuid"
	"github.com/redis/go-redis/v9"

	"github.com/leadgate/leadgate/ingest/filter"
	"github.com/leadgate/leadgate/ingest/mapping"
	"github.com/leadgate/leadgate/ingest/normalize"
	"github.com/leadgate/leadgate/ingest/signature"
	"github.com/leadgate/leadgate/ingest/spool"
	"github.com/leadgate/leadgate/models"
)

// Enqueuer schedules the apply task of a stored event that waits for hydration.
type Enqueuer interface {
	EnqueueApply(ctx context.Context, eventID string) error
}

// Announcer tells the apply drainers that events were stored; it never blocks.
type Announcer interface {
	Announce()
}

// Service is the ingest pipeline. All fields are required except Spool (nil:
// answer 503 when Postgres is down), Redis (nil: the fast gate is not read) and Gate (nil: it is not
// written).
type Service struct {
	Store   *models.Store
	Sources *SourceCache
	// Filters drop or tag events per source before they become leads (nil: none).
	Filters *filter.Loader
	Redis   redis.UniversalClient
	Queue   Enqueuer
	// Trigger announces stored events to the apply drainers (nil: every event gets its own apply task).
	Trigger Announcer
	Spool   *spool.Spool
	// Postgres routes deliveries straight to the spool while Postgres is known to be away (nil: every
	// delivery tries Postgres first). It only routes when Spool is set.
	Postgres *PostgresHealth
	// StoreTimeout bounds the statement of a delivery stored on its own (default 2 s; the group
	// statement has GroupCommit.Timeout); past it the delivery is spooled.
	StoreTimeout time.Duration
	// Group stores single-event deliveries of concurrent requests together (nil: each on its own).
	// Its Run must be running.
	Group *GroupCommit
	// Gate writes committed keys to the fast gate off the answer path (nil: the gate is only read).
	Gate *GatePublisher
	// Deliveries counts refused deliveries per source for the stats and the
	// refusal alarm, off the answer path (nil: not counted).
	Deliveries *DeliveryLog
	Metrics    *Metrics
	// Phones remembers recently parsed phone numbers (nil: every number is parsed).
	Phones *normalize.PhoneCache
	Log    *slog.Logger
	// Window is the sliding dedupe window for content-hash keys.
	Window time.Duration
	// GateTTL is how long Redis remembers a committed key (24 h by default).
	GateTTL time.Duration
	Now     func() time.Time

	redisDown redisBreaker
	uncounted duplicateTally
}

// Delivery is one HTTP request to /hooks/{token}.
type Delivery struct {
	Token       string
	Method      string
	URL         string // public URL the sender called
	Query       url.Values
	Header      http.Header
	ContentType string
	Body        []byte
}

// Answer is what the handler writes back.
type Answer struct {
	Status     int
	Body       any
	Text       string // plain-text body (the Meta hub.challenge handshake)
	RetryAfter int    // seconds, for 503
	Outcome    string // metric label
}

// ItemAnswer is one event of a multi-event payload.
type ItemAnswer struct {
	EventID string `json:"event_id"`
	Status  string `json:"status"`
	Reason  string `json:"reason,omitempty"`
}

func errorAnswer(status int, outcome, msg string) Answer {
	return Answer{Status: status, Outcome: outcome, Body: map[string]string{"error": msg}}
}

func unavailable(msg string) Answer {
	a := errorAnswer(http.StatusServiceUnavailable, "unavailable", msg)
	a.RetryAfter = 30
	return a
}

// Receive handles one delivery end to end and never panics on bad input.
func (s *Service) Receive(ctx context.Context, d Delivery) Answer {
	start := s.Now()
	ans, src := s.receive(ctx, d, start)
	kind, sourceID := "", ""
	if src != nil {
		kind, sourceID = src.Kind, strconv.FormatInt(src.ID, 10)
		s.Deliveries.Record(src.WorkspaceID, src.ID, ans.Status, ans.Outcome, answerError(ans))
	}
	if s.Metrics != nil {
		s.Metrics.Deliveries.WithLabelValues(sourceID, kind, ans.Outcome).Inc()
		s.Metrics.Latency.WithLabelValues(ans.Outcome).Observe(s.Now().Sub(start).Seconds())
	}
	return ans
}

func (s *Service) receive(ctx context.Context, d Delivery, now time.Time) (Answer, *models.Source) {
	e, err := s.Sources.Get(ctx, d.Token, now)
	switch {
	case errors.Is(err, models.ErrNotFound):
		return errorAnswer(http.StatusNotFound, "unknown_source", "unknown ingest token"), nil
	case err != nil:
		s.Log.Error("ingest: source lookup", "err", err)
		return unavailable("leadgate cannot reach its database; retry later"), nil
	}
	src := e.src
	kind := src.Kind
	switch {
	case src.DeletedAt != nil:
		return errorAnswer(http.StatusGone, "deleted_source", "this source was deleted"), &src
	case !src.Enabled:
		return unavailable("this source is disabled; deliveries are refused until it is enabled again"), &src
	}
	if d.Method == http.MethodGet {
		body, handled, err := signature.Handshake(kind, e.verify, d.Query)
		if !handled {
			return errorAnswer(http.StatusMethodNotAllowed, "method", "use POST to deliver webhooks"), &src
		}
		if err != nil {
			return errorAnswer(http.StatusForbidden, "handshake_failed", err.Error()), &src
		}
		return Answer{Status: http.StatusOK, Text: body, Outcome: "handshake"}, &src
	}
	ct, err := contentType(d.ContentType)
	if err != nil {
		return errorAnswer(http.StatusUnsupportedMediaType, "unsupported_type", err.Error()), &src
	}
	req := signature.Request{Method: d.Method, URL: d.URL, Header: d.Header, Body: d.Body}
	if err := signature.Verify(kind, e.verify, req, now); err != nil {
		var se *signature.Error
		if errors.As(err, &se) {
			return errorAnswer(http.StatusUnauthorized, "unauthorized", se.Reason), &src
		}
		s.Log.Error("ingest: verify", "source", src.ID, "err", err)
		return errorAnswer(http.StatusUnauthorized, "unauthorized", "signature could not be verified"), &src
	}
	items, err := mapping.Map(kind, mapping.Overrides{Paths: src.Config.Mapping}, ct, d.Header, d.Body)
	if err != nil {
		var me *mapping.MalformedError
		if errors.As(err, &me) {
			return errorAnswer(http.StatusBadRequest, "malformed", me.Reason), &src
		}
		return errorAnswer(http.StatusBadRequest, "malformed", "the payload could not be read"), &src
	}
	if len(items) == 0 {
		return Answer{Status: http.StatusOK, Outcome: "empty", Body: map[string]any{"status": "ignored", "reason": "the payload carries no events"}}, &src
	}
	return s.store(ctx, src, ct, items, now), &src
}

// Refuse counts a delivery the HTTP layer refused before ingest saw it (a
// body over the size limit, or one that could not be read) against its
// source, when the token names one.
func (s *Service) Refuse(ctx context.Context, token string, status int, reason string) {
	if s.Deliveries == nil {
		return
	}
	e, err := s.Sources.Get(ctx, token, s.Now())
	if err != nil || e.src.DeletedAt != nil || !e.src.Enabled {
		return
	}
	s.Deliveries.Record(e.src.WorkspaceID, e.src.ID, status, "", reason)
}

// answerError is the error message of an error answer.
func answerError(a Answer) string {
	if m, ok := a.Body.(map[string]string); ok {
		return m["error"]
	}
	return ""
}

// contentType accepts JSON and form bodies only.
func contentType(raw string) (string, error) {
	mt, _, err := mime.ParseMediaType(raw)
	if err != nil || raw == "" {
		return "", fmt.Errorf("Content-Type %q is not supported; send application/json or application/x-www-form-urlencoded", raw)
	}
	switch mt {
	case "application/json", "application/x-www-form-urlencoded":
		return mt, nil
	}
	if len(mt) > 5 && mt[len(mt)-5:] == "+json" {
		return "application/json", nil
	}
	return "", fmt.Errorf("Content-Type %q is not supported; send application/json or application/x-www-form-urlencoded", mt)
}

// newEventID mints a time-ordered id.
func newEventID() string {
	id, err := uuid.NewV7()
	if err != nil {
		return uuid.NewString()
	}
	return id.String()
}

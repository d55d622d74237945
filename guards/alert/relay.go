package alert

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/leadgate/leadgate/internal/secretbox"
	"github.com/leadgate/leadgate/models"
)

// Relay delivery defaults.
const (
	DefaultMaxAttempts = 6
	firstBackoff       = 30 * time.Second
	maxBackoff         = 30 * time.Minute
	claimLease         = 2 * time.Minute
)

// KindAlertFailed is the dead-letter kind of an alert no channel could take.
const KindAlertFailed = "alert_failed"

// Relay delivers outbox rows of kind "alert" to every enabled channel of
// their workspace whose minimum severity they meet: each channel once (a
// retry resends only to channels that failed), with exponential backoff
// from 30 s, and after MaxAttempts (or a permanent error) the row is closed
// as failed and dead-lettered. Dead-letter alerts for loop_suspected events
// are suppressed: the breaker sent the one alert for that contact.
type Relay struct {
	Store  *models.Store
	Box    *secretbox.Box
	Sender *Sender
	// GuardFor returns the SSRF guard of a workspace (its admin-allowed
	// hosts); nil: Sender.Guard for every workspace.
	GuardFor    func(ctx context.Context, workspaceID int64) (*Guard, error)
	Log         *slog.Logger
	Now         func() time.Time
	MaxAttempts int
}

// RunOnce delivers the due alert rows, at most limit, and reports how many
// it finished.
func (r *Relay) RunOnce(ctx context.Context, limit int) (int, error) {
	rows, err := r.Store.AlertClaim(ctx, r.now(), claimLease, limit)
	if err != nil {
		return 0, err
	}
	slugs := map[int64]string{}
	done := 0
	var errs []error
	for _, row := range rows {
		slug, err := r.slug(ctx, slugs, row.WorkspaceID)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		finished, err := r.deliver(ctx, row, slug)
		if err != nil {
			errs = append(errs, fmt.Errorf("alert %d: %w", row.ID, err))
		}
		if finished {
			done++
		}
	}
	return done, errors.Join(errs...)
}

// deliver sends one row and records the outcome; it reports whether the row is closed.
func (r *Relay) deliver(ctx context.Context, row models.OutboxRow, slug string) (bool, error) {
	if suppressed(row) {
		return true, r.Store.AlertFinish(ctx, row.ID, models.AlertSuppressed, "the circuit breaker's own alert covers loop_suspected dead letters", row.Attempts)
	}
	msg := FromOutbox(row, slug)
	channels, err := r.channels(ctx, row.WorkspaceID)
	if err != nil {
		return false, err
	}
	var wanted []Channel
	for _, ch := range channels {
		if ch.Wants(msg.Severity) {
			wanted = append(wanted, ch)
		}
	}
	if len(wanted) == 0 {
		return true, r.Store.AlertFinish(ctx, row.ID, models.AlertNoChannel, "no enabled alert channel takes this severity", row.Attempts)
	}
	sent, err := r.Store.AlertDelivered(ctx, row.ID)
	if err != nil {
		return false, err
	}
	sender, err := r.senderFor(ctx, row.WorkspaceID)
	if err != nil {
		return false, err
	}
	var failures []string
	permanent, retryAfter := true, time.Duration(0)
	for _, ch := range wanted {
		if sent[ch.ID] {
			continue
		}
		serr := sender.Send(ctx, ch, msg)
		text := ""
		if serr != nil {
			text = serr.Error()
			failures = append(failures, fmt.Sprintf("channel %d (%s): %s", ch.ID, ch.Name, text))
			permanent = permanent && IsPermanent(serr)
			var se *SendError
			if errors.As(serr, &se) && se.RetryAfter > retryAfter {
				retryAfter = se.RetryAfter
			}
		}
		if err := r.Store.AlertDeliveryRecord(ctx, row.ID, ch.ID, text); err != nil {
			return false, err
		}
	}
	attempts := row.Attempts + 1
	if len(failures) == 0 {
		return true, r.Store.AlertFinish(ctx, row.ID, models.AlertSent, "", attempts)
	}
	lastErr := truncate(strings.Join(failures, "; "), 2000)
	if !permanent && attempts < r.maxAttempts() {
		delay := max(Backoff(attempts), retryAfter)
		r.logger().Warn("alert delivery failed; will retry", "outbox_id", row.ID, "attempt", attempts, "in", delay, "err", lastErr)
		return false, r.Store.AlertRetryAt(ctx, row.ID, attempts, r.now().Add(delay), lastErr)
	}
	r.logger().Error("alert delivery failed for good", "outbox_id", row.ID, "attempts", attempts, "err", lastErr)
	return true, r.Store.Tx(ctx, func(tx *models.Store) error {
		if err := tx.AlertFinish(ctx, row.ID, models.AlertFailed, lastErr, attempts); err != nil {
			return err
		}
		id := row.ID
		_, err := tx.DeadLetterAdd(ctx, models.DeadLetter{WorkspaceID: row.WorkspaceID, Kind: KindAlertFailed, OutboxID: &id,
			ContactID: row.ContactID, Reason: fmt.Sprintf("alert %q not delivered after %d attempts: %s", msg.Title, attempts, lastErr),
			Payload: row.Payload, Attempts: attempts})
		return err
	})
}

// Backoff is the delay before retry n (1-based): 30 s doubling to 30 min.
func Backoff(n int) time.Duration {
	d := firstBackoff
	for i := 1; i < n && d < maxBackoff; i++ {
		d *= 2
	}
	return min(d, maxBackoff)
}

// suppressed reports a lifecycle dead-letter alert for a loop_suspected event.
func suppressed(row models.OutboxRow) bool {
	var p struct {
		Type string `json:"type"`
		Kind string `json:"kind"`
	}
	return json.Unmarshal(row.Payload, &p) == nil && p.Type == "dead_letter" && p.Kind == "loop_suspected"
}

// Channels opens a workspace's enabled channels.
func (r *Relay) channels(ctx context.Context, workspaceID int64) ([]Channel, error) {
	stored, err := r.Store.AlertChannelList(ctx, workspaceID, true)
	if err != nil {
		return nil, err
	}
	out := make([]Channel, 0, len(stored))
	for _, c := range stored {
		ch, err := Open(c, r.Box)
		if err != nil {
			r.logger().Error("alert channel unreadable; skipped", "channel", c.ID, "err", err)
			continue
		}
		out = append(out, ch)
	}
	return out, nil
}

func (r *Relay) senderFor(ctx context.Context, workspaceID int64) (*Sender, error) {
	if r.GuardFor == nil {
		return r.Sender, nil
	}
	g, err := r.GuardFor(ctx, workspaceID)
	if err != nil {
		return nil, err
	}
	s := *r.Sender
	s.Guard = g
	return &s, nil
}

func (r *Relay) slug(ctx context.Context, cache map[int64]string, workspaceID int64) (string, error) {
	if s, ok := cache[workspaceID]; ok {
		return s, nil
	}
	wss, err := r.Store.WorkspaceList(ctx, true)
	if err != nil {
		return "", err
	}
	for _, w := range wss {
		cache[w.ID] = w.Slug
	}
	if s, ok := cache[workspaceID]; ok {
		return s, nil
	}
	return fmt.Sprintf("workspace-%d", workspaceID), nil
}

func (r *Relay) maxAttempts() int {
	if r.MaxAttempts > 0 {
		return r.MaxAttempts
	}
	return DefaultMaxAttempts
}

func (r *Relay) now() time.Time {
	if r.Now != nil {
		return r.Now()
	}
	return time.Now()
}

func (r *Relay) logger() *slog.Logger {
	if r.Log != nil {
		return r.Log
	}
	return slog.New(slog.DiscardHandler)
}

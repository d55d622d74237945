package syncer

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"sync"
	"time"

	"github.com/leadgate/leadgate/internal/egress"
	"github.com/leadgate/leadgate/internal/failpoint"
	"github.com/leadgate/leadgate/internal/secretbox"
	"github.com/leadgate/leadgate/models"
)

// ActionRunner is implemented by the sandbox, which records any side effect natively once per stable id.
// Real CRM adapters implement crm.ActionRunner instead (a fixed set of actions on the contact's record).
type ActionRunner interface {
	RunAction(ctx context.Context, stableID, contactID, action string, params map[string]string) error
}

// SideEffectRelay delivers the outbox's side_effect rows, each once under its stable id (DESIGN.md SIDE
// EFFECTS): to the workspace's generic webhook when one is configured (Idempotency-Key = the stable id, so
// the receiver can drop a repeat after a crash), else natively at every enabled destination that supports
// the action (sendNative; dead-lettered at once when none does), else the row is skipped with the reason. Failures are retried with exponential backoff, then dead-lettered
// (side_effect_failed); a 4xx answer other than 408/429 is dead-lettered at once.
type SideEffectRelay struct {
	Store     *models.Store
	Box       *secretbox.Box
	Connector *Connector
	HTTP      *http.Client // default: Egress's client, 10 s timeout
	// Egress is the SSRF guard of the webhook (nil: egress.Outbound(nil), public addresses only). A
	// webhook it refuses is dead-lettered at once with the reason: retrying cannot make it allowed.
	Egress  *egress.Guard
	Log     *slog.Logger
	Metrics *SyncMetrics

	Attempts     int           // deliveries before a dead letter; default 8
	BackoffStart time.Duration // default 2 s
	Lease        time.Duration // default 2 min
	Now          func() time.Time
	// Failpoints stop the process at named points (failure-boundary tests; nil: none).
	Failpoints *failpoint.Set

	clientOnce sync.Once
	guarded    *http.Client
}

// sideEffectBody is what the lifecycle engine writes as a side_effect payload.
type sideEffectBody struct {
	ContactID string            `json:"contact_id"`
	Cause     string            `json:"cause"`
	Action    string            `json:"action"`
	Params    map[string]string `json:"params"`
	EventID   string            `json:"event_id"`
}

// permanentError is a delivery failure not worth retrying.
type permanentError struct{ error }

// Deliver runs passes until no side effect is due; it returns how many rows it handled.
func (r *SideEffectRelay) Deliver(ctx context.Context) (int, error) {
	total := 0
	for {
		rows, err := r.Store.SideEffectClaim(ctx, 50, r.lease())
		if err != nil || len(rows) == 0 {
			return total, err
		}
		for _, row := range rows {
			if err := r.deliver(ctx, row); err != nil {
				return total, err
			}
			total++
		}
	}
}

// deliver sends one row and records its outcome.
func (r *SideEffectRelay) deliver(ctx context.Context, row models.OutboxRow) error {
	var body sideEffectBody
	if err := json.Unmarshal(row.Payload, &body); err != nil {
		r.Metrics.sideEffect("dead")
		_, err := r.Store.SideEffectDeadLetter(ctx, row, "side effect payload is not readable: "+err.Error())
		return err
	}
	r.Failpoints.Hit(failpoint.SideEffectBeforeSend)
	target, err := r.send(ctx, row, body)
	if ctx.Err() != nil {
		return ctx.Err() // shutdown: the lease brings the row back
	}
	r.Failpoints.Hit(failpoint.SideEffectAfterSend)
	switch {
	case err == nil && target == "":
		r.Metrics.sideEffect("skipped")
		return r.Store.SideEffectDone(ctx, row.ID, models.OutboxSkipped, "no side-effect target: configure a webhook or a destination with native actions")
	case err == nil:
		r.Metrics.sideEffect("sent")
		return r.Store.SideEffectDone(ctx, row.ID, models.OutboxSent, "delivered to "+target)
	}
	var held heldError
	if errors.As(err, &held) {
		r.Metrics.sideEffect("held") // paused or rate-limited CRM destination: waits, not counted
		return r.Store.SideEffectHold(ctx, row.ID, r.now().Add(held.wait), err.Error())
	}
	var perm permanentError
	if errors.As(err, &perm) || row.Attempts+1 >= r.attempts() {
		r.Metrics.sideEffect("dead")
		r.Log.Warn("side effect dead-lettered", "outbox", row.ID, "stable_id", row.StableID, "err", err)
		_, dlErr := r.Store.SideEffectDeadLetter(ctx, row, fmt.Sprintf("%s after %d attempts: %v", row.Action, row.Attempts+1, err))
		return dlErr
	}
	r.Metrics.sideEffect("retry")
	return r.Store.SideEffectRetry(ctx, row.ID, r.now().Add(r.backoff(row.Attempts+1)), err.Error())
}

// send delivers to the configured target and names it ("" when there is none).
func (r *SideEffectRelay) send(ctx context.Context, row models.OutboxRow, body sideEffectBody) (string, error) {
	if isCRMAction(row.Action) {
		return r.sendCRM(ctx, row) // side_effect_crm.go
	}
	hook, err := r.Store.SideEffectWebhookGet(ctx, row.WorkspaceID)
	if err != nil && !errors.Is(err, models.ErrNotFound) {
		return "", err
	}
	if err == nil && hook.Enabled && hook.URL != "" {
		return hook.URL, r.post(ctx, hook, row, body)
	}
	return r.sendNative(ctx, row, body) // side_effect_native.go
}

// post sends the generic webhook: JSON, Idempotency-Key = stable id, and an HMAC-SHA256 signature of the
// body when the webhook has a secret.
func (r *SideEffectRelay) post(ctx context.Context, hook models.SideEffectWebhook, row models.OutboxRow, body sideEffectBody) error {
	b, _ := json.Marshal(map[string]any{"id": row.StableID, "type": "side_effect", "action": body.Action, "cause": body.Cause,
		"params": body.Params, "contact_id": body.ContactID, "event_id": body.EventID, "workspace_id": row.WorkspaceID,
		"created_at": row.CreatedAt.UTC().Format(time.RFC3339)})
	if _, err := r.egress().CheckURL(hook.URL); err != nil {
		return permanentError{fmt.Errorf("side effect webhook: %w", err)}
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, hook.URL, bytes.NewReader(b))
	if err != nil {
		return permanentError{fmt.Errorf("side effect webhook: %w", err)}
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Idempotency-Key", row.StableID)
	req.Header.Set("User-Agent", "leadgate")
	if len(hook.SecretEnc) > 0 && r.Box != nil {
		secret, err := r.Box.Open(hook.SecretEnc)
		if err != nil {
			return permanentError{fmt.Errorf("side effect webhook: open secret: %w", err)}
		}
		mac := hmac.New(sha256.New, []byte(secret))
		mac.Write(b)
		req.Header.Set("X-Leadgate-Signature", "sha256="+hex.EncodeToString(mac.Sum(nil)))
	}
	resp, err := r.client().Do(req)
	if egress.IsBlocked(err) {
		return permanentError{fmt.Errorf("side effect webhook: %w", err)}
	}
	if err != nil {
		return fmt.Errorf("side effect webhook: %w", err)
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	switch {
	case resp.StatusCode >= 200 && resp.StatusCode < 300:
		return nil
	case resp.StatusCode == http.StatusRequestTimeout || resp.StatusCode == http.StatusTooManyRequests || resp.StatusCode >= 500:
		return fmt.Errorf("side effect webhook answered %d", resp.StatusCode)
	default:
		return permanentError{fmt.Errorf("side effect webhook answered %d", resp.StatusCode)}
	}
}

func (r *SideEffectRelay) backoff(n int) time.Duration {
	return retryWait(r.backoffStart(), 30*time.Minute, n)
}

func (r *SideEffectRelay) client() *http.Client {
	if r.HTTP != nil {
		return r.HTTP
	}
	r.clientOnce.Do(func() { r.guarded = r.egress().Client() })
	return r.guarded
}

func (r *SideEffectRelay) egress() *egress.Guard {
	if r.Egress != nil {
		return r.Egress
	}
	return egress.Outbound(nil)
}

func (r *SideEffectRelay) attempts() int { return positiveOr(r.Attempts, 8) }

func (r *SideEffectRelay) backoffStart() time.Duration {
	return positiveOr(r.BackoffStart, 2*time.Second)
}

func (r *SideEffectRelay) lease() time.Duration { return positiveOr(r.Lease, 2*time.Minute) }

func (r *SideEffectRelay) now() time.Time {
	if r.Now != nil {
		return r.Now()
	}
	return time.Now()
}

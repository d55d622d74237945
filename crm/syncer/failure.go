package syncer

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/leadgate/leadgate/crm"
	"github.com/leadgate/leadgate/models"
)

// failure is one contact of a batch that was not delivered.
type failure struct {
	item    models.SyncItem
	contact crm.Contact
	err     error
}

// handleFailures applies issue 4 §7 to the failed contacts of a batch:
//
//   - 429 (RateLimited): the destination's limiter pauses every replica for Retry-After; the work is
//     handed back due after the pause without counting a failure;
//   - a fault of the destination itself: 401/402/403 (Auth), a field, pipeline or stage the account lacks
//     (Setup), a spent daily quota (Quota): the destination is paused with its reason and cause (work
//     kept, no failure counted, nothing dead-lettered) with one alert per pause episode; the pause probe
//     resumes it once the fault is gone (sync_pause.go, sync_probe.go);
//   - 4xx validation (Invalid): an invalid_mapping dead letter, never retried automatically, plus an alert;
//     the rest of the batch is unaffected;
//   - a remote id that no longer exists (NotFound): forgotten, so the next attempt searches again;
//   - 5xx, timeouts (Transient): exponential backoff from BackoffStart with jitter, then a transient dead
//     letter the scheduler retries after 20 min, 40, 80 … (DeadLetterMax times).
func (r *SyncRelay) handleFailures(ctx context.Context, d models.Destination, conn *Conn, failed []failure, counts *models.DestinationCounters) error {
	var release []string
	var pauseFor time.Duration
	var fault destinationFault
	for _, f := range failed {
		class := crm.ClassOf(f.err)
		r.Metrics.failure(d.ID, class.String())
		msg := f.err.Error()
		counts.LastError = &msg
		switch class {
		case crm.RateLimited:
			release = append(release, f.item.ContactID)
			pauseFor = max(pauseFor, retryAfter(f.err), time.Second)
		case crm.Auth, crm.Setup, crm.Quota:
			release = append(release, f.item.ContactID)
			fault = fault.worse(r.faultOf(f.err))
		case crm.Invalid:
			counts.Failures++
			if err := r.deadLetter(ctx, d, f, "invalid_mapping", nil); err != nil {
				return err
			}
		case crm.NotFound:
			counts.Failures++
			if err := r.Store.SyncForgetRemote(ctx, d.ID, f.item.ContactID); err != nil {
				return err
			}
			if err := r.Store.SyncRetryLater(ctx, d.ID, f.item.ContactID, r.now(), msg); err != nil {
				return err
			}
		default:
			counts.Failures++
			if err := r.transient(ctx, d, f); err != nil {
				return err
			}
		}
	}
	if pauseFor > 0 {
		until := r.now().Add(pauseFor)
		if conn.Limiter != nil {
			if err := conn.Limiter.Pause(ctx, conn.Key, until); err != nil {
				r.Log.Warn("crm sync: pause limiter", "destination", d.ID, "err", err)
			}
		}
		if err := r.Store.SyncRelease(ctx, d.ID, release, until, "rate limited: retry after "+pauseFor.String()); err != nil {
			return err
		}
	}
	if fault.cause != "" {
		if err := r.Store.SyncRelease(ctx, d.ID, release, r.now(), fault.err.Error()); err != nil {
			return err
		}
		return r.pauseForFault(ctx, d, fault)
	}
	return nil
}

// transient schedules an inline retry with backoff, or dead-letters the item once they are used up.
func (r *SyncRelay) transient(ctx context.Context, d models.Destination, f failure) error {
	attempt := f.item.Attempts + 1
	if attempt < r.inlineAttempts() {
		wait := max(r.backoff(attempt), retryAfter(f.err))
		return r.Store.SyncRetryLater(ctx, d.ID, f.item.ContactID, r.now().Add(wait), f.err.Error())
	}
	next := r.now().Add(r.deadLetterWait())
	if f.item.DeadLetterID != nil {
		done, err := r.Store.SyncDeadLetterAttempts(ctx, *f.item.DeadLetterID)
		if err != nil {
			return err
		}
		if done+1 >= r.deadLetterMax() {
			return r.deadLetter(ctx, d, f, "transient", nil) // retries used up: an operator replays it
		}
		next = r.now().Add(r.deadLetterWait() << (done + 1))
	}
	return r.deadLetter(ctx, d, f, "transient", &next)
}

// backoff is the inline wait before retry attempt n (1-based): BackoffStart·2^(n-1) ± 50 % jitter.
func (r *SyncRelay) backoff(n int) time.Duration {
	return retryWait(r.backoffStart(), 5*time.Minute, n)
}

// deadLetter parks the item behind a dead letter of kind; a new invalid_mapping dead letter also alerts.
func (r *SyncRelay) deadLetter(ctx context.Context, d models.Destination, f failure, kind string, nextRetry *time.Time) error {
	p := models.SyncDeadLetterPayload{DestinationID: d.ID, Destination: d.Name, ContactID: f.item.ContactID, Version: f.contact.Version,
		Class: crm.ClassOf(f.err).String(), Error: f.err.Error()}
	var ce *crm.Error
	if errors.As(f.err, &ce) {
		p.Status = ce.Status
	}
	reason := fmt.Sprintf("%s: %s", d.Name, f.err.Error())
	id, created, err := r.Store.SyncDeadLetter(ctx, f.item, kind, reason, nextRetry, p)
	if err != nil {
		return err
	}
	r.Log.Warn("crm sync: dead-lettered", "destination", d.ID, "contact", f.item.ContactID, "kind", kind, "dead_letter", id, "err", f.err)
	if kind != "invalid_mapping" || !created {
		return nil
	}
	return r.alert(ctx, r.Store, d, fmt.Sprintf("alert:crm:%d:invalid_mapping:%d", d.ID, id), "crm_invalid_mapping",
		fmt.Sprintf("%s rejected contact %s: %s (dead letter %d)", d.Name, f.item.ContactID, f.err.Error(), id))
}

// alert writes one alert outbox row under a stable id (delivered by the alerting relay).
func (r *SyncRelay) alert(ctx context.Context, store *models.Store, d models.Destination, stableID, typ, message string) error {
	body, _ := json.Marshal(map[string]any{"type": typ, "destination_id": d.ID, "destination": d.Name, "message": message})
	_, err := store.OutboxAdd(ctx, models.OutboxRow{WorkspaceID: d.WorkspaceID, Kind: models.OutboxAlert, StableID: stableID, Action: typ, Payload: body})
	return err
}

func retryAfter(err error) time.Duration {
	var e *crm.Error
	if errors.As(err, &e) {
		return e.RetryAfter
	}
	return 0
}

func (r *SyncRelay) inlineAttempts() int { return positiveOr(r.InlineAttempts, 5) }

func (r *SyncRelay) backoffStart() time.Duration { return positiveOr(r.BackoffStart, 2*time.Second) }

func (r *SyncRelay) deadLetterWait() time.Duration {
	return positiveOr(r.DeadLetterWait, 20*time.Minute)
}

func (r *SyncRelay) deadLetterMax() int { return positiveOr(r.DeadLetterMax, 5) }

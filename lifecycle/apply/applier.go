// Package apply turns inbox events into contact state inside one Postgres
// transaction per contact: identity resolution, the stage decision, field
// provenance, stage history, dead letters and the transactional outbox.
package apply

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"sort"
	"sync"
	"time"

	"github.com/leadgate/leadgate/internal/failpoint"
	"github.com/leadgate/leadgate/models"
)

// Rescheduler enqueues an event's apply task again after a delay.
type Rescheduler interface {
	EnqueueApplyIn(ctx context.Context, eventID string, delay time.Duration) error
}

// Applier applies events. Serialization per contact comes from Postgres
// (transaction advisory locks on identity keys plus a NOWAIT row lock), so it
// holds across goroutines, processes and hosts.
type Applier struct {
	Store *models.Store
	Queue Rescheduler
	Log   *slog.Logger
	// WaitAttempts is how often an event that needs a missing record is retried
	// before it is dead-lettered (default 5).
	WaitAttempts int
	// PoisonAttempts is how many failed runs dead-letter an event (default 5).
	PoisonAttempts int
	// Batch caps how many pending events of one contact one run applies.
	Batch int
	Now   func() time.Time
	// Hydrator fetches id-only leads from their provider (nil: they wait).
	Hydrator Hydrator
	// Guards suppress CRM echoes and hold runaway contacts (zero: off).
	Guards Guards
	// Failpoints stop the process at named points (failure-boundary tests; nil: none).
	Failpoints *failpoint.Set

	// parsed caches decoded rule sets by workspace and version: the version
	// is read in every run, the JSON decoded only when it changes.
	parsed sync.Map // rulesKey -> lifecycle.Rules
}

// BusyError means the event cannot proceed right now and its task should run
// again after RetryAfter: another worker holds the contact (the worker never
// waits on a lock), or the event waits for a record or for its retry time.
// It is not a failure: the queue must not count it against the task's retries
// (the apply step counts its own attempts in the event row).
type BusyError struct {
	Delay time.Duration
	// Why is "" for lock contention, else what the event waits for.
	Why string
}

func (e *BusyError) Error() string {
	if e.Why != "" {
		return "apply: " + e.Why + "; retry in " + e.Delay.String()
	}
	return "apply: contact busy; retry in " + e.Delay.String()
}

// RetryAfter tells the queue when to retry.
func (e *BusyError) RetryAfter() time.Duration { return e.Delay }

func busy() error {
	return &BusyError{Delay: time.Duration(50+rand.IntN(200)) * time.Millisecond}
}

// FailedError is a failed run that will be retried after RetryAfter (backoff
// from 2 s). Unlike BusyError it is a failure: it counts toward
// PoisonAttempts, after which the event is dead-lettered.
type FailedError struct {
	Cause error
	Delay time.Duration
}

func (e *FailedError) Error() string {
	return "apply failed (retry in " + e.Delay.String() + "): " + e.Cause.Error()
}

// Unwrap returns the cause.
func (e *FailedError) Unwrap() error { return e.Cause }

// RetryAfter tells the queue when to retry.
func (e *FailedError) RetryAfter() time.Duration { return e.Delay }

// notDueSlack lets a task that fires a little early proceed instead of
// bouncing for a few milliseconds.
const notDueSlack = 100 * time.Millisecond

// Apply processes one event and, in the same transaction, the other pending
// events of its contact in occurred_at order. Re-running it for an applied
// event changes nothing. An event that is not due yet (waiting for a record,
// or for the retry after a failure) comes back as a *BusyError carrying the
// delay, so the task itself is the scheduled retry.
func (a *Applier) Apply(ctx context.Context, eventID string) error {
	ev, err := a.Store.EventByID(ctx, eventID)
	if errors.Is(err, models.ErrNotFound) {
		return nil // retention removed it, or a test database was dropped
	}
	if err != nil {
		return err
	}
	if ev.Resolved() {
		return nil
	}
	if err := a.notDue(ev); err != nil {
		return err
	}
	if len(ev.Hydration) > 0 && ev.Email == nil && ev.Phone == nil {
		hydrated, ok, err := a.hydrate(ctx, ev)
		if err != nil || !ok {
			return err
		}
		ev = hydrated
	}
	email, phone := a.contactIdentity(ctx, ev)
	var later []delayed
	var own *BusyError
	err = a.Store.Tx(ctx, func(tx *models.Store) error {
		if err := lockKeys(ctx, tx, ev.WorkspaceID, email, phone); err != nil {
			return err
		}
		batch, err := tx.EventsPendingForIdentity(ctx, ev.WorkspaceID, email, phone, a.batch())
		if err != nil {
			return err
		}
		// The event as it is now, under the locks: a peer's run may have
		// applied or rescheduled it since it was read above.
		cur, found := findEvent(batch, ev.ID)
		if !found {
			if cur, err = tx.EventByID(ctx, ev.ID); err != nil {
				return err
			}
			if cur.Resolved() {
				return nil
			}
			batch = append(batch, cur) // outside the widened identity, or beyond the batch size
		}
		if err := a.notDue(cur); err != nil {
			own = err.(*BusyError)
			return nil
		}
		ev = cur
		rules, err := a.rules(ctx, tx, ev.WorkspaceID)
		if err != nil {
			return err
		}
		run := &applyRun{a: a, tx: tx, rules: rules, sources: map[int64]models.Source{}, later: &later}
		for _, e := range batch {
			if e.ID == ev.ID {
				// No savepoint: its failure rolls back the whole run.
				if err := run.applyOne(ctx, e); err != nil {
					if errors.Is(err, models.ErrBusy) {
						return busy()
					}
					return err
				}
				continue
			}
			if e.NextAttemptAt != nil && e.NextAttemptAt.After(a.now()) {
				continue // waiting for its own retry time
			}
			err := tx.Tx(ctx, func(sp *models.Store) error { return run.withStore(sp).applyOne(ctx, e) })
			if errors.Is(err, models.ErrBusy) || errors.As(err, new(*BusyError)) {
				return busy()
			}
			if err != nil {
				a.Log.Warn("apply: pending peer failed; it will be retried by its own task", "event", e.ID, "err", err)
			}
		}
		a.Failpoints.Hit(failpoint.ApplyBeforeCommit)
		return nil
	})
	if err != nil {
		if errors.As(err, new(*BusyError)) {
			return err
		}
		return a.recordFailure(ctx, ev, err)
	}
	a.Failpoints.Hit(failpoint.ApplyAfterCommit)
	if own != nil {
		return own
	}
	for _, d := range later {
		if d.eventID == ev.ID {
			// This task is the event's retry: asynq reschedules it (a new
			// task under the same id would collide with this running one).
			own = &BusyError{Delay: d.delay, Why: "waiting for a record"}
			continue
		}
		if err := a.Queue.EnqueueApplyIn(ctx, d.eventID, d.delay); err != nil {
			a.Log.Warn("apply: re-enqueue failed; the sweep will retry", "event", d.eventID, "err", err)
		}
	}
	if own != nil {
		return own
	}
	return nil
}

// notDue reports an event whose next attempt lies in the future.
func (a *Applier) notDue(ev models.Event) error {
	if ev.NextAttemptAt == nil {
		return nil
	}
	if wait := ev.NextAttemptAt.Sub(a.now()); wait > notDueSlack {
		return &BusyError{Delay: wait, Why: "not due yet (status " + ev.Status + ")"}
	}
	return nil
}

// contactIdentity widens the event's identity to its contact's: an email-only
// reply and a phone-only call of one person then lock the same keys and are
// applied in one ordered batch.
func (a *Applier) contactIdentity(ctx context.Context, ev models.Event) (email, phone string) {
	email, phone = deref(ev.Email), deref(ev.Phone)
	byEmail, byPhone, err := a.Store.ContactsByIdentity(ctx, ev.WorkspaceID, email, phone)
	if err != nil {
		return email, phone // a read error the transaction will meet again
	}
	c := byEmail // email first, as identity resolution does
	if c == nil {
		c = byPhone
	}
	if c == nil {
		return email, phone // no contact yet
	}
	if email == "" {
		email = deref(c.Email)
	}
	if phone == "" {
		phone = deref(c.Phone)
	}
	return email, phone
}

// lockIdentity takes the locks of one event's own identity keys.
func lockIdentity(ctx context.Context, tx *models.Store, ev models.Event) error {
	return lockKeys(ctx, tx, ev.WorkspaceID, deref(ev.Email), deref(ev.Phone))
}

// lockKeys takes transaction advisory locks on identity keys in sorted order
// with try-lock semantics: a held key means "retry soon", never a wait.
func lockKeys(ctx context.Context, tx *models.Store, workspaceID int64, email, phone string) error {
	var keys []string
	if email != "" {
		keys = append(keys, fmt.Sprintf("lg:%d:e:%s", workspaceID, email))
	}
	if phone != "" {
		keys = append(keys, fmt.Sprintf("lg:%d:p:%s", workspaceID, phone))
	}
	sort.Strings(keys)
	ok, err := tx.TryAdvisoryXactLocks(ctx, keys) // one round trip; try-locks cannot deadlock
	if err != nil {
		return err
	}
	if !ok {
		return busy()
	}
	return nil
}

// recordFailure counts a failed run; after PoisonAttempts the event is
// dead-lettered so its contact's later events proceed. Before that it answers
// a *FailedError whose delay backs off from 2 s. A run cut short by its own
// context (shutdown, kill) is not the event's fault and is not counted. The
// event is only touched while still unresolved: a peer's run may have applied
// it since the failed transaction rolled back.
func (a *Applier) recordFailure(ctx context.Context, ev models.Event, cause error) error {
	if ctx.Err() != nil {
		return cause
	}
	attempts := ev.Attempts + 1
	if attempts < a.poisonAttempts() {
		delay := failureDelay(attempts)
		next := a.now().Add(delay)
		if _, err := a.Store.EventSetOutcomeIfUnresolved(ctx, ev.ID, models.EventOutcome{Status: models.EventRetrying,
			Reason: cause.Error(), Attempts: attempts, NextAttemptAt: &next}); err != nil {
			a.Log.Warn("apply: record failed attempt", "event", ev.ID, "err", err)
		}
		return &FailedError{Cause: cause, Delay: delay}
	}
	reason := fmt.Sprintf("apply failed %d times: %v", attempts, cause)
	err := a.Store.Tx(ctx, func(tx *models.Store) error {
		marked, err := tx.EventSetOutcomeIfUnresolved(ctx, ev.ID, models.EventOutcome{Status: models.EventQuarantined, Reason: reason, Attempts: attempts})
		if err != nil || !marked {
			return err
		}
		dlID, err := tx.DeadLetterAdd(ctx, models.DeadLetter{WorkspaceID: ev.WorkspaceID, Kind: "apply_failed", Reason: reason,
			EventID: &ev.ID, SourceID: &ev.SourceID, Payload: eventPayload(ev), Attempts: attempts})
		if err != nil {
			return err
		}
		return addAlert(ctx, tx, ev, nil, dlID, "apply_failed", reason)
	})
	if err != nil {
		return fmt.Errorf("apply: dead-letter poisoned event %s: %w (after %v)", ev.ID, err, cause)
	}
	a.Log.Error("apply: event dead-lettered after repeated failures", "event", ev.ID, "err", cause)
	return nil
}

// failureDelay is the backoff after the n-th failed run: 2 s, 4 s, 8 s ...
// capped at 256 s.
func failureDelay(n int) time.Duration {
	if n > 8 {
		n = 8
	}
	return 2 * time.Second << (n - 1)
}

func findEvent(batch []models.Event, id string) (models.Event, bool) {
	for _, e := range batch {
		if e.ID == id {
			return e, true
		}
	}
	return models.Event{}, false
}

func (a *Applier) now() time.Time {
	if a.Now != nil {
		return a.Now()
	}
	return time.Now().UTC()
}

func (a *Applier) batch() int {
	if a.Batch > 0 {
		return a.Batch
	}
	return 50
}

func (a *Applier) poisonAttempts() int {
	if a.PoisonAttempts > 0 {
		return a.PoisonAttempts
	}
	return 5
}

func (a *Applier) waitAttempts() int {
	if a.WaitAttempts > 0 {
		return a.WaitAttempts
	}
	return 5
}

// waitDelay is 1.5 s for the first retry, then exponential from 2 s.
func waitDelay(attempt int) time.Duration {
	if attempt <= 1 {
		return 1500 * time.Millisecond
	}
	return 2 * time.Second << (attempt - 2)
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

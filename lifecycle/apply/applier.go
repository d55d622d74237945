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
	"time"

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
}

// BusyError means another worker holds the contact; retry after RetryAfter.
// It is not a failure: the worker never waits on a lock.
type BusyError struct{ Delay time.Duration }

func (e *BusyError) Error() string { return "apply: contact busy; retry in " + e.Delay.String() }

// RetryAfter tells the queue when to retry.
func (e *BusyError) RetryAfter() time.Duration { return e.Delay }

func busy() error {
	return &BusyError{Delay: time.Duration(50+rand.IntN(200)) * time.Millisecond}
}

// Apply processes one event and, in the same transaction, the other pending
// events of its contact in occurred_at order. Re-running it for an applied
// event changes nothing.
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
	if ev.NextAttemptAt != nil && ev.NextAttemptAt.After(a.now().Add(time.Second)) {
		return nil // a later task is scheduled for it
	}
	if len(ev.Hydration) > 0 && ev.Email == nil && ev.Phone == nil {
		return a.awaitHydration(ctx, ev)
	}
	email, phone := a.contactIdentity(ctx, ev)
	var later []delayed
	err = a.Store.Tx(ctx, func(tx *models.Store) error {
		if err := lockKeys(ctx, tx, ev.WorkspaceID, email, phone); err != nil {
			return err
		}
		rules, err := loadRules(ctx, tx, ev.WorkspaceID)
		if err != nil {
			return err
		}
		batch, err := tx.EventsPendingForIdentity(ctx, ev.WorkspaceID, email, phone, a.batch())
		if err != nil {
			return err
		}
		batch = ensureIncluded(batch, ev)
		run := &applyRun{a: a, tx: tx, rules: rules, sources: map[int64]models.Source{}}
		for _, e := range batch {
			if e.NextAttemptAt != nil && e.ID != ev.ID && e.NextAttemptAt.After(a.now()) {
				continue // waiting for its own retry time
			}
			err := tx.Tx(ctx, func(sp *models.Store) error { return run.withStore(sp).applyOne(ctx, e) })
			if errors.Is(err, models.ErrBusy) || errors.As(err, new(*BusyError)) {
				return busy()
			}
			if err != nil {
				if e.ID == ev.ID {
					return err
				}
				a.Log.Warn("apply: pending peer failed; it will be retried by its own task", "event", e.ID, "err", err)
			}
		}
		later = run.later
		return nil
	})
	if err != nil {
		if errors.As(err, new(*BusyError)) {
			return err
		}
		return a.recordFailure(ctx, ev, err)
	}
	for _, d := range later {
		if err := a.Queue.EnqueueApplyIn(ctx, d.eventID, d.delay); err != nil {
			a.Log.Warn("apply: re-enqueue failed; the sweep will retry", "event", d.eventID, "err", err)
		}
	}
	return nil
}

// contactIdentity widens the event's identity to its contact's: an email-only
// reply and a phone-only call of one person then lock the same keys and are
// applied in one ordered batch.
func (a *Applier) contactIdentity(ctx context.Context, ev models.Event) (email, phone string) {
	email, phone = deref(ev.Email), deref(ev.Phone)
	var c models.Contact
	var err error
	switch {
	case email != "":
		c, err = a.Store.ContactFindByEmail(ctx, ev.WorkspaceID, email)
	case phone != "":
		c, err = a.Store.ContactFindByPhone(ctx, ev.WorkspaceID, phone)
	default:
		return email, phone
	}
	if err != nil {
		return email, phone // no contact yet (or a read error the transaction will meet again)
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
	for _, k := range keys {
		ok, err := tx.TryAdvisoryXactLock(ctx, k)
		if err != nil {
			return err
		}
		if !ok {
			return busy()
		}
	}
	return nil
}

// recordFailure counts a failed run; after PoisonAttempts the event is
// dead-lettered so its contact's later events proceed.
func (a *Applier) recordFailure(ctx context.Context, ev models.Event, cause error) error {
	attempts := ev.Attempts + 1
	if attempts < a.poisonAttempts() {
		next := a.now().Add(time.Duration(attempts) * 2 * time.Second)
		_ = a.Store.EventSetOutcome(ctx, ev.ID, models.EventOutcome{Status: models.EventRetrying, Reason: cause.Error(), Attempts: attempts, NextAttemptAt: &next})
		return cause
	}
	err := a.Store.Tx(ctx, func(tx *models.Store) error {
		reason := fmt.Sprintf("apply failed %d times: %v", attempts, cause)
		if _, err := tx.DeadLetterAdd(ctx, models.DeadLetter{WorkspaceID: ev.WorkspaceID, Kind: "apply_failed", Reason: reason,
			EventID: &ev.ID, SourceID: &ev.SourceID, Payload: eventPayload(ev), Attempts: attempts}); err != nil {
			return err
		}
		return tx.EventSetOutcome(ctx, ev.ID, models.EventOutcome{Status: models.EventQuarantined, Reason: reason, Attempts: attempts})
	})
	if err != nil {
		return fmt.Errorf("apply: dead-letter poisoned event %s: %w (after %v)", ev.ID, err, cause)
	}
	a.Log.Error("apply: event dead-lettered after repeated failures", "event", ev.ID, "err", cause)
	return nil
}

// awaitHydration parks an id-only event until a provider client can fetch
// the lead; the stranded sweep picks it up again after the delay.
func (a *Applier) awaitHydration(ctx context.Context, ev models.Event) error {
	next := a.now().Add(15 * time.Minute)
	return a.Store.EventSetOutcome(ctx, ev.ID, models.EventOutcome{Status: models.EventWaiting,
		Reason:   "waiting for hydration: the payload carries only a provider id and no provider client is configured for it",
		Attempts: ev.Attempts, NextAttemptAt: &next})
}

func ensureIncluded(batch []models.Event, ev models.Event) []models.Event {
	for _, e := range batch {
		if e.ID == ev.ID {
			return batch
		}
	}
	return append(batch, ev)
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

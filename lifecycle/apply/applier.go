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
	var own error
	held := false
	rep, err := a.runBatch(ctx, func(ctx context.Context, tx *models.Store) ([]models.Event, error) {
		own, held = nil, false
		evs, err := tx.EventsLock(ctx, []string{ev.ID})
		if err != nil || len(evs) == 0 {
			held = err == nil // resolved meanwhile, or another worker holds it: told apart below
			return nil, err
		}
		// The event as it is now, under its lock: a peer's run may have
		// rescheduled it since it was read above.
		ev = evs[0]
		if err := a.notDue(ev); err != nil {
			own = err
			return nil, nil
		}
		return evs, nil
	}, func(id string) bool { return id == ev.ID })
	if err != nil {
		return a.recordFailure(ctx, ev, err)
	}
	switch {
	case own != nil:
		return own
	case held:
		cur, err := a.Store.EventByID(ctx, ev.ID)
		if err != nil || cur.Resolved() {
			return err
		}
		return busy()
	}
	switch f := rep.fates[ev.ID]; f.kind {
	case fateBusy:
		return busy()
	case fateFailed:
		if f.failed != nil {
			return f.failed
		}
		return nil
	}
	return a.enqueueLater(ctx, rep.later, ev.ID)
}

// ApplyBatch claims up to n due pending events (FOR UPDATE SKIP LOCKED: concurrent workers take disjoint
// batches), adds the other pending events of their contacts, and applies them all in one transaction. It
// returns how many events it claimed and how many of them it left for a later batch because another
// worker holds their contact.
func (a *Applier) ApplyBatch(ctx context.Context, n int) (claimed, deferred int, err error) {
	rep, err := a.runBatch(ctx, func(ctx context.Context, tx *models.Store) ([]models.Event, error) {
		return tx.EventsClaim(ctx, n, a.now())
	}, func(string) bool { return true })
	if err != nil {
		return len(rep.claimed), 0, fmt.Errorf("apply: batch of %d: %w", len(rep.claimed), err)
	}
	if err := a.enqueueLater(ctx, rep.later, ""); err != nil {
		return len(rep.claimed), 0, err
	}
	return len(rep.claimed), rep.count(fateBusy), nil
}

// enqueueLater schedules the retries of the events that wait for a record. The
// event named own is the caller's: its task is its retry (asynq reschedules it;
// a new task under the same id would collide with the running one).
func (a *Applier) enqueueLater(ctx context.Context, later []delayed, own string) error {
	var ownWait error
	for _, d := range later {
		if d.eventID == own {
			ownWait = &BusyError{Delay: d.delay, Why: "waiting for a record"}
			continue
		}
		if err := a.Queue.EnqueueApplyIn(ctx, d.eventID, d.delay); err != nil {
			a.Log.Warn("apply: re-enqueue failed; the sweep will retry", "event", d.eventID, "err", err)
		}
	}
	return ownWait
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

// recordFailure counts a failed run whose transaction rolled back; after
// PoisonAttempts the event is dead-lettered so its contact's later events
// proceed. Before that it answers a *FailedError whose delay backs off from
// 2 s. A run cut short by its own context (shutdown, kill) is not the event's
// fault and is not counted. The event is only touched while still unresolved
// and free: a peer's run may have applied it since the failed transaction
// rolled back.
func (a *Applier) recordFailure(ctx context.Context, ev models.Event, cause error) error {
	if ctx.Err() != nil || errors.As(cause, new(*BusyError)) {
		return cause
	}
	var failed *FailedError
	err := a.Store.Tx(ctx, func(tx *models.Store) error {
		cur, err := tx.EventsLock(ctx, []string{ev.ID})
		if err != nil || len(cur) == 0 {
			return err
		}
		failed, err = a.recordFailureIn(ctx, tx, cur[0], cause)
		return err
	})
	if err != nil {
		return fmt.Errorf("apply: record the failure of event %s: %w (after %v)", ev.ID, err, cause)
	}
	if failed != nil {
		return failed
	}
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

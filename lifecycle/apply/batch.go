package apply

import (
	"context"
	"errors"
	"fmt"

	"github.com/leadgate/leadgate/internal/failpoint"
	"github.com/leadgate/leadgate/lifecycle"
	"github.com/leadgate/leadgate/models"
)

// claimFunc locks the events a batch starts from, in its transaction.
type claimFunc func(ctx context.Context, tx *models.Store) ([]models.Event, error)

// fateKind is what a batch did with one of its events.
type fateKind int

const (
	fateNone   fateKind = iota // not reached
	fateDone                   // an outcome is recorded (final, or waiting for a record)
	fateBusy                   // left for a later batch: another worker holds its contact
	fateFailed                 // the run failed; recorded as a retry or a dead letter
	fateLeft                   // a peer that failed; it is retried as its own event
)

type fate struct {
	kind   fateKind
	failed *FailedError // fateFailed with a retry to come
}

// batchReport is what one batch did.
type batchReport struct {
	claimed []string
	fates   map[string]fate
	later   []delayed
	wrote   bool
}

// Resolved counts the events the batch recorded an outcome for.
func (r batchReport) count(k fateKind) int {
	n := 0
	for _, f := range r.fates {
		if f.kind == k {
			n++
		}
	}
	return n
}

func (r *batchReport) mark(evs []models.Event, k fateKind) {
	for _, e := range evs {
		r.fates[e.ID] = fate{kind: k}
	}
}

// runMode says how a batch writes.
type runMode int

const (
	setBased             runMode = iota // in memory, then one statement per table
	statementByStatement                // each event in its own savepoint, each change its own statement
)

// runBatch applies the events claim locks, plus the other pending events of their contacts. own names
// the events whose failures this batch records (the others are retried as their own events). When the
// database refuses the set-based write, the same events are applied again statement by statement, where
// a savepoint keeps each event's failure to itself.
func (a *Applier) runBatch(ctx context.Context, claim claimFunc, own func(string) bool) (batchReport, error) {
	rep, err := a.runOnce(ctx, claim, own, setBased)
	if err == nil || ctx.Err() != nil || len(rep.claimed) == 0 {
		return rep, err
	}
	a.Log.Warn("apply: the batch write was refused; applying its events one statement at a time", "events", len(rep.claimed), "err", err)
	ids := rep.claimed
	return a.runOnce(ctx, func(ctx context.Context, tx *models.Store) ([]models.Event, error) { return tx.EventsLock(ctx, ids) },
		own, statementByStatement)
}

func (a *Applier) runOnce(ctx context.Context, claim claimFunc, own func(string) bool, mode runMode) (batchReport, error) {
	var rep batchReport
	err := a.Store.Tx(ctx, func(tx *models.Store) error {
		rep = batchReport{fates: map[string]fate{}}
		if err := tx.PlanForBatch(ctx); err != nil {
			return err
		}
		claimed, err := claim(ctx, tx)
		if err != nil || len(claimed) == 0 {
			return err
		}
		for _, ev := range claimed {
			rep.claimed = append(rep.claimed, ev.ID)
		}
		p, err := a.plan(ctx, tx, claimed, a.now(), a.batch())
		if err != nil {
			return err
		}
		for _, u := range p.busy {
			rep.mark(u.events, fateBusy)
		}
		if len(p.ready) == 0 {
			return nil
		}
		bs, runs, err := a.prepare(ctx, tx, p, &rep.later)
		if err != nil {
			return err
		}
		for _, u := range p.ready {
			run := runs[u.ws]
			if mode == setBased {
				err = a.applyUnit(ctx, tx, run, bs, u, own, &rep)
			} else {
				err = a.applyUnitClassic(ctx, tx, run, u, own, &rep)
			}
			if err != nil {
				return err
			}
		}
		if mode == setBased {
			if err := bs.flush(ctx); err != nil {
				return err
			}
		}
		rep.wrote = rep.count(fateDone)+rep.count(fateFailed) > 0
		if rep.wrote {
			a.Failpoints.Hit(failpoint.ApplyBeforeCommit)
		}
		return nil
	})
	if err != nil {
		return rep, err
	}
	if rep.wrote {
		a.Failpoints.Hit(failpoint.ApplyAfterCommit)
	}
	return rep, nil
}

// prepare reads what the ready units need (their rules, sources, and the stored observations and
// applied event types of their contacts) and makes one run per workspace.
func (a *Applier) prepare(ctx context.Context, tx *models.Store, p *batchPlan, later *[]delayed) (*batchStore, map[int64]*applyRun, error) {
	runs := map[int64]*applyRun{}
	var sourceIDs []int64
	seenSource := map[int64]bool{}
	eventTypes := map[string]string{}
	scores := false
	for _, u := range p.ready {
		if runs[u.ws] == nil {
			rules, err := a.rules(ctx, tx, u.ws)
			if err != nil {
				return nil, nil, err
			}
			runs[u.ws] = &applyRun{a: a, rules: rules, sources: map[int64]models.Source{}, later: later}
			scores = scores || rulesScore(rules)
		}
		for _, ev := range u.events {
			if !seenSource[ev.SourceID] {
				seenSource[ev.SourceID] = true
				sourceIDs = append(sourceIDs, ev.SourceID)
			}
			eventTypes[ev.ID] = ev.EventType
		}
	}
	sources, err := tx.SourcesByID(ctx, sourceIDs)
	if err != nil {
		return nil, nil, err
	}
	for id, src := range sources {
		if run := runs[src.WorkspaceID]; run != nil {
			run.sources[id] = src
		}
	}
	contactIDs := make([]string, len(p.contacts))
	for i, c := range p.contacts {
		contactIDs[i] = c.ID
	}
	bs := newBatchStore(tx, p.contacts, p.known, sources, later)
	bs.eventTypes = eventTypes
	if bs.storedObs, err = tx.ObservationsForContacts(ctx, contactIDs); err != nil {
		return nil, nil, err
	}
	if scores {
		if bs.storedTypes, err = tx.ContactsAppliedEventTypes(ctx, contactIDs); err != nil {
			return nil, nil, err
		}
	}
	for _, run := range runs {
		run.tx = bs
	}
	return bs, runs, nil
}

// applyUnit applies a unit's events in order, in memory. An event that fails is undone and recorded as
// failed; the events after it go on. A unit that needs the statement-by-statement path (a merge) is
// undone and applied that way instead.
func (a *Applier) applyUnit(ctx context.Context, tx *models.Store, run *applyRun, bs *batchStore, u *unit, own func(string) bool, rep *batchReport) error {
	start := bs.mark()
	for i, ev := range u.events {
		m := bs.mark()
		err := run.applyOne(ctx, ev)
		switch {
		case err == nil:
			rep.fates[ev.ID] = fate{kind: fateDone}
		case errors.Is(err, errClassic):
			bs.rollback(start)
			rep.mark(u.events, fateNone)
			return a.applyUnitClassic(ctx, tx, run.withStore(tx), u, own, rep)
		case isBusy(err):
			bs.rollback(m)
			rep.mark(u.events[i:], fateBusy) // in order: nothing after it goes first
			return nil
		default:
			if ctx.Err() != nil {
				return ctx.Err()
			}
			bs.rollback(m)
			if err := a.failed(ctx, bs, ev, err, own, rep); err != nil {
				return err
			}
		}
	}
	return nil
}

// applyUnitClassic applies a unit's events one statement at a time, each event in a savepoint.
func (a *Applier) applyUnitClassic(ctx context.Context, tx *models.Store, run *applyRun, u *unit, own func(string) bool, rep *batchReport) error {
	for i, ev := range u.events {
		err := tx.Tx(ctx, func(sp *models.Store) error { return run.withStore(sp).applyOne(ctx, ev) })
		switch {
		case err == nil:
			rep.fates[ev.ID] = fate{kind: fateDone}
		case isBusy(err):
			rep.mark(u.events[i:], fateBusy)
			return nil
		default:
			if ctx.Err() != nil {
				return ctx.Err()
			}
			if err := a.failed(ctx, tx, ev, err, own, rep); err != nil {
				return err
			}
		}
	}
	return nil
}

func isBusy(err error) bool {
	return errors.Is(err, models.ErrBusy) || errors.As(err, new(*BusyError))
}

// failed records a failed run of an event this batch owns; a peer's failure is left to its own run.
func (a *Applier) failed(ctx context.Context, st applyStore, ev models.Event, cause error, own func(string) bool, rep *batchReport) error {
	if !own(ev.ID) {
		a.Log.Warn("apply: pending peer failed; it will be retried by its own task", "event", ev.ID, "err", cause)
		rep.fates[ev.ID] = fate{kind: fateLeft}
		return nil
	}
	f, err := a.recordFailureIn(ctx, st, ev, cause)
	rep.fates[ev.ID] = fate{kind: fateFailed, failed: f}
	return err
}

// recordFailureIn counts a failed run of a locked, unresolved event; after PoisonAttempts it is
// dead-lettered so its contact's later events proceed, otherwise it is retried after a backoff from 2 s
// (the returned *FailedError carries the delay).
func (a *Applier) recordFailureIn(ctx context.Context, st applyStore, ev models.Event, cause error) (*FailedError, error) {
	attempts := ev.Attempts + 1
	if attempts < a.poisonAttempts() {
		delay := failureDelay(attempts)
		next := a.now().Add(delay)
		err := st.EventSetOutcome(ctx, ev.ID, models.EventOutcome{Status: models.EventRetrying, Reason: cause.Error(), Attempts: attempts, NextAttemptAt: &next})
		return &FailedError{Cause: cause, Delay: delay}, err
	}
	reason := fmt.Sprintf("apply failed %d times: %v", attempts, cause)
	dlID, err := st.DeadLetterAdd(ctx, models.DeadLetter{WorkspaceID: ev.WorkspaceID, Kind: "apply_failed", Reason: reason,
		EventID: &ev.ID, SourceID: &ev.SourceID, Payload: eventPayload(ev), Attempts: attempts})
	if err != nil {
		return nil, err
	}
	if err := addAlert(ctx, st, ev, nil, dlID, "apply_failed", reason); err != nil {
		return nil, err
	}
	if err := st.EventSetOutcome(ctx, ev.ID, models.EventOutcome{Status: models.EventQuarantined, Reason: reason, Attempts: attempts}); err != nil {
		return nil, err
	}
	a.Log.Error("apply: event dead-lettered after repeated failures", "event", ev.ID, "err", cause)
	return nil, nil
}

// rulesScore reports whether rules compute a score (which reads a contact's applied events).
func rulesScore(r lifecycle.Rules) bool {
	return len(r.Score.EventPoints) > 0 || len(r.Score.FieldPoints) > 0
}

package apply

import (
	"context"
	"errors"
	"fmt"
	"strconv"

	"github.com/leadgate/leadgate/models"
)

// Bulk dead-letter actions.
const (
	BulkReplay  = "replay"
	BulkDiscard = "discard"
)

// MaxBulkDeadLetters caps one "act on all matching": a larger selection is
// refused whole, so the operator narrows the filter rather than getting half.
const MaxBulkDeadLetters = 10000

// BulkDeadLetters is an action on every open dead letter a filter selects.
type BulkDeadLetters struct {
	Filter models.DeadLetterFilter
	Action string // BulkReplay or BulkDiscard
	Mode   ReplayMode
	Stage  string
	Note   string
	// ResetBreaker resets the filter's contact's circuit breaker first (a
	// loop group), so the contact's next events flow again.
	ResetBreaker bool
}

// BulkFailure is one dead letter the action left open, and why.
type BulkFailure struct {
	ID      int64  `json:"id"`
	Message string `json:"message"`
}

// BulkResult says what an action on all matching dead letters did.
type BulkResult struct {
	Matched      int           `json:"matched"`
	Done         int           `json:"done"`
	Events       int           `json:"events"` // events replayed or discarded with them
	Failed       []BulkFailure `json:"failed"`
	BreakerReset bool          `json:"breaker_reset"`
}

// ActOnDeadLetters replays (with one mode for all) or discards every open
// dead letter the filter selects, in one transaction that writes one audit
// entry with the filter and the counts. A dead letter that cannot be done
// (its contact busy, nothing to replay) stays open and is listed; the others
// are done all the same.
func (a *Applier) ActOnDeadLetters(ctx context.Context, b BulkDeadLetters, actor string) (BulkResult, error) {
	res := BulkResult{Failed: []BulkFailure{}}
	b.Filter.Status = models.DeadLetterOpen
	if err := b.validate(); err != nil {
		return res, err
	}
	if b.Action == BulkReplay && b.Mode == ReplayForceStage {
		rules, err := loadRules(ctx, a.Store, b.Filter.WorkspaceID)
		if err != nil {
			return res, err
		}
		if _, ok := rules.Canonical(b.Stage); !ok {
			return res, &OperatorError{Field: "stage", Message: fmt.Sprintf("unknown stage %q", b.Stage)}
		}
	}
	ids, err := a.Store.DeadLetterIDs(ctx, b.Filter, MaxBulkDeadLetters+1)
	if err != nil {
		return res, err
	}
	if len(ids) > MaxBulkDeadLetters {
		return res, &OperatorError{Field: "filter", Message: fmt.Sprintf("more than %d dead letters match; narrow the filter", MaxBulkDeadLetters)}
	}
	res.Matched = len(ids)
	if b.Action == BulkReplay {
		// An id-only event's lead is fetched again first, outside the
		// transaction (a provider call); one that still fails stays open.
		kept := ids[:0]
		for _, id := range ids {
			if err := a.rehydrateForReplay(ctx, b.Filter.WorkspaceID, id); err != nil {
				if msg, ok := bulkItemError(err); ok {
					res.Failed = append(res.Failed, BulkFailure{ID: id, Message: msg})
					continue
				}
				return res, err
			}
			kept = append(kept, id)
		}
		ids = kept
	}
	var later []delayed
	err = a.Store.Tx(ctx, func(tx *models.Store) error {
		rules, err := loadRules(ctx, tx, b.Filter.WorkspaceID)
		if err != nil {
			return err
		}
		if b.ResetBreaker {
			_, err := tx.BreakerResetRow(ctx, b.Filter.WorkspaceID, b.Filter.ContactID, actor)
			switch {
			case err == nil:
				res.BreakerReset = true
			case !errors.Is(err, models.ErrNotFound): // not tripped (any more): nothing to reset
				return err
			}
		}
		for _, id := range ids {
			var mine []delayed
			var events int
			// Each dead letter in a savepoint: one that fails is rolled back alone.
			err := tx.Tx(ctx, func(tx *models.Store) error {
				dl, err := tx.DeadLetterLock(ctx, b.Filter.WorkspaceID, id)
				if err != nil {
					return err
				}
				events = max(len(dl.HeldEvents()), 1)
				if b.Action == BulkDiscard {
					return tx.DeadLetterResolve(ctx, dl.ID, models.DeadLetterDiscarded, actor, b.Note)
				}
				if len(dl.HeldEvents()) == 0 {
					_, err := tx.SyncReplayLocked(ctx, dl, actor)
					if errors.Is(err, models.ErrNotCRMDeadLetter) {
						return &OperatorError{Field: "id", Message: "nothing to replay; discard it once handled"}
					}
					return err
				}
				_, _, err = a.replayLocked(ctx, tx, rules, dl, b.Mode, b.Stage, actor, &mine)
				return err
			})
			if err != nil {
				if msg, ok := bulkItemError(err); ok {
					res.Failed = append(res.Failed, BulkFailure{ID: id, Message: msg})
					continue
				}
				return err
			}
			later = append(later, mine...)
			res.Done++
			res.Events += events
		}
		after := map[string]any{"done": res.Done, "events": res.Events, "failed": len(res.Failed), "breaker_reset": res.BreakerReset}
		if b.Action == BulkReplay {
			after["mode"], after["stage"] = b.Mode, b.Stage
		} else {
			after["note"] = b.Note
		}
		return tx.AuditRecord(ctx, models.Audit{WorkspaceID: b.Filter.WorkspaceID, Actor: actor, Action: "dead_letter.bulk_" + b.Action,
			SubjectType: "dead_letter", SubjectID: "filter", Before: map[string]any{"filter": b.Filter, "matched": res.Matched}, After: after})
	})
	if err != nil {
		return BulkResult{Failed: []BulkFailure{}}, err
	}
	if res.BreakerReset && a.Guards.Breaker != nil {
		if err := a.Guards.Breaker.Clear(ctx, b.Filter.WorkspaceID, b.Filter.ContactID); err != nil {
			return res, fmt.Errorf("apply: breaker reset recorded, but its Redis count could not be cleared; reset it again: %w", err)
		}
	}
	a.scheduleLater(ctx, later)
	return res, nil
}

func (b BulkDeadLetters) validate() error {
	switch {
	case b.Action != BulkReplay && b.Action != BulkDiscard:
		return &OperatorError{Field: "action", Message: "action must be replay or discard"}
	case b.Action == BulkReplay && !ValidReplayMode(b.Mode):
		return &OperatorError{Field: "mode", Message: "mode must be apply_as_is, apply_fields_keep_stage or force_stage"}
	case b.Action == BulkReplay && b.Mode == ReplayForceStage && b.Stage == "":
		return &OperatorError{Field: "stage", Message: "pick the stage to force"}
	case b.ResetBreaker && b.Filter.ContactID == "":
		return &OperatorError{Field: "contact", Message: "resetting the breaker needs the contact the dead letters are about"}
	case b.ResetBreaker && b.Action != BulkReplay:
		return &OperatorError{Field: "action", Message: "the breaker is reset only before a replay"}
	}
	return nil
}

// bulkItemError tells a dead letter's own failure (it stays open and is
// listed) from a failure of the whole action.
func bulkItemError(err error) (string, bool) {
	var oe *OperatorError
	switch {
	case errors.As(err, &oe):
		return oe.Message, true
	case errors.Is(err, models.ErrNotFound):
		return "already resolved", true
	case errors.As(err, new(*BusyError)), errors.Is(err, models.ErrBusy):
		return "its contact is being updated right now; try again in a moment", true
	}
	return "", false
}

// BulkFailureText lists failures for a message, at most n of them.
func BulkFailureText(f []BulkFailure, n int) string {
	out := ""
	for i, x := range f {
		if i == n {
			out += "; and " + strconv.Itoa(len(f)-n) + " more"
			break
		}
		if i > 0 {
			out += "; "
		}
		out += "#" + strconv.FormatInt(x.ID, 10) + ": " + x.Message
	}
	return out
}

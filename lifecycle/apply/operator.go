package apply

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/leadgate/leadgate/lifecycle"
	"github.com/leadgate/leadgate/models"
)

// ReplayMode is the operator's choice when replaying a quarantined event.
type ReplayMode string

// Replay modes.
const (
	ReplayAsIs       ReplayMode = "apply_as_is" // decide again under the current rules
	ReplayKeepStage  ReplayMode = "apply_fields_keep_stage"
	ReplayForceStage ReplayMode = "force_stage" // set the stage the operator names
)

// ValidReplayMode reports whether m is a known mode.
func ValidReplayMode(m ReplayMode) bool {
	return m == ReplayAsIs || m == ReplayKeepStage || m == ReplayForceStage
}

// OperatorError is a request the operator can fix (unknown stage, wrong
// dead-letter kind...). Handlers answer 4xx with it.
type OperatorError struct {
	Field, Message string
	Conflict       bool // 409 rather than 400
}

func (e *OperatorError) Error() string { return e.Message }

// applyOverride bends a decision to the operator's replay choice.
func (r *applyRun) applyOverride(rules lifecycle.Rules, lc lifecycle.Contact, p lifecycle.Proposal, d lifecycle.Decision) lifecycle.Decision {
	switch r.override {
	case ReplayKeepStage:
		return lifecycle.Decision{Outcome: lifecycle.Unchanged, ApplyFields: true, Stage: d.Stage,
			Reason: "replayed by " + r.actor() + ": fields applied, stage kept"}
	case ReplayForceStage:
		return lifecycle.Decision{Outcome: lifecycle.Applied, ApplyFields: true, NewStage: r.forceTo, EnteredAt: r.a.now(),
			Stage: lifecycle.Forward, Reason: "replayed by " + r.actor() + ": stage forced to " + r.forceTo}
	}
	return d
}

// ReplayDeadLetter re-applies a quarantined event with the operator's choice
// (every event, for a loop dead letter holding many).
// The dead letter is closed first, so a replay that fails again opens a new one.
// An id-only event's lead is fetched from its provider again first; while
// that fails, the dead letter stays open and nothing is applied.
func (a *Applier) ReplayDeadLetter(ctx context.Context, workspaceID, id int64, mode ReplayMode, stage, actor string) (models.Event, error) {
	var out models.Event
	if err := a.rehydrateForReplay(ctx, workspaceID, id); err != nil {
		return out, err
	}
	var later []delayed
	err := a.Store.Tx(ctx, func(tx *models.Store) error {
		dl, err := tx.DeadLetterLock(ctx, workspaceID, id)
		if err != nil {
			return err
		}
		rules, err := loadRules(ctx, tx, workspaceID)
		if err != nil {
			return err
		}
		var forceTo string
		if out, forceTo, err = a.replayLocked(ctx, tx, rules, dl, mode, stage, actor, &later); err != nil {
			return err
		}
		return tx.AuditRecord(ctx, models.Audit{WorkspaceID: workspaceID, Actor: actor, Action: "dead_letter.replay", SubjectType: "dead_letter",
			SubjectID: strconv.FormatInt(id, 10), Before: map[string]any{"status": dl.Status, "kind": dl.Kind, "reason": dl.Reason, "events": len(dl.HeldEvents())},
			After: map[string]any{"status": models.DeadLetterReplayed, "mode": mode, "stage": forceTo, "event_status": out.Status, "event_reason": out.Reason}})
	})
	if err != nil {
		return out, err
	}
	a.scheduleLater(ctx, later)
	return out, nil
}

// scheduleLater enqueues the retries of replayed events that wait again
// (their contact is still missing): their original tasks are long gone.
func (a *Applier) scheduleLater(ctx context.Context, later []delayed) {
	for _, d := range later {
		if err := a.Queue.EnqueueApplyIn(ctx, d.eventID, d.delay); err != nil {
			a.Log.Warn("apply: re-enqueue replayed event failed; the sweep will retry", "event", d.eventID, "err", err)
		}
	}
}

// replayLocked closes a locked, open event dead letter and applies every
// event it holds, oldest first, under the operator's choice. It answers the
// last event as it now stands and the stage forced (if any); the caller audits.
func (a *Applier) replayLocked(ctx context.Context, tx *models.Store, rules lifecycle.Rules, dl models.DeadLetter, mode ReplayMode, stage, actor string,
	later *[]delayed) (models.Event, string, error) {
	var out models.Event
	held := dl.HeldEvents()
	if len(held) == 0 {
		return out, "", &OperatorError{Field: "id", Message: "dead letter " + strconv.FormatInt(dl.ID, 10) + " is not an event; it is retried by the CRM sync"}
	}
	run := &applyRun{a: a, tx: tx, rules: rules, sources: map[int64]models.Source{}, actorName: actor, override: mode, later: later}
	if mode == ReplayForceStage {
		canon, ok := rules.Canonical(stage)
		if !ok {
			return out, "", &OperatorError{Field: "stage", Message: fmt.Sprintf("unknown stage %q", stage)}
		}
		run.forceTo = canon
	}
	if err := tx.DeadLetterResolve(ctx, dl.ID, models.DeadLetterReplayed, actor, string(mode)); err != nil {
		return out, "", err
	}
	for _, eventID := range held {
		ev, err := tx.EventByID(ctx, eventID)
		if err != nil {
			return out, "", err
		}
		if err := lockIdentity(ctx, tx, ev); err != nil {
			return out, "", err
		}
		ev.Attempts = 0
		if err := run.applyOne(ctx, ev); err != nil {
			return out, "", err
		}
		if out, err = tx.EventByID(ctx, ev.ID); err != nil {
			return out, "", err
		}
	}
	return out, run.forceTo, nil
}

// DiscardDeadLetter closes a dead letter without applying anything.
func (a *Applier) DiscardDeadLetter(ctx context.Context, workspaceID, id int64, note, actor string) error {
	return a.Store.Tx(ctx, func(tx *models.Store) error {
		dl, err := tx.DeadLetterLock(ctx, workspaceID, id)
		if err != nil {
			return err
		}
		if err := tx.DeadLetterResolve(ctx, dl.ID, models.DeadLetterDiscarded, actor, note); err != nil {
			return err
		}
		return tx.AuditRecord(ctx, models.Audit{WorkspaceID: workspaceID, Actor: actor, Action: "dead_letter.discard", SubjectType: "dead_letter",
			SubjectID: strconv.FormatInt(id, 10), Before: map[string]any{"status": dl.Status, "kind": dl.Kind, "reason": dl.Reason},
			After: map[string]any{"status": models.DeadLetterDiscarded, "note": note}})
	})
}

// CorrectField records a human correction: the highest-precedence value,
// which later enrichment never overwrites.
func (a *Applier) CorrectField(ctx context.Context, workspaceID int64, contactID, field, value, actor string) (models.Contact, error) {
	if field == "" || len(field) > 100 || field == "email" || field == "phone" || field == "phone_verified" {
		return models.Contact{}, &OperatorError{Field: "field", Message: "field must be a contact field name other than email, phone and phone_verified"}
	}
	return a.withContact(ctx, workspaceID, contactID, actor, func(run *applyRun, c *models.Contact) (string, any, any, error) {
		before := c.Fields[field]
		cid := c.ID
		if err := run.tx.ObservationsAdd(ctx, []models.Observation{{WorkspaceID: workspaceID, ContactID: cid, Field: field, Value: value,
			Source: "human", ObservedAt: a.now(), Basis: "operator", Human: true, ExplicitDelete: value == "", Actor: actor}}); err != nil {
			return "", nil, nil, err
		}
		changed, err := run.recompute(ctx, c, run.rules)
		if err != nil {
			return "", nil, nil, err
		}
		if len(changed) > 0 {
			c.Version++
			if err := run.writeIntent(ctx, c, run.rules, changes{changed: true, fields: changed}, ""); err != nil {
				return "", nil, nil, err
			}
		}
		return "contact.correct_field", map[string]string{field: before}, map[string]string{field: c.Fields[field]}, nil
	})
}

// SetStage moves a contact to a stage by hand, with a reason.
func (a *Applier) SetStage(ctx context.Context, workspaceID int64, contactID, stage, reason, actor string) (models.Contact, error) {
	if reason == "" {
		return models.Contact{}, &OperatorError{Field: "reason", Message: "a reason is required for a manual stage change"}
	}
	return a.withContact(ctx, workspaceID, contactID, actor, func(run *applyRun, c *models.Contact) (string, any, any, error) {
		canon, ok := run.rules.Canonical(stage)
		if !ok {
			return "", nil, nil, &OperatorError{Field: "stage", Message: fmt.Sprintf("unknown stage %q", stage)}
		}
		before := c.Stage
		if canon == c.Stage {
			return "contact.set_stage", map[string]string{"stage": before}, map[string]string{"stage": canon}, nil
		}
		now := a.now()
		if err := run.tx.StageHistoryAdd(ctx, models.StageChange{WorkspaceID: workspaceID, ContactID: c.ID, FromStage: before, ToStage: canon,
			RuleVersion: run.rules.Version, Actor: actor, Reason: reason, OccurredAt: now}); err != nil {
			return "", nil, nil, err
		}
		c.Stage, c.StageEnteredAt = canon, &now
		c.Version++
		if err := run.writeIntent(ctx, c, run.rules, changes{changed: true, enteredStage: canon}, ""); err != nil {
			return "", nil, nil, err
		}
		return "contact.set_stage", map[string]string{"stage": before}, map[string]string{"stage": canon, "reason": reason}, nil
	})
}

// MergeContacts folds loser into survivor by hand.
func (a *Applier) MergeContacts(ctx context.Context, workspaceID int64, survivorID, loserID, actor string) (models.Contact, error) {
	if survivorID == loserID {
		return models.Contact{}, &OperatorError{Field: "merge_id", Message: "a contact cannot be merged into itself"}
	}
	return a.withContact(ctx, workspaceID, survivorID, actor, func(run *applyRun, c *models.Contact) (string, any, any, error) {
		loser, err := run.tx.ContactGet(ctx, workspaceID, loserID)
		if errors.Is(err, models.ErrNotFound) || (err == nil && loser.MergedInto != nil) {
			return "", nil, nil, &OperatorError{Field: "merge_id", Message: "unknown contact " + loserID}
		}
		if err != nil {
			return "", nil, nil, err
		}
		if _, err := run.tx.ContactLockNoWait(ctx, loser.ID); err != nil {
			return "", nil, nil, err
		}
		if c.Email != nil && loser.Email != nil && *c.Email != *loser.Email && c.Phone != nil && loser.Phone != nil && *c.Phone != *loser.Phone {
			return "", nil, nil, &OperatorError{Field: "merge_id", Conflict: true, Message: "both contacts have a different email and a different phone; edit one first"}
		}
		if err := run.merge(ctx, c, &loser, "manual merge by "+actor); err != nil {
			return "", nil, nil, err
		}
		c.Version++
		if err := run.writeIntent(ctx, c, run.rules, changes{changed: true}, ""); err != nil {
			return "", nil, nil, err
		}
		return "contact.merge_manual", map[string]string{"loser": loser.ID}, map[string]string{"survivor": c.ID}, nil
	})
}

// withContact runs an operator action on a locked contact, saves it and audits.
func (a *Applier) withContact(ctx context.Context, workspaceID int64, contactID, actor string,
	fn func(run *applyRun, c *models.Contact) (action string, before, after any, err error)) (models.Contact, error) {
	var out models.Contact
	err := a.Store.Tx(ctx, func(tx *models.Store) error {
		got, err := tx.ContactGet(ctx, workspaceID, contactID)
		if err != nil {
			return err
		}
		if got.MergedInto != nil {
			return &OperatorError{Field: "id", Conflict: true, Message: "contact was merged into " + *got.MergedInto}
		}
		c, err := tx.ContactLockNoWait(ctx, got.ID)
		if errors.Is(err, models.ErrBusy) {
			return &OperatorError{Field: "id", Conflict: true, Message: "the contact is being updated right now; try again in a moment"}
		}
		if err != nil {
			return err
		}
		rules, err := loadRules(ctx, tx, workspaceID)
		if err != nil {
			return err
		}
		run := &applyRun{a: a, tx: tx, rules: rules, sources: map[int64]models.Source{}, actorName: actor}
		action, before, after, err := fn(run, &c)
		if err != nil {
			return err
		}
		c.UpdatedAt = time.Now().UTC()
		if err := tx.ContactSave(ctx, &c); err != nil {
			return err
		}
		out = c
		return tx.AuditRecord(ctx, models.Audit{WorkspaceID: workspaceID, Actor: actor, Action: action, SubjectType: "contact", SubjectID: c.ID, Before: before, After: after})
	})
	return out, err
}

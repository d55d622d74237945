package apply

import (
	"context"
	"fmt"

	"github.com/leadgate/leadgate/lifecycle"
	"github.com/leadgate/leadgate/models"
)

// identity is how an event resolved to a contact.
type identity struct {
	contact  *models.Contact // nil: no contact yet
	basis    string          // email | phone | email+phone | new
	conflict string          // non-empty: contradiction, becomes a dead letter
	merged   *models.Contact // a contact absorbed into contact by this event
}

// resolveIdentity finds the event's contact: normalized email first, then
// E.164 phone. Two matching contacts that don't contradict each other are
// merged; contradicting ones are reported as a conflict.
func (r *applyRun) resolveIdentity(ctx context.Context, ev models.Event) (identity, error) {
	byEmail, byPhone, err := r.tx.ContactsByIdentity(ctx, ev.WorkspaceID, deref(ev.Email), deref(ev.Phone))
	if err != nil {
		return identity{}, err
	}
	switch {
	case byEmail == nil && byPhone == nil:
		return identity{basis: "new"}, nil
	case byEmail != nil && byPhone != nil && byEmail.ID == byPhone.ID:
		return r.locked(ctx, identity{contact: byEmail, basis: "email+phone"})
	case byEmail != nil && byPhone == nil:
		return r.locked(ctx, identity{contact: byEmail, basis: "email"})
	case byEmail == nil:
		if byPhone.Email != nil && ev.Email != nil && *byPhone.Email != *ev.Email {
			return identity{contact: byPhone, basis: "phone", conflict: fmt.Sprintf(
				"identity conflict: phone %s belongs to contact %s with email %s, but this event has email %s (mark the phone as shared to allow it)",
				*ev.Phone, byPhone.ID, *byPhone.Email, *ev.Email)}, nil
		}
		return r.locked(ctx, identity{contact: byPhone, basis: "phone"})
	}
	// The email and the phone point at two different contacts.
	if byEmail.Phone != nil || byPhone.Email != nil {
		return identity{contact: byEmail, basis: "email", conflict: fmt.Sprintf(
			"identity conflict: email %s belongs to contact %s and phone %s to contact %s, and they contradict each other",
			*ev.Email, byEmail.ID, *ev.Phone, byPhone.ID)}, nil
	}
	id, err := r.locked(ctx, identity{contact: byEmail, basis: "email+phone"})
	if err != nil {
		return id, err
	}
	other, err := r.tx.ContactLockNoWait(ctx, byPhone.ID)
	if err != nil {
		return id, err
	}
	if err := r.merge(ctx, id.contact, &other, "auto-merge: event "+ev.ID+" links email and phone"); err != nil {
		return id, err
	}
	id.merged = &other
	return id, nil
}

// locked re-reads the resolved contact under a NOWAIT row lock.
func (r *applyRun) locked(ctx context.Context, id identity) (identity, error) {
	c, err := r.tx.ContactLockNoWait(ctx, id.contact.ID)
	if err != nil {
		return id, err
	}
	id.contact = &c
	return id, nil
}

// merge folds loser into survivor: histories move over, the survivor takes
// what it lacks, and the higher stage wins.
func (r *applyRun) merge(ctx context.Context, survivor, loser *models.Contact, why string) error {
	if err := r.tx.ContactMergeInto(ctx, loser.ID, survivor.ID); err != nil {
		return err
	}
	// Carried to the CRMs where both have a record (crm_merge side effect, same transaction).
	if err := r.tx.SyncMergeIntent(ctx, survivor.WorkspaceID, loser.ID, survivor.ID); err != nil {
		return err
	}
	if survivor.Email == nil {
		survivor.Email = loser.Email
	}
	if survivor.Phone == nil {
		survivor.Phone, survivor.PhoneVerified = loser.Phone, loser.PhoneVerified
	}
	if r.rules.Rank(loser.Stage) > r.rules.Rank(survivor.Stage) {
		// The survivor takes the higher stage; its history says so.
		at := r.a.now()
		if loser.StageEnteredAt != nil {
			at = *loser.StageEnteredAt
		}
		if err := r.tx.StageHistoryAdd(ctx, models.StageChange{WorkspaceID: survivor.WorkspaceID, ContactID: survivor.ID,
			FromStage: survivor.Stage, ToStage: loser.Stage, RuleVersion: r.rules.Version, Actor: r.actor(),
			Reason: why + ": takes the merged contact's stage", OccurredAt: at}); err != nil {
			return err
		}
		survivor.Stage, survivor.StageEnteredAt = loser.Stage, loser.StageEnteredAt
	}
	survivor.Fields = lifecycle.FirstTouch(survivor.Fields, loser.Fields)
	// First touch belongs to whichever contact was seen first.
	if loser.FirstSeenAt.Before(survivor.FirstSeenAt) {
		survivor.FirstTouch = lifecycle.FirstTouch(loser.FirstTouch, survivor.FirstTouch)
	} else {
		survivor.FirstTouch = lifecycle.FirstTouch(survivor.FirstTouch, loser.FirstTouch)
	}
	survivor.Tags = unionTags(survivor.Tags, loser.Tags)
	survivor.SubmissionCount += loser.SubmissionCount
	if loser.FirstSeenAt.Before(survivor.FirstSeenAt) {
		survivor.FirstSeenAt = loser.FirstSeenAt
	}
	if loser.LastActivityAt.After(survivor.LastActivityAt) {
		survivor.LastActivityAt = loser.LastActivityAt
	}
	return r.tx.AuditRecord(ctx, models.Audit{WorkspaceID: survivor.WorkspaceID, Actor: r.actor(), Action: "contact.merge",
		SubjectType: "contact", SubjectID: survivor.ID, Before: map[string]any{"merged": loser.ID}, After: map[string]any{"survivor": survivor.ID, "reason": why}})
}

func unionTags(a, b []string) []string {
	seen := map[string]bool{}
	out := []string{} // never nil: the column is NOT NULL jsonb
	for _, t := range append(append([]string{}, a...), b...) {
		if !seen[t] {
			seen[t] = true
			out = append(out, t)
		}
	}
	return out
}

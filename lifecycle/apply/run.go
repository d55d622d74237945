package apply

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/leadgate/leadgate/guards/loop"
	"github.com/leadgate/leadgate/lifecycle"
	"github.com/leadgate/leadgate/models"
)

// applyRun is one transaction's worth of applying.
type applyRun struct {
	a       *Applier
	tx      applyStore
	rules   lifecycle.Rules
	sources map[int64]models.Source
	// later collects events to retry after a delay. It is shared by the
	// per-savepoint copies withStore makes, so what they add reaches the caller.
	later *[]delayed
	// actorName overrides the actor recorded in history (operator replays).
	actorName string
	// loop is the workspace's loop-guard settings, loaded on first use.
	loop *models.LoopSettings
	// override forces a replay choice (see ReplayMode).
	override ReplayMode
	forceTo  string
}

type delayed struct {
	eventID string
	delay   time.Duration
}

func (r *applyRun) withStore(st applyStore) *applyRun {
	c := *r
	c.tx = st
	return &c
}

func (r *applyRun) actor() string {
	if r.actorName != "" {
		return r.actorName
	}
	return "leadgate:apply"
}

func (r *applyRun) source(ctx context.Context, ev models.Event) (models.Source, error) {
	if s, ok := r.sources[ev.SourceID]; ok {
		return s, nil
	}
	s, err := r.tx.SourceGet(ctx, ev.WorkspaceID, ev.SourceID)
	if err != nil {
		return s, err
	}
	r.sources[ev.SourceID] = s
	return s, nil
}

// applyOne decides and records one event. The caller wraps a peer's in a
// savepoint; the triggering event's failure rolls back the whole run.
func (r *applyRun) applyOne(ctx context.Context, ev models.Event) error {
	if held, err := r.holdWithoutIdentity(ctx, ev); held || err != nil {
		return err
	}
	src, err := r.source(ctx, ev)
	if err != nil {
		return err
	}
	rules := r.rules
	if src.Config.AllowRuleOverrides && len(ev.RuleOverrides) > 0 {
		if o, err := lifecycle.ParseOverride(ev.RuleOverrides); err == nil {
			rules = rules.Stricter(o)
		}
	}
	id, err := r.resolveIdentity(ctx, ev)
	if err != nil {
		return err
	}
	if id.conflict != "" {
		return r.quarantine(ctx, ev, id.contact, "identity_conflict", id.conflict)
	}
	if echo, why := r.echo(ctx, ev, src); echo {
		return r.tx.EventSetOutcome(ctx, ev.ID, models.EventOutcome{Status: models.EventDropped, Reason: why, ContactID: contactID(id.contact), Attempts: ev.Attempts})
	}
	p := proposal(ev, src)
	lc := lifecycle.Contact{}
	if id.contact != nil {
		lc = lifecycle.Contact{Exists: true, Stage: id.contact.Stage, PhoneVerified: id.contact.PhoneVerified, Fields: id.contact.Fields}
		if id.contact.StageEnteredAt != nil {
			lc.StageEnteredAt = *id.contact.StageEnteredAt
		}
	}
	d := rules.Decide(lc, p)
	// A rep's change in the CRM carries a human's authority; crm-event
	// payloads are proposals that go through the state machine (and their
	// own state_machine_rules) like any lead event.
	if loop.IsCRMSource(src.Kind) && src.Kind != "crm-event" && id.contact != nil {
		d = humanCorrection(rules, p, ev, lc)
	}
	d = r.applyOverride(rules, lc, p, d)
	if held, err := r.breakerHolds(ctx, ev, id.contact, d); err != nil || held {
		return err
	}
	switch d.Outcome {
	case lifecycle.Wait:
		return r.wait(ctx, ev, d.Reason)
	case lifecycle.Quarantined:
		return r.quarantine(ctx, ev, id.contact, d.DeadLetterKind, d.Reason)
	case lifecycle.Dropped:
		return r.tx.EventSetOutcome(ctx, ev.ID, models.EventOutcome{Status: models.EventDropped, Reason: d.Reason, ContactID: contactID(id.contact), Attempts: ev.Attempts})
	}
	c, created := id.contact, false
	if c == nil {
		if c, err = r.newContact(ev); err != nil {
			return err
		}
		created = true
	}
	ch, err := r.update(ctx, c, ev, src, rules, d, id.basis, created, id.merged != nil)
	if err != nil {
		return err
	}
	outcome := d.EventOutcome(ch.changed)
	status := models.EventUnchanged
	if outcome == lifecycle.Applied {
		status = models.EventApplied
	}
	reason := d.Reason
	if ch.changed && reason == "" {
		reason = ch.summary()
	}
	return r.tx.EventSetOutcome(ctx, ev.ID, models.EventOutcome{Status: status, Reason: reason, ContactID: c.ID, Attempts: ev.Attempts})
}

// newContact is the contact an event creates, not yet inserted: update
// writes it once everything about it is known.
func (r *applyRun) newContact(ev models.Event) (*models.Contact, error) {
	id, err := uuid.NewV7()
	if err != nil {
		return nil, fmt.Errorf("apply: contact id: %w", err)
	}
	return &models.Contact{ID: id.String(), WorkspaceID: ev.WorkspaceID, Email: ev.Email, Phone: ev.Phone,
		Fields: map[string]string{}, FirstTouch: map[string]string{}, Tags: []string{}, ScoreBreakdown: json.RawMessage(`[]`),
		FirstSeenAt: ev.OccurredAt, LastActivityAt: ev.OccurredAt, Version: 0}, nil
}

// wait parks an event that needs a record that is not there yet: retried
// after 1.5 s, then with backoff from 2 s, then dead-lettered.
func (r *applyRun) wait(ctx context.Context, ev models.Event, reason string) error {
	attempts := ev.Attempts + 1
	if attempts > r.a.waitAttempts() {
		return r.quarantine(ctx, ev, nil, lifecycle.KindMissingContact, fmt.Sprintf("%s; gave up after %d attempts", reason, ev.Attempts))
	}
	delay := waitDelay(attempts)
	next := r.a.now().Add(delay)
	if r.later != nil {
		*r.later = append(*r.later, delayed{eventID: ev.ID, delay: delay})
	}
	return r.tx.EventSetOutcome(ctx, ev.ID, models.EventOutcome{Status: models.EventWaiting, Reason: reason, Attempts: attempts, NextAttemptAt: &next})
}

// quarantine writes a dead letter and an alert, and marks the event; the
// contact is left untouched.
func (r *applyRun) quarantine(ctx context.Context, ev models.Event, c *models.Contact, kind, reason string) error {
	cid := contactID(c)
	var cptr *string
	if cid != "" {
		cptr = &cid
	}
	dlID, err := r.tx.DeadLetterAdd(ctx, models.DeadLetter{WorkspaceID: ev.WorkspaceID, Kind: kind, Reason: reason,
		EventID: &ev.ID, ContactID: cptr, SourceID: &ev.SourceID, Payload: eventPayload(ev), Attempts: ev.Attempts})
	if err != nil {
		return err
	}
	if err := addAlert(ctx, r.tx, ev, cptr, dlID, kind, reason); err != nil {
		return err
	}
	return r.tx.EventSetOutcome(ctx, ev.ID, models.EventOutcome{Status: models.EventQuarantined, Reason: reason, ContactID: cid, Attempts: ev.Attempts})
}

// addAlert writes the alert outbox row of a dead letter, under a stable id
// derived from the dead letter.
func addAlert(ctx context.Context, tx applyStore, ev models.Event, contactID *string, dlID int64, kind, reason string) error {
	alert, _ := json.Marshal(map[string]any{"type": "dead_letter", "dead_letter_id": dlID, "kind": kind, "reason": reason,
		"event_id": ev.ID, "contact_id": deref(contactID)})
	_, err := tx.OutboxAdd(ctx, models.OutboxRow{WorkspaceID: ev.WorkspaceID, ContactID: contactID, Kind: models.OutboxAlert,
		StableID: fmt.Sprintf("alert:dead_letter:%d", dlID), Action: "alert", Payload: alert})
	return err
}

// proposal is what the event proposes, in the rules' terms.
func proposal(ev models.Event, src models.Source) lifecycle.Proposal {
	fields := eventFields(ev)
	p := lifecycle.Proposal{EventType: ev.EventType, TargetStage: deref(ev.TargetStage), SourceEventStages: src.Config.EventStages,
		SourceAliases: src.Config.StageAliases, SourceVocabulary: stageVocabulary(src.Kind), OccurredAt: ev.OccurredAt, Fields: fields}
	switch strings.ToLower(strings.TrimSpace(fields["phone_verified"])) {
	case "true", "1", "yes", "verified":
		p.PhoneVerified = true
	}
	if src.Config.VerifiesPhone && ev.Phone != nil && fields["phone_verified"] == "" {
		p.PhoneVerified = true // a verifying source (a connected call) that did not say otherwise
	}
	return p
}

// eventFields flattens an event's fields (custom fields plus names) to strings.
func eventFields(ev models.Event) map[string]string {
	out := map[string]string{}
	var raw map[string]any
	if len(ev.Fields) > 0 && json.Unmarshal(ev.Fields, &raw) == nil {
		for k, v := range raw {
			switch t := v.(type) {
			case string:
				out[k] = t
			case nil:
				out[k] = ""
			default:
				b, _ := json.Marshal(t)
				out[k] = string(b)
			}
		}
	}
	for k, v := range map[string]*string{"first_name": ev.FirstName, "last_name": ev.LastName, "company": ev.Company} {
		if v != nil {
			out[k] = *v
		}
	}
	return out
}

func eventPayload(ev models.Event) json.RawMessage {
	return models.DeadLetterEventPayload(ev)
}

func contactID(c *models.Contact) string {
	if c == nil {
		return ""
	}
	return c.ID
}

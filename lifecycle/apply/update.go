package apply

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/leadgate/leadgate/guards/loop"
	"github.com/leadgate/leadgate/lifecycle"
	"github.com/leadgate/leadgate/models"
)

// changes records what an event changed on its contact.
type changes struct {
	changed      bool
	created      bool
	enteredStage string
	fields       []string
	tags         []string
}

func (c changes) summary() string {
	var parts []string
	if c.created {
		parts = append(parts, "contact created")
	}
	if c.enteredStage != "" {
		parts = append(parts, "entered "+c.enteredStage)
	}
	if len(c.fields) > 0 {
		parts = append(parts, "fields "+strings.Join(c.fields, ", "))
	}
	if len(c.tags) > 0 {
		parts = append(parts, "tags "+strings.Join(c.tags, ", "))
	}
	return strings.Join(parts, "; ")
}

// update applies a decision to a locked contact (or a new one, not yet
// inserted, when created) and writes history, the CRM intent and side
// effects when anything changed. created: the event created the contact;
// merged: resolving the event merged another contact into it (a change, but
// not a creation: no first touch, no creation side effects). Everything is
// computed first and written at the end, a handful of statements per event.
func (r *applyRun) update(ctx context.Context, c *models.Contact, ev models.Event, src models.Source, rules lifecycle.Rules,
	d lifecycle.Decision, basis string, created, merged bool) (changes, error) {
	ch := changes{created: created, changed: created || merged}
	var obs []models.Observation
	if d.ApplyFields {
		obs = r.observations(c, ev, src, basis)
		changed, err := r.recomputeWith(ctx, c, rules, obs, created)
		if err != nil {
			return ch, err
		}
		ch.fields = changed
		ch.changed = ch.changed || len(changed) > 0
	}
	if ev.Email != nil && c.Email == nil {
		c.Email, ch.changed = ev.Email, true
	}
	if ev.Phone != nil && c.Phone == nil {
		c.Phone, ch.changed = ev.Phone, true
	}
	if proposal(ev, src).PhoneVerified && !c.PhoneVerified && ev.Phone != nil && c.Phone != nil && *ev.Phone == *c.Phone {
		c.PhoneVerified, ch.changed = true, true
	}
	var history *models.StageChange
	if d.NewStage != "" && d.NewStage != c.Stage {
		history = &models.StageChange{WorkspaceID: c.WorkspaceID, ContactID: c.ID, FromStage: c.Stage, ToStage: d.NewStage,
			EventID: &ev.ID, RuleVersion: rules.Version, Actor: r.actor(), Reason: d.Reason, OccurredAt: d.EnteredAt}
		entered := d.EnteredAt
		c.Stage, c.StageEnteredAt, ch.enteredStage, ch.changed = d.NewStage, &entered, d.NewStage, true
	}
	for _, t := range append(append([]string{}, d.Tags...), filterTags(ev)...) {
		if !slices.Contains(c.Tags, t) {
			c.Tags = append(c.Tags, t)
			ch.tags = append(ch.tags, t)
			ch.changed = true
		}
	}
	if created {
		c.FirstTouch = firstTouch(ev, src)
	}
	c.SubmissionCount++
	if ev.OccurredAt.After(c.LastActivityAt) {
		c.LastActivityAt = ev.OccurredAt
	}
	if err := r.rescore(ctx, c, ev, rules, ch.changed, created); err != nil {
		return ch, err
	}
	var intents []models.OutboxRow
	if ch.changed {
		c.Version++
		var err error
		if intents, err = r.intentRows(c, rules, ch, ev.ID); err != nil {
			return ch, err
		}
	}
	if err := r.write(ctx, c, created, obs, history, intents); err != nil {
		return ch, err
	}
	return ch, nil
}

// write stores a contact and what hangs off it: the contact first (the
// other rows reference it), then observations, history and outbox rows.
func (r *applyRun) write(ctx context.Context, c *models.Contact, created bool, obs []models.Observation, history *models.StageChange, intents []models.OutboxRow) error {
	var err error
	if created {
		err = r.tx.ContactCreate(ctx, c)
	} else {
		err = r.tx.ContactSave(ctx, c)
	}
	if errors.Is(err, models.ErrConflict) {
		// A concurrent creator of this identity would have held the advisory
		// lock, so the identity index disagrees with the locks: retry.
		return busy()
	}
	if err != nil {
		return err
	}
	if err := r.tx.ObservationsAddAll(ctx, obs); err != nil {
		return err
	}
	if history != nil {
		if err := r.tx.StageHistoryAdd(ctx, *history); err != nil {
			return err
		}
	}
	return r.tx.OutboxAddAll(ctx, intents)
}

// observations are the event's proposed field values, with provenance.
func (r *applyRun) observations(c *models.Contact, ev models.Event, src models.Source, basis string) []models.Observation {
	var obs []models.Observation
	for k, v := range eventFields(ev) {
		if crmMetaField(k) {
			continue
		}
		obs = append(obs, models.Observation{WorkspaceID: c.WorkspaceID, ContactID: c.ID, Field: k, Value: v, Source: src.Name,
			ObservedAt: ev.OccurredAt, Basis: basis, EventID: &ev.ID, Human: loop.IsCRMSource(src.Kind) && src.Kind != "crm-event"})
	}
	return obs
}

// recomputeWith derives every field from the contact's stored observations
// plus the new ones (a new contact has none stored). It returns the fields
// whose value changed.
func (r *applyRun) recomputeWith(ctx context.Context, c *models.Contact, rules lifecycle.Rules, obs []models.Observation, created bool) ([]string, error) {
	if len(obs) == 0 {
		return nil, nil
	}
	if cache, ok := r.tx.(resolutionCache); ok {
		resolved, ok, err := cache.FieldsWith(ctx, c.ID, created, rules, obs)
		if err != nil {
			return nil, err
		}
		if ok {
			return setFields(c, resolved), nil
		}
	}
	all := obs
	if !created {
		stored, err := r.tx.ObservationsForContact(ctx, c.ID)
		if err != nil {
			return nil, err
		}
		all = append(stored, obs...)
	}
	return r.resolve(c, rules, all), nil
}

// recompute derives every field from all of the contact's stored observations.
func (r *applyRun) recompute(ctx context.Context, c *models.Contact, rules lifecycle.Rules) ([]string, error) {
	all, err := r.tx.ObservationsForContact(ctx, c.ID)
	if err != nil {
		return nil, err
	}
	return r.resolve(c, rules, all), nil
}

// resolve sets the contact's fields from observations by precedence and
// returns the fields whose value changed.
func (r *applyRun) resolve(c *models.Contact, rules lifecycle.Rules, all []models.Observation) []string {
	return setFields(c, rules.ResolveFields(lifecycleObservations(all)))
}

// lifecycleObservations are stored observations in the rules' terms. One without an event counts on its
// own, under its row id.
func lifecycleObservations(all []models.Observation) []lifecycle.Observation {
	in := make([]lifecycle.Observation, len(all))
	for i, o := range all {
		in[i] = lifecycle.Observation{Field: o.Field, Value: o.Value, Source: o.Source, ObservedAt: o.ObservedAt, Basis: o.Basis,
			Human: o.Human, EventID: deref(o.EventID), ExplicitDelete: o.ExplicitDelete}
		if o.EventID == nil {
			in[i].EventID = fmt.Sprintf("obs:%d", o.ID)
		}
	}
	return in
}

// setFields sets the contact's fields to the resolved values and returns the fields whose value changed.
func setFields(c *models.Contact, resolved map[string]lifecycle.Resolved) []string {
	next := make(map[string]string, len(resolved))
	for k, v := range resolved {
		next[k] = v.Value
	}
	var changed []string
	for k, v := range next {
		if old, ok := c.Fields[k]; !ok || old != v {
			changed = append(changed, k)
		}
	}
	for k := range c.Fields {
		if _, ok := next[k]; !ok {
			changed = append(changed, k)
		}
	}
	slices.Sort(changed)
	c.Fields = next
	c.FirstName, c.LastName, c.Company = optField(next, "first_name"), optField(next, "last_name"), optField(next, "company")
	return changed
}

// rescore recomputes the lead score from the distinct applied events and the
// current fields: never incremented, so repeats add nothing.
func (r *applyRun) rescore(ctx context.Context, c *models.Contact, ev models.Event, rules lifecycle.Rules, applied, created bool) error {
	if len(rules.Score.EventPoints) == 0 && len(rules.Score.FieldPoints) == 0 {
		return nil
	}
	var types []string
	if !created { // a new contact has no applied events yet
		var err error
		if types, err = r.tx.ContactAppliedEventTypes(ctx, c.ID); err != nil {
			return err
		}
	}
	if applied {
		types = append(types, ev.EventType)
	}
	score, lines := rules.Score.Compute(types, c.Fields)
	b, _ := json.Marshal(lines)
	c.Score, c.ScoreBreakdown = score, b
	return nil
}

// intentRows are the contact's desired CRM state at its version and the side
// effects of its creation or stage entry, each under a stable id.
func (r *applyRun) intentRows(c *models.Contact, rules lifecycle.Rules, ch changes, eventID string) ([]models.OutboxRow, error) {
	payload, err := json.Marshal(IntentOf(c))
	if err != nil {
		return nil, fmt.Errorf("apply: encode intent: %w", err)
	}
	cid := c.ID
	rows := []models.OutboxRow{{WorkspaceID: c.WorkspaceID, ContactID: &cid, Kind: models.OutboxCRMUpsert,
		StableID: fmt.Sprintf("crm:%s:v%d", c.ID, c.Version), Version: c.Version, Action: "upsert", Payload: payload}}
	for _, se := range rules.SideEffectsFor(c.ID, ch.created, ch.enteredStage) {
		body, _ := json.Marshal(map[string]any{"contact_id": c.ID, "cause": se.Cause, "action": se.Action, "params": se.Params, "event_id": eventID})
		rows = append(rows, models.OutboxRow{WorkspaceID: c.WorkspaceID, ContactID: &cid, Kind: models.OutboxSideEffect,
			StableID: "se:" + se.ID, Action: se.Action, Payload: body})
	}
	return rows, nil
}

// writeIntent writes the intent rows of an operator action.
func (r *applyRun) writeIntent(ctx context.Context, c *models.Contact, rules lifecycle.Rules, ch changes, eventID string) error {
	rows, err := r.intentRows(c, rules, ch, eventID)
	if err != nil {
		return err
	}
	return r.tx.OutboxAddAll(ctx, rows)
}

// firstTouch is the attribution written once, when the contact is created.
func firstTouch(ev models.Event, src models.Source) map[string]string {
	ft := map[string]string{"source": src.Name, "channel": src.Channel, "first_seen_at": ev.OccurredAt.UTC().Format(time.RFC3339), "event_type": ev.EventType}
	var attr map[string]any
	if json.Unmarshal(ev.Attribution, &attr) == nil {
		for k, v := range attr {
			if s, ok := v.(string); ok {
				ft[k] = s
			} else if v != nil {
				b, _ := json.Marshal(v)
				ft[k] = string(b)
			}
		}
	}
	return ft
}

func optField(m map[string]string, k string) *string {
	if v, ok := m[k]; ok && v != "" {
		return &v
	}
	return nil
}

package models

import (
	"context"
	"encoding/json"
	"fmt"
	"time"
)

// The writes of a set-based apply: one statement per table for the whole batch, each row a position in
// the parallel arrays passed to unnest.

func marshalJSON(v any, empty string) (string, error) {
	if v == nil {
		return empty, nil
	}
	b, err := json.Marshal(v)
	if err != nil {
		return "", err
	}
	if string(b) == "null" {
		return empty, nil
	}
	return string(b), nil
}

func rawJSON(b json.RawMessage, empty string) string {
	if len(b) == 0 {
		return empty
	}
	return string(b)
}

// contactArrays are the columns of many contacts, as unnest takes them.
type contactArrays struct {
	id, stage, fields, firstTouch, tags, breakdown         []string
	workspace, version                                     []int64
	email, phone, firstName, lastName, company, mergedInto []*string
	shared, verified                                       []bool
	score, submissions                                     []int32
	stageEntered, erased                                   []*time.Time
	firstSeen, lastActivity, created, updated              []time.Time
}

func newContactArrays(cs []Contact, now time.Time) (contactArrays, error) {
	var a contactArrays
	for i := range cs {
		c := &cs[i]
		fields, err := marshalJSON(c.Fields, "{}")
		if err != nil {
			return a, fmt.Errorf("contact %s fields: %w", c.ID, err)
		}
		ft, err := marshalJSON(c.FirstTouch, "{}")
		if err != nil {
			return a, fmt.Errorf("contact %s first touch: %w", c.ID, err)
		}
		tags, err := marshalJSON(c.Tags, "[]")
		if err != nil {
			return a, fmt.Errorf("contact %s tags: %w", c.ID, err)
		}
		if c.CreatedAt.IsZero() {
			c.CreatedAt = now
		}
		c.UpdatedAt = now
		a.id, a.stage, a.fields, a.firstTouch, a.tags = append(a.id, c.ID), append(a.stage, c.Stage), append(a.fields, fields),
			append(a.firstTouch, ft), append(a.tags, tags)
		a.breakdown = append(a.breakdown, rawJSON(c.ScoreBreakdown, "[]"))
		a.workspace, a.version = append(a.workspace, c.WorkspaceID), append(a.version, c.Version)
		a.email, a.phone, a.firstName, a.lastName = append(a.email, c.Email), append(a.phone, c.Phone), append(a.firstName, c.FirstName),
			append(a.lastName, c.LastName)
		a.company, a.mergedInto = append(a.company, c.Company), append(a.mergedInto, c.MergedInto)
		a.shared, a.verified = append(a.shared, c.PhoneShared), append(a.verified, c.PhoneVerified)
		a.score, a.submissions = append(a.score, int32(c.Score)), append(a.submissions, int32(c.SubmissionCount))
		a.stageEntered, a.erased = append(a.stageEntered, c.StageEnteredAt), append(a.erased, c.ErasedAt)
		a.firstSeen, a.lastActivity = append(a.firstSeen, c.FirstSeenAt), append(a.lastActivity, c.LastActivityAt)
		a.created, a.updated = append(a.created, c.CreatedAt), append(a.updated, c.UpdatedAt)
	}
	return a, nil
}

func (a contactArrays) args() []any {
	return []any{a.id, a.workspace, a.email, a.phone, a.shared, a.verified, a.firstName, a.lastName, a.company, a.stage, a.stageEntered,
		a.fields, a.firstTouch, a.tags, a.score, a.breakdown, a.submissions, a.firstSeen, a.lastActivity, a.version, a.mergedInto,
		a.erased, a.created, a.updated}
}

const contactUnnest = `unnest($1::text[], $2::bigint[], $3::text[], $4::text[], $5::boolean[], $6::boolean[], $7::text[], $8::text[],
	$9::text[], $10::text[], $11::timestamptz[], $12::text[], $13::text[], $14::text[], $15::int[], $16::text[], $17::int[],
	$18::timestamptz[], $19::timestamptz[], $20::bigint[], $21::text[], $22::timestamptz[], $23::timestamptz[], $24::timestamptz[])
	AS x(id, workspace_id, email, phone, phone_shared, phone_verified, first_name, last_name, company, stage, stage_entered_at,
	fields, first_touch, tags, score, score_breakdown, submission_count, first_seen_at, last_activity_at, version, merged_into,
	erased_at, created_at, updated_at)`

// ContactsInsert inserts new contacts in one statement; ErrConflict when an email or phone is taken.
func (s *Store) ContactsInsert(ctx context.Context, cs []Contact) error {
	if len(cs) == 0 {
		return nil
	}
	a, err := newContactArrays(cs, time.Now().UTC())
	if err != nil {
		return fmt.Errorf("models: insert contacts: %w", err)
	}
	_, err = s.pool().ExecContext(ctx, `INSERT INTO contacts (id, workspace_id, email, phone, phone_shared, phone_verified, first_name,
		last_name, company, stage, stage_entered_at, fields, first_touch, tags, score, score_breakdown, submission_count, first_seen_at,
		last_activity_at, version, merged_into, erased_at, created_at, updated_at)
		SELECT x.id::uuid, x.workspace_id, x.email, x.phone, x.phone_shared, x.phone_verified, x.first_name, x.last_name, x.company,
		x.stage, x.stage_entered_at, x.fields::jsonb, x.first_touch::jsonb, x.tags::jsonb, x.score, x.score_breakdown::jsonb,
		x.submission_count, x.first_seen_at, x.last_activity_at, x.version, x.merged_into::uuid, x.erased_at, x.created_at, x.updated_at
		FROM `+contactUnnest, a.args()...)
	if isUniqueViolation(err) {
		return ErrConflict
	}
	if err != nil {
		return fmt.Errorf("models: insert %d contacts: %w", len(cs), err)
	}
	return nil
}

// ContactsUpdate writes every column of existing contacts in one statement (ContactSave for many).
func (s *Store) ContactsUpdate(ctx context.Context, cs []Contact) error {
	if len(cs) == 0 {
		return nil
	}
	a, err := newContactArrays(cs, time.Now().UTC())
	if err != nil {
		return fmt.Errorf("models: update contacts: %w", err)
	}
	_, err = s.pool().ExecContext(ctx, `UPDATE contacts c SET workspace_id = x.workspace_id, email = x.email, phone = x.phone,
		phone_shared = x.phone_shared, phone_verified = x.phone_verified, first_name = x.first_name, last_name = x.last_name,
		company = x.company, stage = x.stage, stage_entered_at = x.stage_entered_at, fields = x.fields::jsonb,
		first_touch = x.first_touch::jsonb, tags = x.tags::jsonb, score = x.score, score_breakdown = x.score_breakdown::jsonb,
		submission_count = x.submission_count, first_seen_at = x.first_seen_at, last_activity_at = x.last_activity_at,
		version = x.version, merged_into = x.merged_into::uuid, erased_at = x.erased_at, updated_at = x.updated_at
		FROM `+contactUnnest+` WHERE c.id = x.id::uuid`, a.args()...)
	if isUniqueViolation(err) {
		return ErrConflict
	}
	if err != nil {
		return fmt.Errorf("models: update %d contacts: %w", len(cs), err)
	}
	return nil
}

// StageHistoryAddAll appends stage changes in one statement.
func (s *Store) StageHistoryAddAll(ctx context.Context, cs []StageChange) error {
	if len(cs) == 0 {
		return nil
	}
	n := len(cs)
	ws, rule := make([]int64, n), make([]int32, n)
	contact, from, to, actor, reason := make([]string, n), make([]string, n), make([]string, n), make([]string, n), make([]string, n)
	event := make([]*string, n)
	occurred := make([]time.Time, n)
	for i, c := range cs {
		ws[i], rule[i], contact[i], from[i], to[i], actor[i], reason[i] = c.WorkspaceID, int32(c.RuleVersion), c.ContactID, c.FromStage, c.ToStage, c.Actor, c.Reason
		event[i], occurred[i] = c.EventID, c.OccurredAt
	}
	_, err := s.pool().ExecContext(ctx, `INSERT INTO stage_history (workspace_id, contact_id, from_stage, to_stage, event_id, rule_version,
		actor, reason, occurred_at)
		SELECT ws, contact::uuid, from_stage, to_stage, event::uuid, rule, actor, reason, occurred
		FROM unnest($1::bigint[], $2::text[], $3::text[], $4::text[], $5::text[], $6::int[], $7::text[], $8::text[], $9::timestamptz[])
		AS x(ws, contact, from_stage, to_stage, event, rule, actor, reason, occurred)`, ws, contact, from, to, event, rule, actor, reason, occurred)
	if err != nil {
		return fmt.Errorf("models: stage history of %d changes: %w", n, err)
	}
	return nil
}

// EventIDOutcome is the outcome of one event of a batch.
type EventIDOutcome struct {
	ID string
	EventOutcome
}

// EventsSetOutcomes records many events' outcomes in one statement (EventSetOutcome for many).
func (s *Store) EventsSetOutcomes(ctx context.Context, outs []EventIDOutcome) error {
	if len(outs) == 0 {
		return nil
	}
	n := len(outs)
	id, status, reason := make([]string, n), make([]string, n), make([]string, n)
	contact := make([]*string, n)
	attempts := make([]int32, n)
	next, processed := make([]*time.Time, n), make([]*time.Time, n)
	now := time.Now().UTC()
	for i, o := range outs {
		id[i], status[i], reason[i], attempts[i], next[i] = o.ID, o.Status, o.Reason, int32(o.Attempts), o.NextAttemptAt
		if o.ContactID != "" {
			contact[i] = &o.ContactID
		}
		switch o.Status {
		case EventPending, EventWaiting, EventRetrying:
		default:
			processed[i] = &now
		}
	}
	_, err := s.pool().ExecContext(ctx, `UPDATE events e SET status = x.status, reason = x.reason, attempts = x.attempts,
		next_attempt_at = x.next, contact_id = COALESCE(x.contact::uuid, e.contact_id), processed_at = COALESCE(x.processed, e.processed_at)
		FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::int[], $6::timestamptz[], $7::timestamptz[])
		AS x(id, status, reason, contact, attempts, next, processed)
		WHERE e.id = x.id::uuid`, id, status, reason, contact, attempts, next, processed)
	if err != nil {
		return fmt.Errorf("models: outcomes of %d events: %w", n, err)
	}
	return nil
}

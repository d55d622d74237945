package models

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"time"

	"gorm.io/gorm"
)

// The set-based apply reads and writes whole batches with one statement each. These statements go to the
// connection (or transaction) directly, with typed arrays as parameters, instead of through GORM: its
// statement building and per-row reflection were most of apply's client-side CPU. The unresolved statuses
// are written into the SQL as literals, so that the planner can match the partial indexes on them
// (events_unresolved*) even in a generic plan of a prepared statement.

// pool is the connection pool, or the transaction, this Store runs on.
func (s *Store) pool() gorm.ConnPool { return s.db.Statement.ConnPool }

// PlanForBatch makes this transaction's statements look rows up by index, one key at a time. A batch (of
// apply, or of the sync bookkeeping) touches a few hundred rows by key, which index lookups do best at
// any table size; but while a table grows faster than its statistics (a fresh install taking its first
// burst) the planner believes it tiny and scans all of it once per batch, and a prepared statement keeps
// such a plan.
func (s *Store) PlanForBatch(ctx context.Context) error {
	return s.setPlanner(ctx, "batch", `SET LOCAL enable_seqscan = off; SET LOCAL enable_hashjoin = off; SET LOCAL enable_mergejoin = off`)
}

// setPlanner applies planner settings to this transaction (SET LOCAL); what names them in an error.
func (s *Store) setPlanner(ctx context.Context, what, settings string) error {
	if _, err := s.pool().ExecContext(ctx, settings); err != nil {
		return fmt.Errorf("models: %s planner settings: %w", what, err)
	}
	return nil
}

const unresolvedSQL = `status IN ('pending', 'waiting', 'retrying')`

// applicable excludes id-only events that still wait for their identity from their provider: they are
// hydrated (an HTTP call) by their own task before they take part in a batch.
const applicableSQL = `(hydration IS NULL OR email IS NOT NULL OR phone IS NOT NULL)`

const eventColumns = `id::text, workspace_id, source_id, idempotency_key, content_hash, event_type, channel, occurred_at, received_at,
	email, email_raw, email_problem, phone, phone_raw, phone_problem, first_name, last_name, company, target_stage, current_stage,
	fields, attribution, hydration, rule_overrides, payload, content_type, status, reason, attempts, next_attempt_at,
	contact_id::text, processed_at, spooled`

func scanEvents(rows *sql.Rows) ([]Event, error) {
	defer rows.Close()
	var out []Event
	for rows.Next() {
		var e Event
		var fields, attribution, hydration, overrides, payload []byte
		if err := rows.Scan(&e.ID, &e.WorkspaceID, &e.SourceID, &e.IdempotencyKey, &e.ContentHash, &e.EventType, &e.Channel,
			&e.OccurredAt, &e.ReceivedAt, &e.Email, &e.EmailRaw, &e.EmailProblem, &e.Phone, &e.PhoneRaw, &e.PhoneProblem,
			&e.FirstName, &e.LastName, &e.Company, &e.TargetStage, &e.CurrentStage, &fields, &attribution, &hydration,
			&overrides, &payload, &e.ContentType, &e.Status, &e.Reason, &e.Attempts, &e.NextAttemptAt, &e.ContactID,
			&e.ProcessedAt, &e.Spooled); err != nil {
			return nil, err
		}
		e.Fields, e.Attribution, e.Hydration, e.RuleOverrides, e.Payload = fields, attribution, hydration, overrides, payload
		out = append(out, e)
	}
	return out, rows.Err()
}

// EventsClaim locks up to limit unresolved events that are due at now, oldest arrival first, skipping those
// another transaction holds (FOR UPDATE SKIP LOCKED): concurrent workers claim disjoint batches and none
// waits for another. The rows stay locked until the transaction ends.
func (s *Store) EventsClaim(ctx context.Context, limit int, now time.Time) ([]Event, error) {
	rows, err := s.pool().QueryContext(ctx, `SELECT `+eventColumns+` FROM events
		WHERE `+unresolvedSQL+` AND `+applicableSQL+` AND (next_attempt_at IS NULL OR next_attempt_at <= $1)
		ORDER BY received_at LIMIT $2 FOR UPDATE SKIP LOCKED`, now, limit)
	if err != nil {
		return nil, fmt.Errorf("models: claim events: %w", err)
	}
	out, err := scanEvents(rows)
	if err != nil {
		return nil, fmt.Errorf("models: claim events: %w", err)
	}
	return out, nil
}

// EventsLock locks the given events that are still unresolved, skipping those another transaction holds.
func (s *Store) EventsLock(ctx context.Context, ids []string) ([]Event, error) {
	rows, err := s.pool().QueryContext(ctx, `SELECT `+eventColumns+` FROM events
		WHERE id = ANY($1::text[]::uuid[]) AND `+unresolvedSQL+` FOR UPDATE SKIP LOCKED`, ids)
	if err != nil {
		return nil, fmt.Errorf("models: lock events: %w", err)
	}
	out, err := scanEvents(rows)
	if err != nil {
		return nil, fmt.Errorf("models: lock events: %w", err)
	}
	return out, nil
}

// IdentityKeys are (workspace, email) and (workspace, phone) pairs, as parallel arrays.
type IdentityKeys struct {
	EmailWorkspaces []int64
	Emails          []string
	PhoneWorkspaces []int64
	Phones          []string
}

// AddEmail adds a (workspace, email) pair.
func (k *IdentityKeys) AddEmail(workspaceID int64, email string) {
	k.EmailWorkspaces, k.Emails = append(k.EmailWorkspaces, workspaceID), append(k.Emails, email)
}

// AddPhone adds a (workspace, phone) pair.
func (k *IdentityKeys) AddPhone(workspaceID int64, phone string) {
	k.PhoneWorkspaces, k.Phones = append(k.PhoneWorkspaces, workspaceID), append(k.Phones, phone)
}

// Empty reports whether there is no key at all.
func (k IdentityKeys) Empty() bool { return len(k.Emails) == 0 && len(k.Phones) == 0 }

// EventsPendingForKeys locks the unresolved events due at now whose email or phone is one of keys (at most
// perKey each), except the ones in exclude; events another transaction holds are skipped. One apply batch
// drains each of its contacts' backlogs in order this way. Each key is looked up on its own (LATERAL): a
// join the planner may turn around would scan the whole unresolved set whenever its statistics lag
// behind a growing backlog. The workspace is compared outside the index ("+ 0"), so that the only index
// that narrows the lookup is the one led by the email or the phone (migration 00012).
func (s *Store) EventsPendingForKeys(ctx context.Context, keys IdentityKeys, exclude []string, now time.Time, perKey int) ([]Event, error) {
	if keys.Empty() {
		return nil, nil
	}
	rows, err := s.pool().QueryContext(ctx, pendingForKeysSQL, keys.EmailWorkspaces, keys.Emails, keys.PhoneWorkspaces, keys.Phones,
		now, exclude, perKey)
	if err != nil {
		return nil, fmt.Errorf("models: pending events for keys: %w", err)
	}
	out, err := scanEvents(rows)
	if err != nil {
		return nil, fmt.Errorf("models: pending events for keys: %w", err)
	}
	return uniqueBy(out, func(e Event) string { return e.ID }), nil
}

func pendingForKeysLookup(column, ws, v string) string {
	return `SELECT x.* FROM unnest(` + ws + `::bigint[], ` + v + `::text[]) AS k(ws, v), LATERAL (
		SELECT ` + eventColumns + ` FROM events e WHERE e.` + column + ` = k.v AND e.workspace_id + 0 = k.ws AND e.` + unresolvedSQL + `
			AND ` + applicableSQL + ` AND (e.next_attempt_at IS NULL OR e.next_attempt_at <= $5) AND e.id <> ALL($6::uuid[])
		ORDER BY e.occurred_at, e.received_at, e.id LIMIT $7 FOR UPDATE SKIP LOCKED) x`
}

var pendingForKeysSQL = pendingForKeysLookup("email", "$1", "$2") + ` UNION ALL ` + pendingForKeysLookup("phone", "$3", "$4")

// uniqueBy keeps the first of the rows sharing an id (a row found by its email and by its phone).
func uniqueBy[T any](rows []T, id func(T) string) []T {
	seen := make(map[string]bool, len(rows))
	out := rows[:0]
	for _, r := range rows {
		if !seen[id(r)] {
			seen[id(r)] = true
			out = append(out, r)
		}
	}
	return out
}

const contactColumns = `id::text, workspace_id, email, phone, phone_shared, phone_verified, first_name, last_name, company, stage,
	stage_entered_at, fields, first_touch, tags, score, score_breakdown, submission_count, first_seen_at, last_activity_at,
	version, merged_into::text, erased_at, created_at, updated_at`

func scanContacts(rows *sql.Rows) ([]Contact, error) {
	defer rows.Close()
	var out []Contact
	for rows.Next() {
		var c Contact
		var fields, firstTouch, tags, breakdown []byte
		if err := rows.Scan(&c.ID, &c.WorkspaceID, &c.Email, &c.Phone, &c.PhoneShared, &c.PhoneVerified, &c.FirstName, &c.LastName,
			&c.Company, &c.Stage, &c.StageEnteredAt, &fields, &firstTouch, &tags, &c.Score, &breakdown, &c.SubmissionCount,
			&c.FirstSeenAt, &c.LastActivityAt, &c.Version, &c.MergedInto, &c.ErasedAt, &c.CreatedAt, &c.UpdatedAt); err != nil {
			return nil, err
		}
		if err := decodeContactJSON(&c, fields, firstTouch, tags); err != nil {
			return nil, err
		}
		c.ScoreBreakdown = breakdown
		out = append(out, c)
	}
	return out, rows.Err()
}

func decodeContactJSON(c *Contact, fields, firstTouch, tags []byte) error {
	for _, f := range []struct {
		raw []byte
		dst any
	}{{fields, &c.Fields}, {firstTouch, &c.FirstTouch}, {tags, &c.Tags}} {
		if len(f.raw) == 0 {
			continue
		}
		if err := json.Unmarshal(f.raw, f.dst); err != nil {
			return fmt.Errorf("contact %s: %w", c.ID, err)
		}
	}
	return nil
}

// ContactsByKeys returns the live contacts owning any of the emails or (unshared) phones, each once. With
// lock, the rows are locked for this transaction and contacts another transaction holds are left out
// (SKIP LOCKED): the caller compares with an unlocked read to tell a held contact from a missing one.
// Each key is looked up on its own (see EventsPendingForKeys).
func (s *Store) ContactsByKeys(ctx context.Context, keys IdentityKeys, lock bool) ([]Contact, error) {
	if keys.Empty() {
		return nil, nil
	}
	rows, err := s.pool().QueryContext(ctx, contactsByKeysSQL(lock), keys.EmailWorkspaces, keys.Emails, keys.PhoneWorkspaces, keys.Phones)
	if err != nil {
		return nil, fmt.Errorf("models: contacts by keys: %w", err)
	}
	out, err := scanContacts(rows)
	if err != nil {
		return nil, fmt.Errorf("models: contacts by keys: %w", err)
	}
	return uniqueBy(out, func(c Contact) string { return c.ID }), nil
}

func contactsByKeysSQL(lock bool) string {
	locking := ""
	if lock {
		locking = ` FOR UPDATE SKIP LOCKED`
	}
	lookup := func(cond, ws, v string) string {
		return `SELECT x.* FROM unnest(` + ws + `::bigint[], ` + v + `::text[]) AS k(ws, v), LATERAL (
			SELECT ` + contactColumns + ` FROM contacts c WHERE ` + cond + ` AND c.workspace_id + 0 = k.ws AND c.merged_into IS NULL LIMIT 1` + locking + `) x`
	}
	return lookup("c.email = k.v", "$1", "$2") + ` UNION ALL ` + lookup("c.phone = k.v AND NOT c.phone_shared", "$3", "$4")
}

// TryAdvisoryXactLocksEach tries the transaction advisory lock of every key in one round trip, without
// waiting, and returns the keys it got. The caller passes the keys sorted; try-locks cannot deadlock.
func (s *Store) TryAdvisoryXactLocksEach(ctx context.Context, keys []string) (map[string]bool, error) {
	got := make(map[string]bool, len(keys))
	if len(keys) == 0 {
		return got, nil
	}
	rows, err := s.pool().QueryContext(ctx, `SELECT k FROM unnest($1::text[]) WITH ORDINALITY AS u(k, n)
		WHERE pg_try_advisory_xact_lock(hashtextextended(k, 0)) ORDER BY n`, keys)
	if err != nil {
		return nil, fmt.Errorf("models: advisory locks: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var k string
		if err := rows.Scan(&k); err != nil {
			return nil, fmt.Errorf("models: advisory locks: %w", err)
		}
		got[k] = true
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("models: advisory locks: %w", err)
	}
	return got, nil
}

// ObservationsForContacts returns the stored observations of each contact, oldest first.
func (s *Store) ObservationsForContacts(ctx context.Context, contactIDs []string) (map[string][]Observation, error) {
	out := make(map[string][]Observation, len(contactIDs))
	if len(contactIDs) == 0 {
		return out, nil
	}
	rows, err := s.pool().QueryContext(ctx, `SELECT id, workspace_id, contact_id::text, field, value, source, observed_at, basis, human,
		explicit_delete, event_id::text, actor, created_at FROM observations WHERE contact_id = ANY($1::text[]::uuid[]) ORDER BY id`, contactIDs)
	if err != nil {
		return nil, fmt.Errorf("models: observations of contacts: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var o Observation
		if err := rows.Scan(&o.ID, &o.WorkspaceID, &o.ContactID, &o.Field, &o.Value, &o.Source, &o.ObservedAt, &o.Basis, &o.Human,
			&o.ExplicitDelete, &o.EventID, &o.Actor, &o.CreatedAt); err != nil {
			return nil, fmt.Errorf("models: observations of contacts: %w", err)
		}
		out[o.ContactID] = append(out[o.ContactID], o)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("models: observations of contacts: %w", err)
	}
	return out, nil
}

// ContactsAppliedEventTypes is ContactAppliedEventTypes for many contacts in one query.
func (s *Store) ContactsAppliedEventTypes(ctx context.Context, contactIDs []string) (map[string][]string, error) {
	out := make(map[string][]string, len(contactIDs))
	if len(contactIDs) == 0 {
		return out, nil
	}
	rows, err := s.pool().QueryContext(ctx, `SELECT c.id, e.event_type FROM unnest($1::text[]) AS c(id), LATERAL (
		SELECT event_type FROM events WHERE contact_id = c.id::uuid AND status = 'applied') e`, contactIDs)
	if err != nil {
		return nil, fmt.Errorf("models: event types of contacts: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var id, typ string
		if err := rows.Scan(&id, &typ); err != nil {
			return nil, fmt.Errorf("models: event types of contacts: %w", err)
		}
		out[id] = append(out[id], typ)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("models: event types of contacts: %w", err)
	}
	return out, nil
}

// SourcesByID returns the sources with these ids (live or deleted), by id.
func (s *Store) SourcesByID(ctx context.Context, ids []int64) (map[int64]Source, error) {
	var found []Source
	if err := s.db.WithContext(ctx).Where("id IN ?", ids).Find(&found).Error; err != nil {
		return nil, fmt.Errorf("models: sources: %w", err)
	}
	out := make(map[int64]Source, len(found))
	for _, src := range found {
		out[src.ID] = src
	}
	return out, nil
}

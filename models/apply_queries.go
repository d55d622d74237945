package models

import (
	"context"
	"fmt"
	"strings"
	"time"
)

// EventSetOutcomeIfUnresolved records an outcome only while the event is
// still pending, waiting or retrying, and reports whether it did: a failed
// run must not overwrite what a peer's run decided in the meantime.
func (s *Store) EventSetOutcomeIfUnresolved(ctx context.Context, id string, o EventOutcome) (bool, error) {
	updates := map[string]any{"status": o.Status, "reason": o.Reason, "attempts": o.Attempts, "next_attempt_at": o.NextAttemptAt}
	if o.ContactID != "" {
		updates["contact_id"] = o.ContactID
	}
	switch o.Status {
	case EventPending, EventWaiting, EventRetrying:
	default:
		updates["processed_at"] = time.Now().UTC()
	}
	res := s.db.WithContext(ctx).Model(&Event{}).
		Where("id = ? AND status IN ?", id, []string{EventPending, EventWaiting, EventRetrying}).Updates(updates)
	if res.Error != nil {
		return false, fmt.Errorf("models: event outcome %s: %w", id, res.Error)
	}
	return res.RowsAffected == 1, nil
}

// TryAdvisoryXactLocks takes transaction-scoped advisory locks on every key in
// one round trip, without waiting, and reports whether it got them all. Locks
// it did get are held until the transaction ends (the caller rolls back).
func (s *Store) TryAdvisoryXactLocks(ctx context.Context, keys []string) (bool, error) {
	if len(keys) == 0 {
		return true, nil
	}
	var ok bool
	err := s.db.WithContext(ctx).Raw(`SELECT bool_and(pg_try_advisory_xact_lock(hashtextextended(k, 0))) FROM unnest(?::text[]) AS k`,
		pgTextArray(keys)).Scan(&ok).Error
	if err != nil {
		return false, fmt.Errorf("models: advisory locks: %w", err)
	}
	return ok, nil
}

// ContactsByIdentity returns, in one query, the live contact owning an email
// and the one owning a phone (either may be empty; nil when none).
func (s *Store) ContactsByIdentity(ctx context.Context, workspaceID int64, email, phone string) (byEmail, byPhone *Contact, err error) {
	if email == "" && phone == "" {
		return nil, nil, nil
	}
	var found []Contact
	err = s.db.WithContext(ctx).Where(`workspace_id = ? AND merged_into IS NULL AND ((email = ? AND ? <> '') OR (phone = ? AND ? <> '' AND NOT phone_shared))`,
		workspaceID, email, email, phone, phone).Limit(2).Find(&found).Error
	if err != nil {
		return nil, nil, fmt.Errorf("models: find contacts by identity: %w", err)
	}
	for i := range found {
		c := &found[i]
		if email != "" && c.Email != nil && *c.Email == email {
			byEmail = c
		}
		if phone != "" && c.Phone != nil && *c.Phone == phone && !c.PhoneShared {
			byPhone = c
		}
	}
	return byEmail, byPhone, nil
}

// ObservationsAddAll stores observations in one statement; like
// ObservationsAdd, an event's observation of a field is stored once.
func (s *Store) ObservationsAddAll(ctx context.Context, obs []Observation) error {
	if len(obs) == 0 {
		return nil
	}
	n := len(obs)
	ws := make([]int64, n)
	contact, field, value, source, basis, actor := make([]string, n), make([]string, n), make([]string, n), make([]string, n), make([]string, n), make([]string, n)
	observed := make([]time.Time, n)
	human, explicit := make([]bool, n), make([]bool, n)
	event := make([]*string, n)
	for i, o := range obs {
		ws[i], contact[i], field[i], value[i], source[i], basis[i], actor[i] = o.WorkspaceID, o.ContactID, o.Field, o.Value, o.Source, o.Basis, o.Actor
		observed[i], human[i], explicit[i], event[i] = o.ObservedAt, o.Human, o.ExplicitDelete, o.EventID
	}
	_, err := s.pool().ExecContext(ctx, `INSERT INTO observations (workspace_id, contact_id, field, value, source, observed_at, basis, human,
		explicit_delete, event_id, actor)
		SELECT ws, contact::uuid, field, value, source, observed, basis, human, explicit, event::uuid, actor
		FROM unnest($1::bigint[], $2::text[], $3::text[], $4::text[], $5::text[], $6::timestamptz[], $7::text[], $8::boolean[],
			$9::boolean[], $10::text[], $11::text[]) AS x(ws, contact, field, value, source, observed, basis, human, explicit, event, actor)
		ON CONFLICT (contact_id, field, event_id) WHERE event_id IS NOT NULL DO NOTHING`,
		ws, contact, field, value, source, observed, basis, human, explicit, event, actor)
	if err != nil {
		return fmt.Errorf("models: add %d observations: %w", n, err)
	}
	return nil
}

// pgTextArray renders keys as a Postgres text[] literal.
func pgTextArray(keys []string) string {
	var sb strings.Builder
	sb.WriteByte('{')
	for i, k := range keys {
		if i > 0 {
			sb.WriteByte(',')
		}
		sb.WriteByte('"')
		sb.WriteString(strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace(k))
		sb.WriteByte('"')
	}
	sb.WriteByte('}')
	return sb.String()
}

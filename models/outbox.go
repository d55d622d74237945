package models

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"
)

// Outbox kinds.
const (
	OutboxCRMUpsert  = "crm_upsert"
	OutboxSideEffect = "side_effect"
	OutboxAlert      = "alert"
)

// OutboxRow is work for the outside world, written in the same transaction as
// the change that caused it and identified by a stable id derived from the cause.
type OutboxRow struct {
	ID            int64
	WorkspaceID   int64
	ContactID     *string `gorm:"type:uuid"`
	Kind          string
	StableID      string
	Version       int64
	Action        string
	Payload       json.RawMessage `gorm:"type:jsonb"`
	Status        string
	Attempts      int
	NextAttemptAt time.Time
	LastError     string
	CreatedAt     time.Time
	SentAt        *time.Time
}

// TableName maps OutboxRow to outbox.
func (OutboxRow) TableName() string { return "outbox" }

// OutboxAdd inserts a row unless its stable id exists already (a replay or a
// re-saved rule never writes the same intent twice). It reports whether it inserted.
func (s *Store) OutboxAdd(ctx context.Context, r OutboxRow) (bool, error) {
	res := s.db.WithContext(ctx).Exec(`INSERT INTO outbox (workspace_id, contact_id, kind, stable_id, version, action, payload)
		VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT (workspace_id, stable_id) DO NOTHING`,
		r.WorkspaceID, r.ContactID, r.Kind, r.StableID, r.Version, r.Action, r.Payload)
	if res.Error != nil {
		return false, fmt.Errorf("models: outbox add: %w", res.Error)
	}
	return res.RowsAffected == 1, nil
}

// OutboxForContact lists a contact's outbox rows, newest first.
func (s *Store) OutboxForContact(ctx context.Context, contactID string, limit int) ([]OutboxRow, error) {
	var out []OutboxRow
	if err := s.db.WithContext(ctx).Where("contact_id = ?", contactID).Order("id DESC").Limit(limit).Find(&out).Error; err != nil {
		return nil, fmt.Errorf("models: outbox for contact: %w", err)
	}
	return out, nil
}

// OutboxAddAll inserts rows in one statement, skipping any whose stable id exists already (see
// OutboxAdd). The crm_upsert rows it inserts are handed to the sync queues in the same transaction, as
// SyncFanOut would hand them later: each contact's newest row is queued for every live destination of its
// workspace (skipped when there is none) and its older rows are superseded. Handing them over here spares
// every row the relay's claim and a second write of its status.
func (s *Store) OutboxAddAll(ctx context.Context, rows []OutboxRow) error {
	if len(rows) == 0 {
		return nil
	}
	n := len(rows)
	ws, version := make([]int64, n), make([]int64, n)
	contact := make([]*string, n)
	kind, stable, action, payload, status := make([]string, n), make([]string, n), make([]string, n), make([]string, n), make([]string, n)
	for i, r := range rows {
		ws[i], version[i], contact[i], kind[i], stable[i], action[i] = r.WorkspaceID, r.Version, r.ContactID, r.Kind, r.StableID, r.Action
		payload[i] = rawJSON(r.Payload, "null")
	}
	handoverStatuses(rows, status)
	res, err := s.pool().QueryContext(ctx, outboxAddAllSQL, ws, contact, kind, stable, version, action, payload, status)
	if err != nil {
		return fmt.Errorf("models: outbox add %d rows: %w", n, err)
	}
	defer res.Close()
	var queued []claimedUpsert
	for res.Next() {
		var r claimedUpsert
		if err := res.Scan(&r.id, &r.workspaceID, &r.contactID, &r.version); err != nil {
			return fmt.Errorf("models: outbox add %d rows: %w", n, err)
		}
		queued = append(queued, r)
	}
	if err := res.Err(); err != nil {
		return fmt.Errorf("models: outbox add %d rows: %w", n, err)
	}
	slices.SortFunc(queued, func(a, b claimedUpsert) int { return strings.Compare(a.contactID, b.contactID) })
	if err := s.queueNewest(ctx, queued); err != nil {
		return fmt.Errorf("models: outbox add: hand %d rows to the sync queues: %w", len(queued), err)
	}
	return nil
}

// handoverStatuses sets each row's status on insert: a contact's newest crm_upsert row is queued, its
// older ones in the same call superseded, and every other row pending for its relay.
func handoverStatuses(rows []OutboxRow, status []string) {
	newest := map[string]int{}
	for i, r := range rows {
		status[i] = OutboxPending
		if r.Kind != OutboxCRMUpsert || r.ContactID == nil {
			continue
		}
		j, seen := newest[*r.ContactID]
		switch {
		case !seen:
			newest[*r.ContactID] = i
		case rows[j].Version < r.Version:
			status[j], newest[*r.ContactID] = OutboxSuperseded, i
		default:
			status[i] = OutboxSuperseded
			continue
		}
		status[i] = OutboxQueued
	}
}

// outboxAddAllSQL inserts the rows with the statuses given, except that a queued row of a workspace with no
// live destination is skipped (sent at once: there is nothing to deliver to), and returns the rows it
// queued.
const outboxAddAllSQL = `WITH x AS (
		SELECT x.*, x.status = 'queued' AND NOT EXISTS (
			SELECT 1 FROM destinations d WHERE d.workspace_id = x.ws AND d.deleted_at IS NULL) AS nowhere
		FROM unnest($1::bigint[], $2::text[], $3::text[], $4::text[], $5::bigint[], $6::text[], $7::text[], $8::text[])
		AS x(ws, contact, kind, stable, version, action, payload, status)
	), added AS (
		INSERT INTO outbox (workspace_id, contact_id, kind, stable_id, version, action, payload, status, sent_at)
		SELECT ws, contact::uuid, kind, stable, version, action, payload::jsonb,
			CASE WHEN nowhere THEN 'skipped' ELSE status END, CASE WHEN nowhere THEN now() END
		FROM x
		ON CONFLICT (workspace_id, stable_id) DO NOTHING
		RETURNING id, workspace_id, contact_id, version, status)
	SELECT id, workspace_id, contact_id::text, version FROM added WHERE status = 'queued'`

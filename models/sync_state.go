package models

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"time"
)

// SyncState is what one destination holds for one contact, as far as leadgate knows.
type SyncState struct {
	DestinationID int64
	ContactID     string
	RemoteID      string
	Written       map[string]string `gorm:"serializer:json;type:jsonb"`
	LastVersion   int64
	SyncedAt      *time.Time
	Imported      bool
	// InDoubt is what leadgate sent in writes whose answer never came (crm.Contact.InDoubt).
	InDoubt map[string][]string `gorm:"serializer:json;type:jsonb"`
}

// TableName maps SyncState to sync_state.
func (SyncState) TableName() string { return "sync_state" }

// SyncConflict is a remote edit leadgate did not overwrite.
type SyncConflict struct {
	ID            int64     `json:"id"`
	DestinationID int64     `json:"destination_id"`
	ContactID     string    `json:"contact_id"`
	Field         string    `json:"field"`
	OurLast       string    `json:"our_last"`
	Remote        string    `json:"remote"`
	Version       int64     `json:"version"`
	ObservedAt    time.Time `json:"observed_at"`
}

// SyncLoad returns the contacts and their sync states (missing state: zero value) for a destination.
func (s *Store) SyncLoad(ctx context.Context, destinationID int64, contactIDs []string) (map[string]Contact, map[string]SyncState, error) {
	contacts := map[string]Contact{}
	states := map[string]SyncState{}
	if len(contactIDs) == 0 {
		return contacts, states, nil
	}
	var cs []Contact
	db := s.db.WithContext(ctx)
	if err := db.Where("id IN ?", contactIDs).Find(&cs).Error; err != nil {
		return nil, nil, fmt.Errorf("models: sync load contacts: %w", err)
	}
	for _, c := range cs {
		contacts[c.ID] = c
	}
	var ss []SyncState
	if err := db.Where("destination_id = ? AND contact_id IN ?", destinationID, contactIDs).Find(&ss).Error; err != nil {
		return nil, nil, fmt.Errorf("models: sync load states: %w", err)
	}
	for _, st := range ss {
		states[st.ContactID] = st
	}
	return contacts, states, nil
}

// SyncRecordInDoubt records, per contact, what a failed write sent without a trustworthy answer
// (crm.Result.InDoubt), so the next write of the contact knows those values may be leadgate's own.
func (s *Store) SyncRecordInDoubt(ctx context.Context, destinationID int64, doubt map[string]map[string][]string) error {
	if len(doubt) == 0 {
		return nil
	}
	b, err := json.Marshal(doubt)
	if err != nil {
		return fmt.Errorf("models: record in-doubt writes: encode: %w", err)
	}
	// In contact order, like SyncDone, so the two lock the same rows in the same order.
	err = s.db.WithContext(ctx).Exec(`INSERT INTO sync_state (destination_id, contact_id, in_doubt)
		SELECT ?, key::uuid, value FROM jsonb_each(?::jsonb) ORDER BY key
		ON CONFLICT (destination_id, contact_id) DO UPDATE SET in_doubt = EXCLUDED.in_doubt`, destinationID, string(b)).Error
	if err != nil {
		return fmt.Errorf("models: record in-doubt writes of destination %d: %w", destinationID, err)
	}
	return nil
}

// SyncStateGet returns one contact's state at a destination (ErrNotFound when never synced).
func (s *Store) SyncStateGet(ctx context.Context, destinationID int64, contactID string) (SyncState, error) {
	var st SyncState
	err := s.db.WithContext(ctx).Where("destination_id = ? AND contact_id = ?", destinationID, contactID).Take(&st).Error
	return st, syncNotFound(err, "sync state")
}

// SyncStatesPage lists a destination's synced contacts in contact id order after cursor (the drift check).
func (s *Store) SyncStatesPage(ctx context.Context, destinationID int64, after string, limit int) ([]SyncState, error) {
	var out []SyncState
	q := s.db.WithContext(ctx).Where("destination_id = ? AND remote_id <> ''", destinationID).Order("contact_id").Limit(limit)
	if after != "" {
		q = q.Where("contact_id > ?", after)
	}
	if err := q.Find(&out).Error; err != nil {
		return nil, fmt.Errorf("models: sync states: %w", err)
	}
	return out, nil
}

// SyncConflicts lists a destination's conflict observations newest first; Cursor is an id.
func (s *Store) SyncConflicts(ctx context.Context, destinationID int64, contactID string, page Page) ([]SyncConflict, error) {
	var out []SyncConflict
	q := s.db.WithContext(ctx).Table("sync_conflicts").Where("destination_id = ?", destinationID).Order("id DESC").Limit(page.Limit)
	if contactID != "" {
		q = q.Where("contact_id = ?", contactID)
	}
	if page.Cursor != "" {
		q = q.Where("id < ?", page.Cursor)
	}
	if err := q.Find(&out).Error; err != nil {
		return nil, fmt.Errorf("models: sync conflicts: %w", err)
	}
	return out, nil
}

// SyncDrift is one field whose CRM value differs from what leadgate last wrote.
type SyncDrift struct {
	DestinationID int64     `json:"destination_id"`
	ContactID     string    `json:"contact_id"`
	Field         string    `json:"field"`
	Written       string    `json:"written"`
	Remote        string    `json:"remote"`
	CheckedAt     time.Time `json:"checked_at"`
}

// SyncDriftReplace replaces the drift findings of the checked contacts with found.
func (s *Store) SyncDriftReplace(ctx context.Context, destinationID int64, checked []string, found []SyncDrift) error {
	return s.Tx(ctx, func(tx *Store) error {
		db := tx.db.WithContext(ctx)
		if len(checked) > 0 {
			if err := db.Exec(`DELETE FROM sync_drift WHERE destination_id = ? AND contact_id IN ?`, destinationID, checked).Error; err != nil {
				return fmt.Errorf("models: drift clear: %w", err)
			}
		}
		for _, d := range found {
			if err := db.Exec(`INSERT INTO sync_drift (destination_id, contact_id, field, written, remote) VALUES (?, ?, ?, ?, ?)`,
				destinationID, d.ContactID, d.Field, d.Written, d.Remote).Error; err != nil {
				return fmt.Errorf("models: drift add: %w", err)
			}
		}
		return nil
	})
}

// SyncDriftList returns a destination's current drift findings.
func (s *Store) SyncDriftList(ctx context.Context, destinationID int64, limit int) ([]SyncDrift, error) {
	var out []SyncDrift
	if err := s.db.WithContext(ctx).Table("sync_drift").Where("destination_id = ?", destinationID).
		Order("contact_id, field").Limit(limit).Find(&out).Error; err != nil {
		return nil, fmt.Errorf("models: drift list: %w", err)
	}
	return out, nil
}

// DestinationStats is the body of GET .../destinations/{id}/stats.
type DestinationStats struct {
	Calls            int64      `json:"crm_calls"`
	RateLimited      int64      `json:"rate_limited"`
	Failures         int64      `json:"failures"`
	Synced           int64      `json:"synced"`
	Pending          int64      `json:"pending"`
	Dead             int64      `json:"dead"`
	OldestPendingSec float64    `json:"oldest_pending_seconds"`
	SyncLagSec       float64    `json:"sync_lag_seconds"`
	Contacts         int64      `json:"contacts_synced"`
	Conflicts        int64      `json:"conflicts"`
	Drift            int64      `json:"drift"`
	OpenDeadLetters  int64      `json:"open_dead_letters"`
	Paused           bool       `json:"paused"`
	PausedReason     string     `json:"paused_reason,omitempty"`
	LastSyncAt       *time.Time `json:"last_sync_at"`
	LastError        string     `json:"last_error,omitempty"`
}

// DestinationStatsGet gathers a destination's counters and queue figures. Sync lag is the age of the
// oldest pending item (how far behind the CRM is); outbox age is the same figure in seconds.
func (s *Store) DestinationStatsGet(ctx context.Context, d Destination) (DestinationStats, error) {
	st := DestinationStats{Calls: d.CallsTotal, RateLimited: d.RateLimited, Failures: d.FailuresTotal, Synced: d.SyncedTotal,
		Paused: d.Paused, PausedReason: d.PausedReason, LastSyncAt: d.LastSyncAt, LastError: d.LastError}
	db := s.db.WithContext(ctx)
	var q struct {
		Pending int64
		Dead    int64
		Oldest  float64
	}
	if err := db.Raw(`SELECT count(*) FILTER (WHERE status = 'pending') AS pending, count(*) FILTER (WHERE status = 'dead') AS dead,
		coalesce(extract(epoch FROM now() - min(enqueued_at) FILTER (WHERE status = 'pending')), 0)::float8 AS oldest
		FROM sync_queue WHERE destination_id = ?`, d.ID).Scan(&q).Error; err != nil {
		return st, fmt.Errorf("models: destination stats: %w", err)
	}
	st.Pending, st.Dead, st.OldestPendingSec, st.SyncLagSec = q.Pending, q.Dead, q.Oldest, q.Oldest
	id := strconv.FormatInt(d.ID, 10)
	for _, c := range []struct {
		dst  *int64
		sql  string
		args []any
	}{
		{&st.Contacts, `SELECT count(*) FROM sync_state WHERE destination_id = ? AND remote_id <> ''`, []any{d.ID}},
		{&st.Conflicts, `SELECT count(*) FROM sync_conflicts WHERE destination_id = ?`, []any{d.ID}},
		{&st.Drift, `SELECT count(*) FROM sync_drift WHERE destination_id = ?`, []any{d.ID}},
		{&st.OpenDeadLetters, `SELECT count(*) FROM dead_letters WHERE workspace_id = ? AND status = 'open' AND payload->>'destination_id' = ?`, []any{d.WorkspaceID, id}},
	} {
		if err := db.Raw(c.sql, c.args...).Scan(c.dst).Error; err != nil {
			return st, fmt.Errorf("models: destination stats: %w", err)
		}
	}
	return st, nil
}

// SyncQueueGauge is one destination's queue depth and oldest pending age (Prometheus).
type SyncQueueGauge struct {
	DestinationID int64
	Kind          string
	Pending       int64
	Dead          int64
	OldestSec     float64
}

// SyncQueueGauges reads every live destination's queue figures.
func (s *Store) SyncQueueGauges(ctx context.Context) ([]SyncQueueGauge, error) {
	var out []SyncQueueGauge
	err := s.db.WithContext(ctx).Raw(`SELECT d.id AS destination_id, d.kind,
		count(q.contact_id) FILTER (WHERE q.status = 'pending') AS pending, count(q.contact_id) FILTER (WHERE q.status = 'dead') AS dead,
		coalesce(extract(epoch FROM now() - min(q.enqueued_at) FILTER (WHERE q.status = 'pending')), 0)::float8 AS oldest_sec
		FROM destinations d LEFT JOIN sync_queue q ON q.destination_id = d.id WHERE d.deleted_at IS NULL GROUP BY d.id, d.kind`).Scan(&out).Error
	if err != nil {
		return nil, fmt.Errorf("models: sync gauges: %w", err)
	}
	return out, nil
}

// OutboxGauge is the pending outbox depth and oldest age of one kind.
type OutboxGauge struct {
	Kind      string
	Pending   int64
	OldestSec float64
}

// OutboxGauges reads the pending outbox figures per kind.
func (s *Store) OutboxGauges(ctx context.Context) ([]OutboxGauge, error) {
	var out []OutboxGauge
	err := s.db.WithContext(ctx).Raw(`SELECT kind, count(*) AS pending, coalesce(extract(epoch FROM now() - min(created_at)), 0)::float8 AS oldest_sec
		FROM outbox WHERE status = 'pending' GROUP BY kind`).Scan(&out).Error
	if err != nil {
		return nil, fmt.Errorf("models: outbox gauges: %w", err)
	}
	return out, nil
}

// SyncForgetRemote clears a contact's remote id at a destination (the CRM no longer has that record), so
// the next attempt searches by email and phone again.
func (s *Store) SyncForgetRemote(ctx context.Context, destinationID int64, contactID string) error {
	if err := s.db.WithContext(ctx).Exec(`UPDATE sync_state SET remote_id = '' WHERE destination_id = ? AND contact_id = ?`,
		destinationID, contactID).Error; err != nil {
		return fmt.Errorf("models: forget remote id: %w", err)
	}
	return nil
}

package models

import (
	"context"
	"fmt"
)

// EventCounts are CONTRACT.md's stats counters. Received = Accepted +
// Duplicates + Refused; Accepted = Applied + Unchanged + Quarantined +
// Rejected + Dropped + Unresolved.
type EventCounts struct {
	Received    int64 `json:"received"`
	Accepted    int64 `json:"accepted"`
	Duplicates  int64 `json:"duplicates"`
	Refused     int64 `json:"refused"`
	Applied     int64 `json:"applied"`
	Unchanged   int64 `json:"unchanged"`
	Quarantined int64 `json:"quarantined"`
	Rejected    int64 `json:"rejected"`
	Dropped     int64 `json:"dropped"`
	Unresolved  int64 `json:"unresolved"`
}

// Stats is the body of GET /stats.
type Stats struct {
	Events        EventCounts `json:"events"`
	DeadLetters   int64       `json:"dead_letters"`
	OutboxPending int64       `json:"outbox_pending"`
}

// StatsGet counts a workspace's events by outcome, its open dead letters and
// its pending outbox rows.
func (s *Store) StatsGet(ctx context.Context, workspaceID int64) (Stats, error) {
	var st Stats
	rows := []struct {
		Status string
		N      int64
	}{}
	db := s.db.WithContext(ctx)
	if err := db.Raw(`SELECT status, count(*) AS n FROM events WHERE workspace_id = ? GROUP BY status`, workspaceID).Scan(&rows).Error; err != nil {
		return st, fmt.Errorf("models: stats events: %w", err)
	}
	c := &st.Events
	for _, r := range rows {
		c.Accepted += r.N
		switch r.Status {
		case EventApplied:
			c.Applied += r.N
		case EventUnchanged:
			c.Unchanged += r.N
		case EventQuarantined:
			c.Quarantined += r.N
		case EventRejected:
			c.Rejected += r.N
		case EventDropped:
			c.Dropped += r.N
		default:
			c.Unresolved += r.N
		}
	}
	if err := db.Raw(`SELECT coalesce(sum(duplicates), 0) FROM idempotency_keys WHERE workspace_id = ?`, workspaceID).Scan(&c.Duplicates).Error; err != nil {
		return st, fmt.Errorf("models: stats duplicates: %w", err)
	}
	var err error
	if c.Refused, err = s.refusedTotal(ctx, workspaceID); err != nil {
		return st, err
	}
	c.Received = c.Accepted + c.Duplicates + c.Refused
	if err := s.countIfTable(ctx, &st.DeadLetters, "dead_letters", "workspace_id = ? AND status = 'open'", workspaceID); err != nil {
		return st, err
	}
	if err := s.countIfTable(ctx, &st.OutboxPending, "outbox", "workspace_id = ? AND status IN ('pending','retrying','held')", workspaceID); err != nil {
		return st, err
	}
	// crm_upsert rows handed to the CRM relay wait in sync_queue, one row per destination and contact.
	var queued int64
	if err := s.countIfTable(ctx, &queued, "sync_queue", "workspace_id = ? AND status = 'pending'", workspaceID); err != nil {
		return st, err
	}
	st.OutboxPending += queued
	return st, nil
}

// countIfTable counts rows of a table created by a later migration; the
// ingest-only schema simply reports zero.
func (s *Store) countIfTable(ctx context.Context, dst *int64, table, where string, args ...any) error {
	var exists bool
	db := s.db.WithContext(ctx)
	if err := db.Raw(`SELECT to_regclass(?) IS NOT NULL`, table).Scan(&exists).Error; err != nil {
		return fmt.Errorf("models: stats %s: %w", table, err)
	}
	if !exists {
		return nil
	}
	if err := db.Table(table).Where(where, args...).Count(dst).Error; err != nil {
		return fmt.Errorf("models: stats %s: %w", table, err)
	}
	return nil
}

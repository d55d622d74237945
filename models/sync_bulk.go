package models

import (
	"context"
	"fmt"
	"time"
)

// SyncMarkBulk marks the destination's pending work as a resync or backfill, which a CRM with a bulk
// import sends through it (crm/syncer/bulk.go); it returns how many items it marked.
func (s *Store) SyncMarkBulk(ctx context.Context, destinationID int64) (int64, error) {
	res := s.db.WithContext(ctx).Exec(`UPDATE sync_queue SET bulk = true WHERE destination_id = ? AND status = 'pending' AND NOT bulk`, destinationID)
	if res.Error != nil {
		return 0, fmt.Errorf("models: mark bulk sync work of destination %d: %w", destinationID, res.Error)
	}
	return res.RowsAffected, nil
}

// SyncClaimBulk leases up to limit due items marked bulk, but only when at least least of them are due
// (below that the bulk import is not worth it and the items go out one by one); otherwise it claims none.
func (s *Store) SyncClaimBulk(ctx context.Context, destinationID int64, least, limit int, lease time.Duration) ([]SyncItem, error) {
	items, err := s.syncClaimAtLeast(ctx, `q.bulk`, destinationID, least, limit, lease)
	if err != nil {
		return nil, fmt.Errorf("models: claim bulk sync work of destination %d: %w", destinationID, err)
	}
	return items, nil
}

// SyncClaimBulkNew leases up to limit due live-lane items (not marked bulk) of contacts the destination holds
// no remote id for, when at least least are due: a backlog of new leads, which a CRM's bulk import can
// carry with no conflict check to make (there is no earlier write a person could have edited).
func (s *Store) SyncClaimBulkNew(ctx context.Context, destinationID int64, least, limit int, lease time.Duration) ([]SyncItem, error) {
	items, err := s.syncClaimAtLeast(ctx, `NOT q.bulk AND q.lane = 0 AND NOT EXISTS (SELECT 1 FROM sync_state s
		WHERE s.destination_id = q.destination_id AND s.contact_id = q.contact_id AND s.remote_id <> '')`, destinationID, least, limit, lease)
	if err != nil {
		return nil, fmt.Errorf("models: claim new-contact sync work of destination %d: %w", destinationID, err)
	}
	return items, nil
}

// syncClaimAtLeast leases up to limit due items matching cond (a fixed SQL condition on q), oldest due
// first, or none when fewer than least match.
func (s *Store) syncClaimAtLeast(ctx context.Context, cond string, destinationID int64, least, limit int, lease time.Duration) ([]SyncItem, error) {
	var out []SyncItem
	err := s.db.WithContext(ctx).Raw(`WITH c AS (
		  SELECT q.destination_id, q.contact_id FROM sync_queue q
		  WHERE q.destination_id = ? AND q.status = 'pending' AND `+cond+` AND q.next_attempt_at <= now() AND (q.lease_until IS NULL OR q.lease_until < now())
		  ORDER BY q.next_attempt_at, q.enqueued_at LIMIT ? FOR UPDATE OF q SKIP LOCKED)
		UPDATE sync_queue q SET lease_until = now() + make_interval(secs => ?)
		FROM c WHERE q.destination_id = c.destination_id AND q.contact_id = c.contact_id AND (SELECT count(*) FROM c) >= ?
		RETURNING q.destination_id, q.contact_id, q.workspace_id, q.version, q.outbox_id, q.attempts, q.dead_letter_id, q.enqueued_at`,
		destinationID, limit, lease.Seconds(), least).Scan(&out).Error
	return out, err
}

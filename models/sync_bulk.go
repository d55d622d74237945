package models

import (
	"context"
	"fmt"
	"time"
)

// SyncMarkBulk marks the destination's pending work as a resync or backfill, which a CRM with a bulk
// import sends through it (jobs/sync_bulk.go); it returns how many items it marked.
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
	var out []SyncItem
	err := s.db.WithContext(ctx).Raw(`WITH c AS (
		  SELECT destination_id, contact_id FROM sync_queue
		  WHERE destination_id = ? AND status = 'pending' AND bulk AND next_attempt_at <= now() AND (lease_until IS NULL OR lease_until < now())
		  ORDER BY next_attempt_at, enqueued_at LIMIT ? FOR UPDATE SKIP LOCKED)
		UPDATE sync_queue q SET lease_until = now() + make_interval(secs => ?)
		FROM c WHERE q.destination_id = c.destination_id AND q.contact_id = c.contact_id AND (SELECT count(*) FROM c) >= ?
		RETURNING q.destination_id, q.contact_id, q.workspace_id, q.version, q.outbox_id, q.attempts, q.dead_letter_id, q.enqueued_at`,
		destinationID, limit, lease.Seconds(), least).Scan(&out).Error
	if err != nil {
		return nil, fmt.Errorf("models: claim bulk sync work of destination %d: %w", destinationID, err)
	}
	return out, nil
}

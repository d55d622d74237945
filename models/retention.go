package models

import (
	"context"
	"fmt"
	"time"
)

// RetentionPurgeIdempotency deletes up to batch idempotency records older than
// cutoff and reports how many it deleted. Small batches keep each statement
// short, so ingest never waits behind a long delete.
func (s *Store) RetentionPurgeIdempotency(ctx context.Context, cutoff time.Time, batch int) (int64, error) {
	res := s.db.WithContext(ctx).Exec(`DELETE FROM idempotency_keys WHERE ctid IN (
		SELECT ctid FROM idempotency_keys WHERE created_at < ? LIMIT ?)`, cutoff, batch)
	if res.Error != nil {
		return 0, fmt.Errorf("models: purge idempotency keys: %w", res.Error)
	}
	return res.RowsAffected, nil
}

// RetentionPurgePayloads drops the raw payload of resolved events received
// before cutoff, keeping the event row (its outcome and counters) and the
// payloads of events that are still open dead letters.
func (s *Store) RetentionPurgePayloads(ctx context.Context, cutoff time.Time, batch int) (int64, error) {
	res := s.db.WithContext(ctx).Exec(`UPDATE events SET payload = NULL WHERE id IN (
		SELECT e.id FROM events e
		WHERE e.received_at < ? AND e.payload IS NOT NULL
		  AND e.status NOT IN ('pending', 'waiting', 'retrying')
		  AND NOT EXISTS (SELECT 1 FROM dead_letters d WHERE d.event_id = e.id AND d.status = 'open')
		  AND NOT EXISTS (SELECT 1 FROM dead_letters d WHERE d.event_ids @> ARRAY[e.id] AND d.status = 'open')
		LIMIT ?)`, cutoff, batch)
	if res.Error != nil {
		return 0, fmt.Errorf("models: purge payloads: %w", res.Error)
	}
	return res.RowsAffected, nil
}

package models

import (
	"context"
	"fmt"
	"time"

	"gorm.io/gorm"
)

// IngestItem is one event to store; Key is its idempotency key. When Windowed
// is set, Key is a content hash matched within a sliding window instead of forever.
type IngestItem struct {
	Event    Event
	Key      string
	Windowed bool
}

// IngestResult says what became of one item.
type IngestResult struct {
	EventID   string
	Duplicate bool
}

// IngestStore inserts the items of one delivery atomically. The unique key of
// idempotency_keys is the truth: of any number of concurrent deliveries of one
// key, exactly one inserts, and the others wait for its commit and answer with
// its event id. Windowed keys are serialized by a transaction advisory lock.
func (s *Store) IngestStore(ctx context.Context, items []IngestItem, window time.Duration) ([]IngestResult, error) {
	out := make([]IngestResult, len(items))
	err := s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		for i := range items {
			r, err := ingestOne(tx, &items[i], window)
			if err != nil {
				return err
			}
			out[i] = r
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("models: store events: %w", err)
	}
	return out, nil
}

func ingestOne(tx *gorm.DB, it *IngestItem, window time.Duration) (IngestResult, error) {
	ev := &it.Event
	key := it.Key
	if it.Windowed {
		hash := it.Key
		if err := tx.Exec("SELECT pg_advisory_xact_lock(hashtextextended(?, 0))", fmt.Sprintf("%d:%s", ev.WorkspaceID, hash)).Error; err != nil {
			return IngestResult{}, err
		}
		var prior struct {
			ID             string
			IdempotencyKey string
		}
		err := tx.Raw(`SELECT id, idempotency_key FROM events
			WHERE workspace_id = ? AND content_hash = ? AND received_at > now() - make_interval(secs => ?)
			ORDER BY received_at DESC LIMIT 1`, ev.WorkspaceID, hash, window.Seconds()).Scan(&prior).Error
		if err != nil {
			return IngestResult{}, err
		}
		if prior.ID != "" {
			return IngestResult{EventID: prior.ID, Duplicate: true}, countDuplicate(tx, ev.WorkspaceID, prior.IdempotencyKey)
		}
		ev.ContentHash = &hash
		key = "h:" + hash + "@" + ev.ID
	}
	ev.IdempotencyKey = key
	if ev.ReceivedAt.IsZero() {
		ev.ReceivedAt = time.Now().UTC()
	}
	var claimed []string
	err := tx.Raw(`INSERT INTO idempotency_keys (workspace_id, key, event_id, source_id) VALUES (?, ?, ?, ?)
		ON CONFLICT DO NOTHING RETURNING event_id`, ev.WorkspaceID, key, ev.ID, ev.SourceID).Scan(&claimed).Error
	if err != nil {
		return IngestResult{}, err
	}
	if len(claimed) == 0 {
		var original string
		err := tx.Raw(`UPDATE idempotency_keys SET duplicates = duplicates + 1, last_seen_at = now()
			WHERE workspace_id = ? AND key = ? RETURNING event_id`, ev.WorkspaceID, key).Scan(&original).Error
		return IngestResult{EventID: original, Duplicate: true}, err
	}
	if err := tx.Omit("ProcessedAt").Create(ev).Error; err != nil {
		return IngestResult{}, err
	}
	return IngestResult{EventID: ev.ID}, nil
}

// DuplicateCount records a duplicate delivery answered from the fast gate
// (Redis), so that received = accepted + duplicates stays true.
func (s *Store) DuplicateCount(ctx context.Context, workspaceID int64, key string) error {
	return countDuplicate(s.db.WithContext(ctx), workspaceID, key)
}

func countDuplicate(tx *gorm.DB, workspaceID int64, key string) error {
	err := tx.Exec(`UPDATE idempotency_keys SET duplicates = duplicates + 1, last_seen_at = now()
		WHERE workspace_id = ? AND key = ?`, workspaceID, key).Error
	if err != nil {
		return fmt.Errorf("models: count duplicate: %w", err)
	}
	return nil
}

// IngestReplaySpooled inserts events that were spooled while Postgres was
// down, each deduplicated exactly like a live delivery.
func (s *Store) IngestReplaySpooled(ctx context.Context, items []IngestItem, window time.Duration) ([]IngestResult, error) {
	for i := range items {
		items[i].Event.Spooled = true
	}
	return s.IngestStore(ctx, items, window)
}

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
	if len(items) == 1 && !items[0].Windowed {
		r, err := ingestSingle(s.db.WithContext(ctx), &items[0])
		if err != nil {
			return nil, fmt.Errorf("models: store event: %w", err)
		}
		return []IngestResult{r}, nil
	}
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
			WHERE workspace_id = ? AND content_hash = ? AND received_at > ?::timestamptz - make_interval(secs => ?)
			ORDER BY received_at DESC LIMIT 1`, ev.WorkspaceID, hash, receivedAt(ev), window.Seconds()).Find(&prior).Error
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
		ON CONFLICT DO NOTHING RETURNING event_id`, ev.WorkspaceID, key, ev.ID, ev.SourceID).Find(&claimed).Error
	if err != nil {
		return IngestResult{}, err
	}
	if len(claimed) == 0 {
		var original string
		err := tx.Raw(`UPDATE idempotency_keys SET duplicates = duplicates + 1, last_seen_at = now()
			WHERE workspace_id = ? AND key = ? RETURNING event_id`, ev.WorkspaceID, key).Find(&original).Error
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

// DuplicateCountN records n duplicate deliveries of a key at once (duplicates answered while Postgres
// could not count them).
func (s *Store) DuplicateCountN(ctx context.Context, workspaceID int64, key string, n int) error {
	err := s.db.WithContext(ctx).Exec(`UPDATE idempotency_keys SET duplicates = duplicates + ?, last_seen_at = now()
		WHERE workspace_id = ? AND key = ?`, n, workspaceID, key).Error
	if err != nil {
		return fmt.Errorf("models: count %d duplicates: %w", n, err)
	}
	return nil
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

// receivedAt is the event's arrival time (now when unset), the reference of the
// sliding window, so a replayed spool record is judged by when it arrived.
func receivedAt(ev *Event) time.Time {
	if ev.ReceivedAt.IsZero() {
		ev.ReceivedAt = time.Now().UTC()
	}
	return ev.ReceivedAt
}

// ingestSingle stores a one-event delivery with a provider key in a single
// statement (claim the key, insert the event only if the claim won): one round
// trip and no explicit transaction on the hot path.
func ingestSingle(db *gorm.DB, it *IngestItem) (IngestResult, error) {
	ev := &it.Event
	ev.IdempotencyKey = it.Key
	receivedAt(ev)
	var inserted int
	err := db.Raw(`WITH claim AS (
			INSERT INTO idempotency_keys (workspace_id, key, event_id, source_id) VALUES (?, ?, ?::uuid, ?)
			ON CONFLICT DO NOTHING RETURNING event_id
		), ins AS (
			INSERT INTO events (id, workspace_id, source_id, idempotency_key, event_type, channel, occurred_at, received_at,
				email, email_raw, email_problem, phone, phone_raw, phone_problem, first_name, last_name, company,
				target_stage, current_stage, fields, attribution, hydration, rule_overrides, payload, content_type,
				status, reason, attempts, processed_at, spooled)
			SELECT event_id, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?::jsonb, ?::jsonb, ?::jsonb, ?::jsonb, ?::jsonb, ?,
				?, ?, ?, ?, ? FROM claim
			RETURNING 1
		)
		SELECT count(*) FROM ins`,
		ev.WorkspaceID, it.Key, ev.ID, ev.SourceID,
		ev.WorkspaceID, ev.SourceID, it.Key, ev.EventType, ev.Channel, ev.OccurredAt, ev.ReceivedAt,
		ev.Email, ev.EmailRaw, ev.EmailProblem, ev.Phone, ev.PhoneRaw, ev.PhoneProblem, ev.FirstName, ev.LastName, ev.Company,
		ev.TargetStage, ev.CurrentStage, jsonText(ev.Fields, "{}"), jsonText(ev.Attribution, "{}"), jsonText(ev.Hydration, ""),
		jsonText(ev.RuleOverrides, ""), jsonText(ev.Payload, ""), ev.ContentType,
		ev.Status, ev.Reason, ev.Attempts, ev.ProcessedAt, ev.Spooled).Find(&inserted).Error
	if err != nil {
		return IngestResult{}, err
	}
	if inserted == 1 {
		return IngestResult{EventID: ev.ID}, nil
	}
	var original string
	err = db.Raw(`UPDATE idempotency_keys SET duplicates = duplicates + 1, last_seen_at = now()
		WHERE workspace_id = ? AND key = ? RETURNING event_id`, ev.WorkspaceID, it.Key).Find(&original).Error
	return IngestResult{EventID: original, Duplicate: true}, err
}

// jsonText passes a JSON document as text for a ::jsonb cast (nil when empty
// and no default is given).
func jsonText(b []byte, def string) *string {
	if len(b) == 0 {
		if def == "" {
			return nil
		}
		return &def
	}
	s := string(b)
	return &s
}

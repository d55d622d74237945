package models

import (
	"context"
	"errors"
	"fmt"
	"time"

	"gorm.io/gorm"
)

// Delivery outcomes as recorded in SourceDeliveries.Recent, one letter each.
const (
	DeliveryAccepted           = 'a' // stored or answered duplicate
	DeliveryRefusedSignature   = 's' // 401: bad or stale signature
	DeliveryRefusedMalformed   = 'm' // 400: malformed body
	DeliveryRefusedTooLarge    = 'l' // 413
	DeliveryRefusedUnsupported = 'u' // 415: unsupported content type
)

// RefusalSignaturePrefix starts the last refused reason of a signature
// refusal ("signature: signature mismatch").
const RefusalSignaturePrefix = "signature: "

// RecentDeliveries is how many delivery outcomes a source keeps for its
// refusal alarm.
const RecentDeliveries = 100

// SourceDeliveryDelta is what one process saw of a source since its last
// flush: refusal counts and the outcomes in arrival order.
type SourceDeliveryDelta struct {
	SourceID, WorkspaceID int64
	Signature, Malformed  int64
	TooLarge, Unsupported int64
	Outcomes              string // one letter per delivery, oldest first
	LastRefusedAt         *time.Time
	LastRefusedReason     string
}

// SourceDeliveries is a source's refused-delivery counters and its latest outcomes.
type SourceDeliveries struct {
	SourceID           int64      `json:"-"`
	WorkspaceID        int64      `json:"-"`
	RefusedSignature   int64      `json:"refused_signature"`
	RefusedMalformed   int64      `json:"refused_malformed"`
	RefusedTooLarge    int64      `json:"refused_too_large"`
	RefusedUnsupported int64      `json:"refused_unsupported"`
	Recent             string     `json:"-"`
	LastRefusedAt      *time.Time `json:"last_refused_at"`
	LastRefusedReason  string     `json:"last_refused_reason"`
	UpdatedAt          time.Time  `json:"-"`
}

// TableName maps SourceDeliveries to source_deliveries.
func (SourceDeliveries) TableName() string { return "source_deliveries" }

// Refused is the source's refused deliveries, all reasons.
func (d SourceDeliveries) Refused() int64 {
	return d.RefusedSignature + d.RefusedMalformed + d.RefusedTooLarge + d.RefusedUnsupported
}

// SourceDeliveriesAdd adds one flush's deltas in one transaction and returns
// every touched source's row as it now is. Recent keeps the last
// RecentDeliveries outcomes across every process's flushes.
func (s *Store) SourceDeliveriesAdd(ctx context.Context, deltas []SourceDeliveryDelta) ([]SourceDeliveries, error) {
	out := make([]SourceDeliveries, 0, len(deltas))
	err := s.Tx(ctx, func(tx *Store) error {
		for _, d := range deltas {
			var row SourceDeliveries
			err := tx.db.WithContext(ctx).Raw(`INSERT INTO source_deliveries AS sd (source_id, workspace_id, refused_signature, refused_malformed,
				refused_too_large, refused_unsupported, recent, last_refused_at, last_refused_reason, updated_at)
				VALUES (@source, @ws, @sig, @mal, @big, @ct, right(@recent, @keep), @at, @reason, now())
				ON CONFLICT (source_id) DO UPDATE SET
				  refused_signature = sd.refused_signature + EXCLUDED.refused_signature,
				  refused_malformed = sd.refused_malformed + EXCLUDED.refused_malformed,
				  refused_too_large = sd.refused_too_large + EXCLUDED.refused_too_large,
				  refused_unsupported = sd.refused_unsupported + EXCLUDED.refused_unsupported,
				  recent = right(sd.recent || EXCLUDED.recent, @keep),
				  last_refused_at = coalesce(EXCLUDED.last_refused_at, sd.last_refused_at),
				  last_refused_reason = CASE WHEN EXCLUDED.last_refused_at IS NULL THEN sd.last_refused_reason ELSE EXCLUDED.last_refused_reason END,
				  updated_at = now()
				RETURNING *`,
				map[string]any{"source": d.SourceID, "ws": d.WorkspaceID, "sig": d.Signature, "mal": d.Malformed, "big": d.TooLarge,
					"ct": d.Unsupported, "recent": d.Outcomes, "keep": RecentDeliveries, "at": d.LastRefusedAt, "reason": d.LastRefusedReason}).
				Scan(&row).Error
			if err != nil {
				return fmt.Errorf("models: add deliveries of source %d: %w", d.SourceID, err)
			}
			out = append(out, row)
		}
		return nil
	})
	return out, err
}

// SourceDeliveriesGet returns a source's counters (zero when it has none yet).
func (s *Store) SourceDeliveriesGet(ctx context.Context, sourceID int64) (SourceDeliveries, error) {
	var d SourceDeliveries
	err := s.db.WithContext(ctx).Where("source_id = ?", sourceID).Take(&d).Error
	if errors.Is(err, gorm.ErrRecordNotFound) {
		return SourceDeliveries{SourceID: sourceID}, nil
	}
	if err != nil {
		return d, fmt.Errorf("models: deliveries of source %d: %w", sourceID, err)
	}
	return d, nil
}

// SourceDeliveriesKeepRecent cuts a source's recent outcomes to the last n
// (a cleared alarm starts its window afresh).
func (s *Store) SourceDeliveriesKeepRecent(ctx context.Context, sourceID int64, n int) error {
	err := s.db.WithContext(ctx).Exec(`UPDATE source_deliveries SET recent = right(recent, ?) WHERE source_id = ?`, n, sourceID).Error
	if err != nil {
		return fmt.Errorf("models: trim recent deliveries of source %d: %w", sourceID, err)
	}
	return nil
}

// refusedTotal sums a workspace's refused deliveries (the stats' refused).
func (s *Store) refusedTotal(ctx context.Context, workspaceID int64) (int64, error) {
	var n int64
	err := s.db.WithContext(ctx).Raw(`SELECT coalesce(sum(refused_signature + refused_malformed + refused_too_large + refused_unsupported), 0)
		FROM source_deliveries WHERE workspace_id = ?`, workspaceID).Scan(&n).Error
	if err != nil {
		return 0, fmt.Errorf("models: stats refused: %w", err)
	}
	return n, nil
}

package jobs

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/hibiken/asynq"

	"github.com/leadgate/leadgate/models"
)

// TypeRetention purges expired idempotency records and event payloads.
const TypeRetention = "maintenance:retention"

// NewRetentionTask builds the periodic retention task.
func NewRetentionTask() *asynq.Task {
	return asynq.NewTask(TypeRetention, nil, asynq.Queue(QueueMaintenance), asynq.MaxRetry(0), asynq.Timeout(30*time.Minute),
		asynq.Unique(time.Hour))
}

// MinIdempotencyRetention is the floor for idempotency records: longer than the
// longest documented sender retry horizon (Stripe 3 days, Standard Webhooks ~3 days).
const MinIdempotencyRetention = 7 * 24 * time.Hour

// Retention deletes in small batches with a pause between them so that
// ingest keeps its latency while a large backlog is cleaned.
type Retention struct {
	Store       *models.Store
	Log         *slog.Logger
	Idempotency time.Duration // default 30 days, at least MinIdempotencyRetention
	Payloads    time.Duration // default 30 days; 0 keeps payloads forever
	Batch       int           // rows per statement (default 1000)
	Pause       time.Duration // between batches (default 20 ms)
	Now         func() time.Time
}

// ProcessTask implements asynq.Handler.
func (r *Retention) ProcessTask(ctx context.Context, _ *asynq.Task) error {
	_, _, err := r.Run(ctx)
	return err
}

// Run purges until nothing expired is left and reports what it removed.
func (r *Retention) Run(ctx context.Context) (keys, payloads int64, err error) {
	now := time.Now()
	if r.Now != nil {
		now = r.Now()
	}
	keep := max(r.Idempotency, MinIdempotencyRetention)
	if r.Idempotency == 0 {
		keep = 30 * 24 * time.Hour
	}
	if keys, err = r.loop(ctx, func(ctx context.Context, n int) (int64, error) {
		return r.Store.RetentionPurgeIdempotency(ctx, now.Add(-keep), n)
	}); err != nil {
		return keys, 0, err
	}
	if r.Payloads > 0 {
		if payloads, err = r.loop(ctx, func(ctx context.Context, n int) (int64, error) {
			return r.Store.RetentionPurgePayloads(ctx, now.Add(-r.Payloads), n)
		}); err != nil {
			return keys, payloads, err
		}
	}
	// Ended and expired sign-ins are kept a week for the record, then dropped.
	sessions, err := r.Store.UISessionsPrune(ctx, now.Add(-7*24*time.Hour))
	if err != nil {
		return keys, payloads, fmt.Errorf("jobs: retention: %w", err)
	}
	if keys+payloads+sessions > 0 {
		r.Log.Info("retention: purged", "idempotency_keys", keys, "payloads", payloads, "ui_sessions", sessions)
	}
	return keys, payloads, nil
}

func (r *Retention) loop(ctx context.Context, step func(context.Context, int) (int64, error)) (int64, error) {
	batch := r.Batch
	if batch <= 0 {
		batch = 1000
	}
	pause := r.Pause
	if pause == 0 {
		pause = 20 * time.Millisecond
	}
	var total int64
	for {
		n, err := step(ctx, batch)
		total += n
		if err != nil {
			return total, fmt.Errorf("jobs: retention: %w", err)
		}
		if n < int64(batch) {
			return total, nil
		}
		select {
		case <-ctx.Done():
			return total, ctx.Err()
		case <-time.After(pause):
		}
	}
}

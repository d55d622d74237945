package jobs

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/hibiken/asynq"

	"github.com/leadgate/leadgate/models"
)

// TypeSweepStranded re-announces inbox events left unresolved: a trigger that
// failed while Redis was down, or a task lost with Redis data.
const TypeSweepStranded = "maintenance:sweep_stranded"

// NewSweepStrandedTask builds the periodic sweep task.
func NewSweepStrandedTask() *asynq.Task {
	return asynq.NewTask(TypeSweepStranded, nil, asynq.Queue(QueueMaintenance), asynq.MaxRetry(0), asynq.Timeout(2*time.Minute))
}

// SweepStranded is the sweep's handler.
type SweepStranded struct {
	Store *models.Store
	Queue Queue
	Log   *slog.Logger
	// Grace is how old an unresolved event must be before it counts as stranded.
	Grace time.Duration
}

// ProcessTask wakes the apply drainers for stranded events and re-enqueues
// the tasks of stranded events that wait for hydration.
func (h *SweepStranded) ProcessTask(ctx context.Context, _ *asynq.Task) error {
	n, err := h.Sweep(ctx)
	if n > 0 {
		h.Log.Info("stranded events re-announced", "count", n)
	}
	return err
}

// Sweep does one pass and reports how many stranded events it found (those a
// batch claims counted up to 1000).
func (h *SweepStranded) Sweep(ctx context.Context) (int, error) {
	olderThan := time.Now().Add(-h.Grace)
	n, err := h.Store.EventsStranded(ctx, olderThan, 1000)
	if err != nil {
		return 0, fmt.Errorf("jobs: sweep stranded: %w", err)
	}
	if n > 0 {
		// One trigger covers them all: the drainer claims whatever is due.
		if err := h.Queue.EnqueueApplyBatch(ctx); err != nil {
			return 0, fmt.Errorf("jobs: sweep: %w", err)
		}
	}
	for after := ""; ; {
		ids, err := h.Store.EventsStrandedHydrating(ctx, olderThan, after, 1000)
		if err != nil {
			return n, fmt.Errorf("jobs: sweep stranded: %w", err)
		}
		for _, id := range ids {
			// The event's own task may still exist, orphaned "active" by a
			// killed worker (asynq recovers it only a minute or more after its
			// lease expires): a sweep task id of its own gets the event applied
			// now. Apply is idempotent, so the orphan running later is harmless.
			_, err := h.Queue.Client.EnqueueContext(ctx, NewApplyEventTask(id), asynq.TaskID("apply:"+id+":sweep"))
			if err != nil && !errors.Is(err, asynq.ErrTaskIDConflict) && !errors.Is(err, asynq.ErrDuplicateTask) {
				return n, fmt.Errorf("jobs: sweep enqueue %s: %w", id, err)
			}
		}
		n += len(ids)
		if len(ids) < 1000 {
			return n, nil
		}
		after = ids[len(ids)-1]
	}
}

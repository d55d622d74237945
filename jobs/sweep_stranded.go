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

// TypeSweepStranded re-enqueues inbox events left unresolved without a task:
// an enqueue that failed while Redis was down, or a task lost with Redis data.
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

// ProcessTask enqueues apply tasks for stranded events (at most one sweep
// task per event at a time).
func (h *SweepStranded) ProcessTask(ctx context.Context, _ *asynq.Task) error {
	n, err := h.Sweep(ctx)
	if n > 0 {
		h.Log.Info("stranded events re-enqueued", "count", n)
	}
	return err
}

// Sweep does one pass and reports how many events it enqueued.
func (h *SweepStranded) Sweep(ctx context.Context) (int, error) {
	total := 0
	for {
		ids, err := h.Store.EventsStranded(ctx, time.Now().Add(-h.Grace), 1000)
		if err != nil {
			return total, fmt.Errorf("jobs: sweep stranded: %w", err)
		}
		for _, id := range ids {
			// The event's own task may still exist, orphaned "active" by a
			// killed worker (asynq recovers it only a minute or more after its
			// lease expires): a sweep task id of its own gets the event applied
			// now. Apply is idempotent, so the orphan running later is harmless.
			_, err := h.Queue.Client.EnqueueContext(ctx, NewApplyEventTask(id), asynq.TaskID("apply:"+id+":sweep"))
			if err != nil && !errors.Is(err, asynq.ErrTaskIDConflict) && !errors.Is(err, asynq.ErrDuplicateTask) {
				return total, fmt.Errorf("jobs: sweep enqueue %s: %w", id, err)
			}
		}
		total += len(ids)
		if len(ids) < 1000 {
			return total, nil
		}
	}
}

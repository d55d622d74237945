// Package jobs holds leadgate's asynq task types, their handlers and the
// scheduler's periodic work.
package jobs

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/hibiken/asynq"
)

// Queue names; apply work is latency-sensitive, sync and maintenance are not.
const (
	QueueApply       = "apply"
	QueueSync        = "sync"
	QueueMaintenance = "maintenance"
)

// Queues are the weights the worker gives each queue.
var Queues = map[string]int{QueueApply: 6, QueueSync: 3, QueueMaintenance: 1}

// Queue enqueues leadgate's tasks. Enqueueing is always done after the
// Postgres commit; a failed enqueue is repaired by the stranded-event sweep.
type Queue struct {
	Client *asynq.Client
}

// EnqueueApply schedules the apply task of one inbox event. The task id is the
// event id, so concurrent or repeated enqueues of one event collapse into one task.
func (q Queue) EnqueueApply(ctx context.Context, eventID string) error {
	return q.EnqueueApplyIn(ctx, eventID, 0)
}

// EnqueueApplyIn schedules the apply task after delay (0: now).
func (q Queue) EnqueueApplyIn(ctx context.Context, eventID string, delay time.Duration) error {
	var opts []asynq.Option
	if delay > 0 {
		opts = append(opts, asynq.ProcessIn(delay))
	}
	_, err := q.Client.EnqueueContext(ctx, NewApplyEventTask(eventID), opts...)
	if errors.Is(err, asynq.ErrTaskIDConflict) || errors.Is(err, asynq.ErrDuplicateTask) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("jobs: enqueue apply %s: %w", eventID, err)
	}
	return nil
}

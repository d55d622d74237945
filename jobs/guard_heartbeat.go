package jobs

import (
	"context"
	"time"

	"github.com/hibiken/asynq"

	"github.com/leadgate/leadgate/guards/alarm"
)

// TypeGuardHeartbeat is the scheduler's dead-man tick (every minute).
const TypeGuardHeartbeat = "guard:heartbeat"

// NewGuardHeartbeatTask builds the tick. It is never retried: a late retry
// would hide exactly the gap the tick exists to reveal.
func NewGuardHeartbeatTask() *asynq.Task {
	return asynq.NewTask(TypeGuardHeartbeat, nil, asynq.Queue(QueueMaintenance), asynq.MaxRetry(0),
		asynq.Timeout(30*time.Second), asynq.Unique(55*time.Second))
}

// GuardHeartbeat is the tick's handler.
type GuardHeartbeat struct {
	Deadman *alarm.Deadman
}

// ProcessTask records the tick, alerts on a gap and pings heartbeat URLs.
func (h *GuardHeartbeat) ProcessTask(ctx context.Context, _ *asynq.Task) error {
	return h.Deadman.Tick(ctx)
}

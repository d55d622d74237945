package jobs

import (
	"context"
	"time"

	"github.com/hibiken/asynq"

	"github.com/leadgate/leadgate/guards/alert"
)

// TypeAlertDeliver delivers due alert outbox rows to their channels.
const TypeAlertDeliver = "alert:deliver"

// NewAlertDeliverTask builds the periodic alert relay pass.
func NewAlertDeliverTask() *asynq.Task {
	return asynq.NewTask(TypeAlertDeliver, nil, asynq.Queue(QueueSync), asynq.MaxRetry(0),
		asynq.Timeout(2*time.Minute), asynq.Unique(2*time.Minute))
}

// AlertDeliver is the relay pass's handler.
type AlertDeliver struct {
	Relay *alert.Relay
}

// alertBatch is how many rows one claim takes; a pass claims until the
// due rows run out or maxAlertBatches were taken.
const (
	alertBatch      = 50
	maxAlertBatches = 20
)

// ProcessTask delivers until no alert is due.
func (h *AlertDeliver) ProcessTask(ctx context.Context, _ *asynq.Task) error {
	for range maxAlertBatches {
		n, err := h.Relay.RunOnce(ctx, alertBatch)
		if err != nil {
			return err
		}
		if n < alertBatch {
			return nil
		}
	}
	return nil
}

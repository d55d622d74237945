package jobs

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/hibiken/asynq"

	"github.com/leadgate/leadgate/lifecycle/apply"
)

// ApplyEvent is the handler of TypeApplyEvent.
type ApplyEvent struct {
	Applier *apply.Applier
}

// ProcessTask applies the event; a busy contact comes back as a retry that
// IsFailure does not count.
func (h *ApplyEvent) ProcessTask(ctx context.Context, t *asynq.Task) error {
	var p ApplyEventPayload
	if err := json.Unmarshal(t.Payload(), &p); err != nil || p.EventID == "" {
		return fmt.Errorf("jobs: bad apply payload %q: %w", t.Payload(), asynq.SkipRetry)
	}
	return h.Applier.Apply(ctx, p.EventID)
}

// IsFailure tells asynq which errors are real failures: lock contention is not.
func IsFailure(err error) bool {
	var busy *apply.BusyError
	return !errors.As(err, &busy)
}

// Waker is what a batch trigger wakes (apply.Drainer).
type Waker interface{ Kick() }

// ApplyBatch is the handler of TypeApplyBatch: it wakes this process's drainer and returns at once.
type ApplyBatch struct{ Drainer Waker }

// ProcessTask wakes the drainer.
func (h *ApplyBatch) ProcessTask(context.Context, *asynq.Task) error {
	h.Drainer.Kick()
	return nil
}

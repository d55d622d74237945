package jobs

import (
	"context"
	"errors"
	"time"

	"github.com/hibiken/asynq"

	"github.com/leadgate/leadgate/guards/alarm"
)

// TypeGuardCheckAlarms evaluates every silence and health alarm once.
const TypeGuardCheckAlarms = "guard:check_alarms"

// NewGuardCheckAlarmsTask builds the periodic alarm check. A check that is
// still queued when the next is due collapses into it (Unique).
func NewGuardCheckAlarmsTask() *asynq.Task {
	return asynq.NewTask(TypeGuardCheckAlarms, nil, asynq.Queue(QueueMaintenance), asynq.MaxRetry(0),
		asynq.Timeout(50*time.Second), asynq.Unique(55*time.Second))
}

// GuardCheckAlarms is the alarm check's handler.
type GuardCheckAlarms struct {
	Monitor *alarm.Monitor
}

// ProcessTask checks silence and health; a failure of one does not skip the other.
func (h *GuardCheckAlarms) ProcessTask(ctx context.Context, _ *asynq.Task) error {
	return errors.Join(h.Monitor.CheckSilence(ctx), h.Monitor.CheckHealth(ctx))
}

// registerGuards adds the guard tasks whose dependencies are set.
func registerGuards(mux *asynq.ServeMux, d Deps) {
	if d.Alarms != nil {
		mux.Handle(TypeGuardCheckAlarms, &GuardCheckAlarms{Monitor: d.Alarms})
	}
	if d.Deadman != nil {
		mux.Handle(TypeGuardHeartbeat, &GuardHeartbeat{Deadman: d.Deadman})
	}
	if d.AlertRelay != nil {
		mux.Handle(TypeAlertDeliver, &AlertDeliver{Relay: d.AlertRelay})
	}
}

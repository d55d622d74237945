package jobs

import (
	"context"
	"errors"
	"log/slog"
	"time"

	"github.com/hibiken/asynq"

	"github.com/leadgate/leadgate/guards/alarm"
	"github.com/leadgate/leadgate/guards/alert"
	"github.com/leadgate/leadgate/lifecycle/apply"
	"github.com/leadgate/leadgate/models"
)

// Deps are what task handlers need.
type Deps struct {
	Store   *models.Store
	Queue   Queue
	Log     *slog.Logger
	Applier *apply.Applier
	// Drainer applies the inbox in batches; the batch trigger wakes it (nil: not registered).
	Drainer *apply.Drainer
	// Retention periods (see jobs.Retention).
	RetentionIdempotency, RetentionPayloads time.Duration
	// Guards (nil: not registered).
	Alarms     *alarm.Monitor
	Deadman    *alarm.Deadman
	AlertRelay *alert.Relay
	// Sync is the CRM sync (outbox relay, side effects, imports, drift); nil: not registered.
	Sync *SyncTasks
}

// NewMux registers every task handler.
func NewMux(d Deps) *asynq.ServeMux {
	mux := asynq.NewServeMux()
	mux.Handle(TypeSweepStranded, &SweepStranded{Store: d.Store, Queue: d.Queue, Log: d.Log, Grace: 20 * time.Second})
	mux.Handle(TypeRetention, &Retention{Store: d.Store, Log: d.Log, Idempotency: d.RetentionIdempotency, Payloads: d.RetentionPayloads})
	var applyEvent asynq.Handler = &ApplyEvent{Applier: d.Applier}
	if d.Sync != nil {
		applyEvent = KickAfter(applyEvent, d.Sync.Queue, d.Log) // sync right after apply commits
		d.Sync.Register(mux)
	}
	mux.Handle(TypeApplyEvent, applyEvent)
	if d.Drainer != nil {
		mux.Handle(TypeApplyBatch, &ApplyBatch{Drainer: d.Drainer})
	}
	registerGuards(mux, d)
	return mux
}

// DefaultPeriodic is the scheduler's timetable.
func DefaultPeriodic() []Periodic {
	return []Periodic{
		{Spec: "@every 15s", Task: NewSweepStrandedTask},
		{Spec: "@every 15m", Task: NewRetentionTask},
		{Spec: "@every 1m", Task: NewGuardCheckAlarmsTask},
		{Spec: "@every 1m", Task: NewGuardHeartbeatTask},
		{Spec: "@every 10s", Task: NewAlertDeliverTask},
		{Spec: "@every 2s", Task: NewSyncTickTask},
		{Spec: "@every 1m", Task: NewSyncRetryDeadLettersTask},
		{Spec: "@every 15s", Task: NewSyncProbePausedTask},
		{Spec: "@every 1h", Task: NewSyncDriftTask},
	}
}

// RetryDelay lets handlers choose their own delay (lock contention retries
// soon; waiting for a record backs off) and falls back to asynq's default.
func RetryDelay(n int, err error, t *asynq.Task) time.Duration {
	var d interface{ RetryAfter() time.Duration }
	if asErr(err, &d) {
		return d.RetryAfter()
	}
	if errors.Is(err, asynq.ErrLeaseExpired) {
		return time.Second // orphaned by a killed worker: its work is in Postgres, resume it now
	}
	return asynq.DefaultRetryDelayFunc(n, err, t)
}

// ErrorReporter logs tasks whose retries are exhausted.
type ErrorReporter struct{ Log *slog.Logger }

// HandleError implements asynq.ErrorHandler.
func (e ErrorReporter) HandleError(ctx context.Context, task *asynq.Task, err error) {
	retried, _ := asynq.GetRetryCount(ctx)
	maxRetry, _ := asynq.GetMaxRetry(ctx)
	if retried >= maxRetry {
		e.Log.Error("task failed for good", "type", task.Type(), "err", err, "retries", retried)
	}
}

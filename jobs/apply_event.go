package jobs

import (
	"encoding/json"
	"time"

	"github.com/hibiken/asynq"
)

// TypeApplyEvent applies one inbox event to its contact: the task of an event
// that waits for its provider's record (hydration) or for a retry time.
const TypeApplyEvent = "event:apply"

// TypeApplyBatch wakes a worker's apply drainer: events were stored, and the
// drainer claims them in batches. It carries nothing; at most one waits at a time.
const TypeApplyBatch = "event:apply_batch"

// ApplyEventPayload carries only the event id; the handler reloads state.
type ApplyEventPayload struct {
	EventID string `json:"event_id"`
}

// NewApplyEventTask builds the apply task. Retries are driven by the handler
// (lock contention, waiting for a record), so asynq's own retry count is generous.
func NewApplyEventTask(eventID string) *asynq.Task {
	b, _ := json.Marshal(ApplyEventPayload{EventID: eventID})
	return asynq.NewTask(TypeApplyEvent, b,
		asynq.TaskID("apply:"+eventID),
		asynq.Queue(QueueApply),
		asynq.MaxRetry(25),
		asynq.Timeout(30*time.Second),
	)
}

// applyBatchTaskID names the one trigger that may wait at a time: a second
// enqueue while it waits collapses into it.
const applyBatchTaskID = "apply:batch"

// NewApplyBatchTask builds the trigger. It is not retried: the drainer's own
// polling covers a trigger that was lost.
func NewApplyBatchTask() *asynq.Task {
	return asynq.NewTask(TypeApplyBatch, nil, asynq.TaskID(applyBatchTaskID), asynq.Queue(QueueApply),
		asynq.MaxRetry(0), asynq.Timeout(10*time.Second))
}

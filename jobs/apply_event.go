package jobs

import (
	"encoding/json"
	"time"

	"github.com/hibiken/asynq"
)

// TypeApplyEvent applies one inbox event to its contact.
const TypeApplyEvent = "event:apply"

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

package jobs_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/hibiken/asynq"

	"github.com/leadgate/leadgate/jobs"
	"github.com/leadgate/leadgate/lifecycle/apply"
)

// TestApplyRetryPolicy: lock contention and "not due yet" are retried after
// the delay the applier asks for without counting as failures; a failed run
// is retried after its backoff and counts; anything else gets asynq's default.
func TestApplyRetryPolicy(t *testing.T) {
	t.Parallel()
	task := jobs.NewApplyEventTask("0190a6f0-0000-7000-8000-000000000000")
	tests := []struct {
		name        string
		err         error
		wantFailure bool
		wantDelay   time.Duration // 0: asynq's default (at least 15 s)
	}{
		{"busy contact", &apply.BusyError{Delay: 120 * time.Millisecond}, false, 120 * time.Millisecond},
		{"waiting for a record", &apply.BusyError{Delay: 1500 * time.Millisecond, Why: "waiting for a record"}, false, 1500 * time.Millisecond},
		{"wrapped busy", fmt.Errorf("outer: %w", &apply.BusyError{Delay: time.Second}), false, time.Second},
		{"failed run", &apply.FailedError{Cause: errors.New("boom"), Delay: 4 * time.Second}, true, 4 * time.Second},
		{"other error", errors.New("redis down"), true, 0},
		{"orphaned by a killed worker", asynq.ErrLeaseExpired, true, time.Second},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := jobs.IsFailure(tc.err); got != tc.wantFailure {
				t.Errorf("IsFailure = %v, want %v", got, tc.wantFailure)
			}
			got := jobs.RetryDelay(1, tc.err, task)
			switch {
			case tc.wantDelay == 0 && got < 15*time.Second:
				t.Errorf("RetryDelay = %s, want asynq's default (>= 15s)", got)
			case tc.wantDelay != 0 && got != tc.wantDelay:
				t.Errorf("RetryDelay = %s, want %s", got, tc.wantDelay)
			}
		})
	}
}

// TestApplyTaskShape: the task is keyed by its event (so repeated enqueues
// collapse), goes to the apply queue, and a bad payload is never retried.
func TestApplyTaskShape(t *testing.T) {
	t.Parallel()
	task := jobs.NewApplyEventTask("ev-1")
	if task.Type() != jobs.TypeApplyEvent || string(task.Payload()) != `{"event_id":"ev-1"}` {
		t.Errorf("task = %s %s", task.Type(), task.Payload())
	}
	h := &jobs.ApplyEvent{Applier: &apply.Applier{}}
	for _, payload := range []string{``, `{}`, `not json`, `{"event_id":""}`} {
		err := h.ProcessTask(context.Background(), asynq.NewTask(jobs.TypeApplyEvent, []byte(payload)))
		if !errors.Is(err, asynq.SkipRetry) {
			t.Errorf("payload %q: %v, want SkipRetry", payload, err)
		}
	}
}

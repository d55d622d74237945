package jobs

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/hibiken/asynq"
)

// EnqueueApplyBatch wakes a worker's apply drainer through the trigger task; a
// trigger already waiting absorbs this one.
func (q Queue) EnqueueApplyBatch(ctx context.Context) error {
	_, err := q.Client.EnqueueContext(ctx, NewApplyBatchTask())
	if errors.Is(err, asynq.ErrTaskIDConflict) || errors.Is(err, asynq.ErrDuplicateTask) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("jobs: enqueue apply trigger: %w", err)
	}
	return nil
}

// ApplyTrigger tells the apply drainers that events were stored. A drainer in
// this process (Local) is woken directly. Otherwise one trigger task goes to
// Redis at most every Every, however many events were announced meanwhile, off
// the caller's path: a delivery's answer waits for no Redis round trip of its
// own. A lost trigger costs latency only: drainers also poll.
type ApplyTrigger struct {
	Queue Queue
	Local Waker // nil: no drainer in this process (role web)
	// Every is the least time between two trigger tasks (default 25 ms). A busy worker drains without
	// triggers, so this only delays the first apply after a quiet spell; at 5 ms the triggers cost a
	// web process 2 % of its CPU at 2,000 deliveries/s.
	Every time.Duration
	Log   *slog.Logger

	mu               sync.Mutex
	sending, pending bool
	inflight         sync.WaitGroup
}

// Announce says that events were stored; it never blocks.
func (t *ApplyTrigger) Announce() {
	if t.Local != nil {
		t.Local.Kick()
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.sending {
		t.pending = true
		return
	}
	t.sending = true
	t.inflight.Add(1)
	go t.send()
}

// Wait returns once the triggers announced so far have been sent (or failed).
func (t *ApplyTrigger) Wait() { t.inflight.Wait() }

// send enqueues the trigger until no announcement arrived during the last send and its pause.
func (t *ApplyTrigger) send() {
	defer t.inflight.Done()
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		if err := t.Queue.EnqueueApplyBatch(ctx); err != nil && t.Log != nil {
			t.Log.Debug("apply trigger not sent; the drainers' polling picks the events up", "err", err)
		}
		cancel()
		time.Sleep(t.every())
		t.mu.Lock()
		if !t.pending {
			t.sending = false
			t.mu.Unlock()
			return
		}
		t.pending = false
		t.mu.Unlock()
	}
}

func (t *ApplyTrigger) every() time.Duration {
	if t.Every > 0 {
		return t.Every
	}
	return 25 * time.Millisecond
}

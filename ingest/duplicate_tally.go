package ingest

import (
	"context"
	"sync"
)

// duplicateTally holds duplicate deliveries that were answered but could not be counted in Postgres yet:
// retries of an event still waiting in the spool (Postgres was down), and fast-gate hits whose counting
// UPDATE failed. They are counted once Postgres takes writes again, so that received = accepted +
// duplicates holds after an outage. The tally lives in memory: a process killed before it is flushed
// loses these counts (never an event).
type duplicateTally struct {
	mu      sync.Mutex
	byKey   map[tallyKey]int // stored idempotency key → uncounted duplicates
	bySpool map[string]int   // spooled event id → uncounted duplicates (its stored key is known after replay)
}

type tallyKey struct {
	workspaceID int64
	key         string
}

func (d *duplicateTally) addKey(workspaceID int64, key string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.byKey == nil {
		d.byKey = map[tallyKey]int{}
	}
	d.byKey[tallyKey{workspaceID, key}]++
}

func (d *duplicateTally) addSpooled(eventID string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.bySpool == nil {
		d.bySpool = map[string]int{}
	}
	d.bySpool[eventID]++
}

// spooledToKey moves a replayed event's tally to its stored key.
func (d *duplicateTally) spooledToKey(eventID string, workspaceID int64, key string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	n := d.bySpool[eventID]
	if n == 0 {
		return
	}
	delete(d.bySpool, eventID)
	if d.byKey == nil {
		d.byKey = map[tallyKey]int{}
	}
	d.byKey[tallyKey{workspaceID, key}] += n
}

// flush counts the tallied duplicates with count; what fails stays for the next flush.
func (d *duplicateTally) flush(ctx context.Context, count func(ctx context.Context, workspaceID int64, key string, n int) error) error {
	d.mu.Lock()
	pending := d.byKey
	d.byKey = nil
	d.mu.Unlock()
	var firstErr error
	for k, n := range pending {
		if err := count(ctx, k.workspaceID, k.key, n); err != nil {
			d.mu.Lock()
			if d.byKey == nil {
				d.byKey = map[tallyKey]int{}
			}
			d.byKey[k] += n
			d.mu.Unlock()
			if firstErr == nil {
				firstErr = err
			}
		}
	}
	return firstErr
}

// empty reports whether nothing waits to be counted under a stored key.
func (d *duplicateTally) empty() bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	return len(d.byKey) == 0
}

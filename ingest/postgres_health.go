package ingest

import (
	"context"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"
)

// PostgresHealth remembers that Postgres could not take a write, so that the deliveries arriving next go
// straight to the spool instead of each waiting for a statement of its own to fail (a restarting
// server, a cut network): while it is down, one canary probes Postgres every Every and the first probe
// that succeeds (or any write that goes through) routes deliveries back to Postgres.
type PostgresHealth struct {
	// Probe reports whether Postgres takes writes now; it is called with a deadline of Deadline.
	Probe func(ctx context.Context) error
	// Every is the canary's pause between probes (default 100 ms).
	Every time.Duration
	// Deadline bounds one probe (default 2 s).
	Deadline time.Duration
	Log      *slog.Logger
	// Back is signalled (without blocking) when Postgres takes writes again, so the spool replay runs
	// at once instead of at its next tick (nil: not signalled).
	Back chan struct{}

	down    atomic.Bool
	mu      sync.Mutex
	probing bool
	since   time.Time
}

// Down reports whether deliveries should skip Postgres for now. A nil health is never down.
func (h *PostgresHealth) Down() bool { return h != nil && h.down.Load() }

// MarkDown records that a write failed because Postgres is unavailable and starts the canary.
func (h *PostgresHealth) MarkDown(cause error) {
	if h == nil || h.Probe == nil {
		return
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if !h.down.Swap(true) {
		h.since = time.Now()
		if h.Log != nil {
			h.Log.Warn("ingest: postgres unavailable; deliveries go to the spool until a probe succeeds", "err", cause)
		}
	}
	if !h.probing {
		h.probing = true
		go h.canary()
	}
}

// MarkUp records that a write went through.
func (h *PostgresHealth) MarkUp() {
	if h == nil || !h.down.Load() {
		return
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.down.Swap(false) {
		if h.Log != nil {
			h.Log.Info("ingest: postgres takes writes again; deliveries go to Postgres", "after", time.Since(h.since).Round(time.Millisecond))
		}
		if h.Back != nil {
			select {
			case h.Back <- struct{}{}:
			default:
			}
		}
	}
}

// canary probes until Postgres answers or a write has already marked it up.
func (h *PostgresHealth) canary() {
	for {
		time.Sleep(h.every())
		if !h.down.Load() {
			break
		}
		ctx, cancel := context.WithTimeout(context.Background(), h.deadline())
		err := h.Probe(ctx)
		cancel()
		if err == nil {
			h.MarkUp()
			break
		}
	}
	h.mu.Lock()
	h.probing = false
	restart := h.down.Load() // marked down again between the last probe and now
	if restart {
		h.probing = true
	}
	h.mu.Unlock()
	if restart {
		go h.canary()
	}
}

func (h *PostgresHealth) every() time.Duration {
	if h.Every > 0 {
		return h.Every
	}
	return 100 * time.Millisecond
}

func (h *PostgresHealth) deadline() time.Duration {
	if h.Deadline > 0 {
		return h.Deadline
	}
	return 2 * time.Second
}

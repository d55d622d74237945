package apply

import (
	"context"
	"sync"
	"time"
)

// Drainer applies the inbox in batches for as long as there is work. One worker always runs; while
// batches come back full the batch size doubles (up to MaxBatch) and more workers join (up to Workers),
// and they leave again once a batch comes back short, so apply takes a share of the machine that follows
// the backlog. A Kick (a new event was stored, a trigger task arrived) wakes an idle drainer at once; an
// idle drainer also looks for work every Poll, which picks up events whose announcement was lost.
type Drainer struct {
	Applier *Applier
	// Workers caps the batches applied at once (default 4).
	Workers int
	// Batch is the first batch size (default 100); MaxBatch the largest it grows to (default 4×Batch).
	Batch, MaxBatch int
	// Poll is how often an idle drainer looks for unannounced work (default 1 s).
	Poll time.Duration
	// AfterBatch runs after a batch that recorded outcomes (the CRM sync's kick); nil: nothing.
	AfterBatch func(ctx context.Context)
	// Busy is called when a full batch leaves more work than this process takes on, so other
	// processes' drainers can help (a trigger task); nil: nothing.
	Busy func(ctx context.Context)

	once    sync.Once
	kick    chan struct{}
	mu      sync.Mutex
	running int
	wg      sync.WaitGroup
}

func (d *Drainer) init() {
	d.once.Do(func() { d.kick = make(chan struct{}, 1) })
}

// Kick wakes an idle worker; it never blocks.
func (d *Drainer) Kick() {
	d.init()
	select {
	case d.kick <- struct{}{}:
	default:
	}
}

// Run drains until ctx ends, then waits for the batches in flight.
func (d *Drainer) Run(ctx context.Context) {
	d.init()
	d.mu.Lock()
	d.running = 1
	d.mu.Unlock()
	d.wg.Add(1)
	go d.work(ctx, true)
	d.wg.Wait()
}

// join starts another worker unless all are running.
func (d *Drainer) join(ctx context.Context) bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.running >= d.workers() || ctx.Err() != nil {
		return false
	}
	d.running++
	d.wg.Add(1)
	go d.work(ctx, false)
	return true
}

func (d *Drainer) leave() {
	d.mu.Lock()
	d.running--
	d.mu.Unlock()
}

// work applies batches; the first worker stays for good, a helper leaves when its batch comes back short.
func (d *Drainer) work(ctx context.Context, first bool) {
	defer d.wg.Done()
	size := d.batch()
	failures := 0
	for ctx.Err() == nil {
		claimed, deferred, err := d.Applier.ApplyBatch(ctx, size)
		if err != nil {
			if ctx.Err() != nil {
				break
			}
			failures++
			d.Applier.Log.Warn("apply: batch failed; retrying", "err", err, "failures", failures)
			d.idle(ctx, min(time.Duration(failures)*time.Second, 10*time.Second))
			continue
		}
		failures = 0
		if claimed > deferred && d.AfterBatch != nil {
			d.AfterBatch(ctx)
		}
		full := claimed >= size && deferred == 0 // a batch of busy contacts is no backlog for more workers
		switch {
		case full && size < d.maxBatch():
			size = min(2*size, d.maxBatch())
		case full:
			if !d.join(ctx) && d.Busy != nil {
				d.Busy(ctx)
			}
		case size > d.batch():
			size = max(size/2, d.batch())
		}
		if !first && !full {
			d.leave()
			return
		}
		switch {
		case claimed == 0:
			d.idle(ctx, d.poll())
		case claimed == deferred:
			d.idle(ctx, 20*time.Millisecond) // every contact it took is busy in another worker: let it finish
		}
	}
	if !first {
		d.leave()
	}
}

// idle waits for a kick, at most wait.
func (d *Drainer) idle(ctx context.Context, wait time.Duration) {
	t := time.NewTimer(wait)
	defer t.Stop()
	select {
	case <-ctx.Done():
	case <-d.kick:
	case <-t.C:
	}
}

func (d *Drainer) workers() int {
	if d.Workers > 0 {
		return d.Workers
	}
	return 4
}

func (d *Drainer) batch() int {
	if d.Batch > 0 {
		return d.Batch
	}
	return 100
}

func (d *Drainer) maxBatch() int {
	if d.MaxBatch >= d.batch() {
		return d.MaxBatch
	}
	return 4 * d.batch()
}

func (d *Drainer) poll() time.Duration {
	if d.Poll > 0 {
		return d.Poll
	}
	return time.Second
}

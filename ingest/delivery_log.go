package ingest

import (
	"context"
	"log/slog"
	"net/http"
	"sync"
	"time"

	"github.com/leadgate/leadgate/models"
)

// DeliveryLog counts the deliveries to a known source that were refused (401,
// 400, 413, 415) and remembers each source's latest outcomes for its refusal
// alarm, off the answer path: a delivery costs a map update under a mutex, and
// one statement per active source is flushed every Interval. Close flushes what
// is left, so a clean shutdown loses no count (a killed process loses at most
// one interval's worth; never an event).
//
// Accepted deliveries are only recorded for sources whose stored window holds
// a refusal (or is not known to be clean yet): for a healthy source the window
// is all accepted and stays so, and the hot path skips it.
type DeliveryLog struct {
	Store *models.Store
	Log   *slog.Logger
	// Evaluate judges the sources whose rows a flush changed (the refusal alarm; nil: none).
	Evaluate func(ctx context.Context, rows []models.SourceDeliveries) error
	// Interval between flushes (default 1 s); CleanFor is how long a source
	// known to be clean skips recording accepted deliveries (default 30 s: a
	// refusal counted by another replica is noticed within it).
	Interval time.Duration
	CleanFor time.Duration
	Now      func() time.Time

	mu      sync.Mutex
	pending map[int64]*models.SourceDeliveryDelta
	clean   map[int64]time.Time // source → clean until
	flushMu sync.Mutex          // one flush at a time
	once    sync.Once
	stop    chan struct{}
	done    chan struct{}
}

// refusal names a refused delivery's kind.
type refusal struct {
	letter byte
	label  string
}

var refusalByStatus = map[int]refusal{
	http.StatusUnauthorized:          {models.DeliveryRefusedSignature, "signature"},
	http.StatusBadRequest:            {models.DeliveryRefusedMalformed, "malformed"},
	http.StatusRequestEntityTooLarge: {models.DeliveryRefusedTooLarge, "too large"},
	http.StatusUnsupportedMediaType:  {models.DeliveryRefusedUnsupported, "unsupported content type"},
}

// Record notes one answered delivery to a known source by its answer's status
// and metric label (Answer.Outcome) and, for a refusal, the reason given.
func (d *DeliveryLog) Record(workspaceID, sourceID int64, status int, outcome, reason string) {
	if d == nil {
		return
	}
	r, refused := refusalByStatus[status]
	if !refused && (status != http.StatusOK || outcome == "empty" || outcome == "handshake") {
		return // 410, 503, handshakes, empty payloads: neither accepted nor refused
	}
	now := d.now()
	d.mu.Lock()
	defer d.mu.Unlock()
	if !refused {
		if until, ok := d.clean[sourceID]; ok && now.Before(until) {
			return
		}
	}
	d.start()
	p := d.pending[sourceID]
	if p == nil {
		p = &models.SourceDeliveryDelta{SourceID: sourceID, WorkspaceID: workspaceID}
		d.pending[sourceID] = p
	}
	if len(p.Outcomes) >= models.RecentDeliveries {
		p.Outcomes = p.Outcomes[len(p.Outcomes)-models.RecentDeliveries+1:]
	}
	if !refused {
		p.Outcomes += string(rune(models.DeliveryAccepted))
		return
	}
	delete(d.clean, sourceID)
	p.Outcomes += string(rune(r.letter))
	switch r.letter {
	case models.DeliveryRefusedSignature:
		p.Signature++
	case models.DeliveryRefusedMalformed:
		p.Malformed++
	case models.DeliveryRefusedTooLarge:
		p.TooLarge++
	default:
		p.Unsupported++
	}
	at := now.UTC()
	p.LastRefusedAt, p.LastRefusedReason = &at, r.label+": "+reason
	if r.letter == models.DeliveryRefusedSignature {
		p.LastRefusedReason = models.RefusalSignaturePrefix + reason
	}
}

// Flush writes what was recorded since the last flush. What fails to be
// written is kept for the next flush.
func (d *DeliveryLog) Flush(ctx context.Context) error {
	if d == nil {
		return nil
	}
	d.flushMu.Lock()
	defer d.flushMu.Unlock()
	d.mu.Lock()
	batch := make([]models.SourceDeliveryDelta, 0, len(d.pending))
	for _, p := range d.pending {
		batch = append(batch, *p)
	}
	d.pending = map[int64]*models.SourceDeliveryDelta{}
	d.mu.Unlock()
	if len(batch) == 0 {
		return nil
	}
	rows, err := d.Store.SourceDeliveriesAdd(ctx, batch)
	if err != nil {
		d.putBack(batch)
		return err
	}
	d.markClean(rows)
	if d.Evaluate != nil {
		if err := d.Evaluate(ctx, rows); err != nil {
			d.Log.Warn("ingest: refusal alarms", "err", err)
		}
	}
	return nil
}

// putBack returns an unwritten batch ahead of what arrived meanwhile.
func (d *DeliveryLog) putBack(batch []models.SourceDeliveryDelta) {
	d.mu.Lock()
	defer d.mu.Unlock()
	for _, b := range batch {
		if p := d.pending[b.SourceID]; p != nil {
			b.Signature, b.Malformed, b.TooLarge, b.Unsupported = b.Signature+p.Signature, b.Malformed+p.Malformed, b.TooLarge+p.TooLarge, b.Unsupported+p.Unsupported
			b.Outcomes += p.Outcomes
			if p.LastRefusedAt != nil {
				b.LastRefusedAt, b.LastRefusedReason = p.LastRefusedAt, p.LastRefusedReason
			}
		}
		if len(b.Outcomes) > models.RecentDeliveries {
			b.Outcomes = b.Outcomes[len(b.Outcomes)-models.RecentDeliveries:]
		}
		d.pending[b.SourceID] = &b
	}
}

// markClean lets sources whose stored window has no refusal skip recording
// accepted deliveries for a while.
func (d *DeliveryLog) markClean(rows []models.SourceDeliveries) {
	until := d.now().Add(d.cleanFor())
	d.mu.Lock()
	defer d.mu.Unlock()
	for _, r := range rows {
		if isClean(r.Recent) && d.pending[r.SourceID] == nil {
			d.clean[r.SourceID] = until
		} else {
			delete(d.clean, r.SourceID)
		}
	}
}

func isClean(recent string) bool {
	for i := 0; i < len(recent); i++ {
		if recent[i] != models.DeliveryAccepted {
			return false
		}
	}
	return true
}

// start launches the flusher on first use; d.mu is held.
func (d *DeliveryLog) start() {
	d.once.Do(func() {
		d.pending = map[int64]*models.SourceDeliveryDelta{}
		d.clean = map[int64]time.Time{}
		d.stop, d.done = make(chan struct{}), make(chan struct{})
		go d.run()
	})
}

func (d *DeliveryLog) run() {
	defer close(d.done)
	t := time.NewTicker(d.interval())
	defer t.Stop()
	for {
		select {
		case <-d.stop:
			return
		case <-t.C:
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			if err := d.Flush(ctx); err != nil {
				d.Log.Warn("ingest: flush refused-delivery counts; kept for the next try", "err", err)
			}
			cancel()
		}
	}
}

// Close stops the flusher and writes what is left (call it after the HTTP
// server stopped taking requests).
func (d *DeliveryLog) Close() {
	if d == nil {
		return
	}
	d.mu.Lock()
	started := d.stop != nil
	d.mu.Unlock()
	if started {
		select {
		case <-d.stop:
		default:
			close(d.stop)
		}
		<-d.done
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := d.Flush(ctx); err != nil {
		d.Log.Error("ingest: refused-delivery counts lost at shutdown", "err", err)
	}
}

func (d *DeliveryLog) interval() time.Duration {
	if d.Interval > 0 {
		return d.Interval
	}
	return time.Second
}

func (d *DeliveryLog) cleanFor() time.Duration {
	if d.CleanFor > 0 {
		return d.CleanFor
	}
	return 30 * time.Second
}

func (d *DeliveryLog) now() time.Time {
	if d.Now != nil {
		return d.Now()
	}
	return time.Now()
}

package syncer

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"time"

	"github.com/leadgate/leadgate/crm"
	"github.com/leadgate/leadgate/models"
)

// maxSenders caps the senders of one destination in one process: beyond it the limiter, not the number of
// requests in flight, is what holds the rate back at any CRM latency seen so far.
const maxSenders = 16

// senders is how many senders drain a destination at once. One sender keeps one request in flight; at
// 20–150 ms of CRM latency plus the relay's own Postgres work per batch, one sender manages about 5
// requests a second, so the destination's rate divided by 5 keeps it busy (at least 2, so that a slow
// request never leaves the budget idle). Every request still passes the shared limiter, which alone
// decides the rate.
func (r *SyncRelay) senders(d models.Destination, conn *Conn) int {
	if r.Senders > 0 {
		return r.Senders
	}
	rps := d.RateLimitRPS
	if rps <= 0 {
		rps = defaultRPS[d.Kind]
	}
	if conn.Limiter == nil || rps <= 0 {
		return 1 // no limit (sandbox without Redis): one sender, as fast as it goes
	}
	return min(max((rps+4)/5, 2), maxSenders)
}

// sendAll drains the destination's due work with several senders at once, until none is due, the pass
// time is up, the destination stops being active or a sender fails. Each sender claims its own batch
// with SyncClaim's lease (a contact is in one claimed batch at a time: the queue holds one row per
// destination and contact, and a leased row is not claimed again), so per-contact order holds and each
// desired version is delivered once, exactly as with one sender. Claims take the live lane first, so a
// new lead's write goes out with the next free sender however long the resync backlog behind it.
//
// Resync work marked for a bulk import goes through it alongside (drainBulk, one import at a time); the
// senders leave those items to it while it runs, and keep looking for live work meanwhile instead of
// waiting for the import to finish. It reports whether due work remains.
func (r *SyncRelay) sendAll(ctx context.Context, d models.Destination, conn *Conn, deadline time.Time) (bool, error) {
	n := r.senders(d, conn)
	var (
		stop     atomic.Bool // a sender failed or found the destination inactive: the others stop claiming
		bulkBusy atomic.Bool // a bulk import loop runs: senders leave bulk items to it
		wg       sync.WaitGroup
		mu       sync.Mutex
		more     bool
		first    error
	)
	report := func(m bool, err error) {
		mu.Lock()
		defer mu.Unlock()
		more = more || m
		if err != nil {
			stop.Store(true)
			if first == nil {
				first = err
			}
		}
	}
	var sending atomic.Int32 // senders still running: the bulk loop keeps looking while any does
	sending.Store(int32(n))
	if _, ok := conn.Dest.(crm.BulkImporter); ok {
		// A backlog of new leads already waiting goes to the import before any sender can take its items one
		// by one; the import's answer may have paused the destination.
		if n, err := r.drainBulk(ctx, d, conn, true); err != nil {
			return true, err
		} else if n > 0 {
			var ok, more bool
			if d, conn, ok, more, err = r.ready(ctx, d.ID, deadline); !ok {
				return more, err
			}
		}
		bulkBusy.Store(true)
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer bulkBusy.Store(false)
			report(r.bulkLoop(ctx, d, conn, deadline, &stop, &bulkBusy, &sending))
		}()
	}
	// The first sender goes alone until its first batch is answered: a destination-level fault (refused
	// credentials, a missing field) then pauses the destination after one request, not one per sender.
	firstDone := make(chan struct{})
	var once sync.Once
	firstAnswered := func() { once.Do(func() { close(firstDone) }) }
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer sending.Add(-1)
			if i == 0 {
				defer firstAnswered()
				report(r.sender(ctx, d, conn, deadline, true, &stop, &bulkBusy, firstAnswered))
				return
			}
			select {
			case <-firstDone:
			case <-ctx.Done():
				return
			}
			report(r.sender(ctx, d, conn, deadline, false, &stop, &bulkBusy, func() {}))
		}()
	}
	wg.Wait()
	return more, first
}

// bulkLoop sends bulk imports until the pass time is up or a sender stopped (true), or until neither bulk
// work nor a running sender is left (false). With nothing due for an import it steps aside for
// bulkRecheck (the senders then take bulk items too, so a remainder below the import's minimum still goes
// out) and looks again: a burst of new leads arriving while the senders write one by one is taken up by
// the bulk import within a second.
func (r *SyncRelay) bulkLoop(ctx context.Context, d models.Destination, conn *Conn, deadline time.Time,
	stop, bulkBusy *atomic.Bool, sending *atomic.Int32) (bool, error) {
	for fresh := true; ; fresh = false {
		if stop.Load() || !r.now().Before(deadline) {
			return true, nil
		}
		if !fresh {
			var ok, more bool
			var err error
			if d, conn, ok, more, err = r.ready(ctx, d.ID, deadline); !ok {
				return more, err
			}
		}
		bulkBusy.Store(true)
		n, err := r.drainBulk(ctx, d, conn, false)
		if err != nil {
			return true, err
		}
		if n > 0 {
			continue
		}
		bulkBusy.Store(false)
		if sending.Load() == 0 {
			return false, nil
		}
		if err := sleepCtx(ctx, bulkRecheck); err != nil {
			return true, err
		}
	}
}

// idlePoll is how often a sender with nothing to claim looks again while a bulk import runs: a live
// lead's write arriving meanwhile waits at most this long for a sender.
const idlePoll = 200 * time.Millisecond

// sender claims and sends batches until none is due (false), the pass time is up or another sender
// stopped (true). Before each claim it re-reads the destination (a pause or an edit stops it) and waits
// out a 429's pause rather than holding leases through it. The first sender uses d and conn as given.
func (r *SyncRelay) sender(ctx context.Context, d models.Destination, conn *Conn, deadline time.Time, fresh bool,
	stop, bulkBusy *atomic.Bool, answered func()) (bool, error) {
	for {
		if stop.Load() || !r.now().Before(deadline) {
			return true, nil
		}
		if !fresh {
			var ok, more bool
			var err error
			if d, conn, ok, more, err = r.ready(ctx, d.ID, deadline); !ok {
				if err == nil && !more {
					stop.Store(true) // gone, paused or disabled: the others stop too
				}
				return more, err
			}
		}
		fresh = false
		busy := bulkBusy.Load()
		items, err := r.claim(ctx, d, conn, !busy)
		if err != nil {
			return false, err
		}
		if len(items) == 0 {
			if !busy {
				return false, nil
			}
			if err := sleepCtx(ctx, idlePoll); err != nil {
				return true, err
			}
			continue
		}
		if conn.Daily != nil && items[0].Lane != models.LaneLive {
			if ok, err := r.paceBackfill(ctx, d, conn, items); !ok || err != nil {
				if err != nil {
					return true, err
				}
				continue
			}
		}
		err = r.sendLeased(ctx, d, conn, items)
		answered()
		if err != nil {
			return true, err
		}
	}
}

// claim leases the next batch, live lane first. Under a daily pacer the lanes are claimed apart (a batch
// is paced as a whole), and backfill not at all while its pace is further off than dailyHold.
func (r *SyncRelay) claim(ctx context.Context, d models.Destination, conn *Conn, withBulk bool) ([]models.SyncItem, error) {
	n := batchSize(d, conn)
	if conn.Daily == nil {
		return r.Store.SyncClaim(ctx, d.ID, n, r.lease(), withBulk, models.AnyLane)
	}
	items, err := r.Store.SyncClaim(ctx, d.ID, n, r.lease(), withBulk, models.LaneLive)
	if err != nil || len(items) > 0 {
		return items, err
	}
	if due, err := conn.Daily.Due(ctx, conn.Key, false); err == nil && due > dailyHold {
		return nil, nil
	}
	return r.Store.SyncClaim(ctx, d.ID, n, r.lease(), withBulk, models.LaneBackfill)
}

// sendLeased sends a claimed batch while renewing its lease (see whileLeased).
func (r *SyncRelay) sendLeased(ctx context.Context, d models.Destination, conn *Conn, items []models.SyncItem) error {
	return r.whileLeased(ctx, d, items, r.lease(), func() error { return r.send(ctx, d, conn, items) })
}

// whileLeased runs send while renewing the items' lease every third of it: with several senders, a batch
// whose lease ran out mid-send would be claimed and sent a second time alongside. A killed process renews
// nothing, so its batch is claimed again once the lease expires, a lease after the crash rather than after
// the longest a send can take.
func (r *SyncRelay) whileLeased(ctx context.Context, d models.Destination, items []models.SyncItem, lease time.Duration, send func() error) error {
	ids := make([]string, len(items))
	for i, it := range items {
		ids[i] = it.ContactID
	}
	done := make(chan struct{})
	renewed := make(chan struct{})
	go func() {
		defer close(renewed)
		t := time.NewTicker(max(lease/3, 10*time.Millisecond))
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-ctx.Done():
				return
			case <-t.C:
				if err := r.Store.SyncRenewLease(ctx, d.ID, ids, lease); err != nil && ctx.Err() == nil {
					r.Log.Warn("crm sync: renew lease", "destination", d.ID, "err", err)
				}
			}
		}
	}()
	err := send()
	close(done)
	<-renewed
	return err
}

// ready reads the destination and connects it, and waits out a limiter pause that ends before deadline.
// ok is false when nothing is to be sent now: more then says whether work remains for a later pass.
func (r *SyncRelay) ready(ctx context.Context, destinationID int64, deadline time.Time) (d models.Destination, conn *Conn, ok, more bool, err error) {
	d, err = r.Store.DestinationByID(ctx, destinationID)
	if errors.Is(err, models.ErrNotFound) {
		return d, nil, false, false, nil
	}
	if err != nil {
		return d, nil, false, false, err
	}
	if !d.Active() {
		return d, nil, false, false, nil
	}
	conn, err = r.Connector.Connect(ctx, d)
	if err != nil {
		r.recordError(ctx, d.ID, "connect: "+err.Error())
		return d, nil, false, false, err
	}
	if conn.Limiter != nil {
		// A 429's pause: wait here rather than holding leases through it.
		if until, err := conn.Limiter.PausedUntil(ctx, conn.Key); err == nil && until.After(r.now()) {
			if !until.Before(deadline) {
				return d, conn, false, true, nil
			}
			if err := sleepCtx(ctx, time.Until(until)); err != nil {
				return d, conn, false, true, err
			}
		}
	}
	return d, conn, true, false, nil
}

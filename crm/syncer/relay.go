package syncer

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/leadgate/leadgate/crm"
	"github.com/leadgate/leadgate/guards/loop"
	"github.com/leadgate/leadgate/internal/failpoint"
	"github.com/leadgate/leadgate/models"
)

// SyncRelay delivers the outbox's crm_upsert intents to every destination of their workspace
// (DESIGN.md SYNC, issue 4 §6-7):
//
//   - apply queues one item per destination and contact in the transaction that writes a crm_upsert row
//     (models.Store.OutboxAddAll); FanOut claims the rows other writers leave pending (FOR UPDATE SKIP
//     LOCKED), coalesces them per contact (the newest version wins, older rows are marked superseded) and
//     queues them the same way;
//   - Drain leases due items of one destination in micro-batches (batch_size, capped by the adapter's
//     MaxBatch), reads each contact's CURRENT state and what the destination last received (remote id,
//     written values: crm.Contact.Previous), and upserts them; every request passes the destination's
//     Redis rate limiter, shared by all replicas;
//   - a delivered item records the sync state and leaves the queue, so each desired version reaches each
//     destination once in effect; a crash leaves the lease to expire and the adapter's search by email
//     (then phone) turns the resend into an update, never a duplicate.
//
// Failures follow issue 4 §7 (see handleFailures).
type SyncRelay struct {
	Store     *models.Store
	Connector *Connector
	Log       *slog.Logger
	Metrics   *SyncMetrics
	// Writes remembers what each successful write set, for echo suppression (nil: off).
	Writes *loop.Writes
	// Runaway pauses a destination above its hourly write ceiling (nil: off).
	Runaway *Runaway

	Lease          time.Duration // how long a claimed batch is held; default 30 s (see lease)
	InlineAttempts int           // backoff retries before a transient dead letter; default 5
	BackoffStart   time.Duration // first inline backoff; default 2 s (doubling, with jitter)
	DeadLetterWait time.Duration // first scheduler retry of a transient dead letter; default 20 min (then 40, 80 …)
	DeadLetterMax  int           // scheduler retries of a transient dead letter; default 5
	PassTime       time.Duration // how long one Drain may run; default 50 s
	Now            func() time.Time
	// Senders is how many batches of one destination are in flight at once (0: from its rate, see senders).
	Senders int
	// KeepLeasesOnCancel makes a cancelled send leave its leases to expire, exactly as a killed process
	// does (crash tests). By default a cancelled send (a graceful shutdown) hands its batch back at once.
	KeepLeasesOnCancel bool
	// Failpoints stop the process at named points (failure-boundary tests; nil: none).
	Failpoints *failpoint.Set
}

const fanOutBatch = 500

// FanOut moves every pending crm_upsert outbox row into the sync queue; it returns how many rows it took.
func (r *SyncRelay) FanOut(ctx context.Context) (int, error) {
	total := 0
	for {
		n, err := r.Store.SyncFanOut(ctx, fanOutBatch)
		total += n
		if err != nil || n < fanOutBatch {
			return total, err
		}
	}
}

// Drain sends one destination's due work until none is due, the pass time is up or the destination is
// paused. It reports whether due work remains (the caller runs another pass).
func (r *SyncRelay) Drain(ctx context.Context, destinationID int64) (more bool, err error) {
	deadline := r.now().Add(r.passTime())
	d, conn, ok, more, err := r.ready(ctx, destinationID, deadline)
	if !ok {
		return more, err
	}
	return r.sendAll(ctx, d, conn, deadline)
}

// batchSize is the destination's batch_size (default 20) capped by the adapter's MaxBatch.
func batchSize(d models.Destination, conn *Conn) int {
	n := d.BatchSize
	if n <= 0 {
		n = 20
	}
	if m := conn.Dest.MaxBatch(); m > 0 {
		n = min(n, m) // ActiveCampaign and GoHighLevel: 1 (no batch endpoint; coalescing is their lever)
	}
	return n
}

// send upserts one claimed micro-batch and records each outcome.
func (r *SyncRelay) send(ctx context.Context, d models.Destination, conn *Conn, items []models.SyncItem) error {
	return r.sendVia(ctx, d, conn, items, conn.Dest.Upsert)
}

// sendVia is send through upsert (the adapter's Upsert, or its bulk import for resync work).
func (r *SyncRelay) sendVia(ctx context.Context, d models.Destination, conn *Conn, items []models.SyncItem,
	upsert func(context.Context, []crm.Contact) []crm.Result) error {
	ids := make([]string, len(items))
	for i, it := range items {
		ids[i] = it.ContactID
	}
	contacts, states, err := r.Store.SyncLoad(ctx, d.ID, ids)
	if err != nil {
		return err
	}
	var batch []crm.Contact
	var sent []models.SyncItem
	for _, it := range items {
		c, ok := contacts[it.ContactID]
		if !ok || c.MergedInto != nil {
			// Nothing to send: a merged-away contact's survivor carries its state.
			if err := r.Store.SyncDrop(ctx, d.ID, it.ContactID); err != nil {
				return err
			}
			continue
		}
		batch = append(batch, desired(c, states[it.ContactID]))
		sent = append(sent, it)
	}
	if len(batch) == 0 {
		return nil
	}
	if err := r.recordMaySend(ctx, d.ID, conn.Dest, batch); err != nil {
		return err
	}
	ctx, count := withSendCount(ctx)
	results := upsert(ctx, batch)
	if err := r.recordInDoubt(context.WithoutCancel(ctx), d.ID, results); err != nil {
		return err
	}
	if ctx.Err() != nil {
		// Shutdown: what the CRM did with the batch is unknown; resending is safe (found by email/phone),
		// so the batch is handed back now rather than after the lease.
		if !r.KeepLeasesOnCancel {
			if err := r.Store.SyncRelease(context.WithoutCancel(ctx), d.ID, ids, r.now(), "interrupted"); err != nil {
				r.Log.Warn("crm sync: release interrupted batch", "destination", d.ID, "err", err)
			}
		}
		return ctx.Err()
	}
	r.Failpoints.Hit(failpoint.SyncAfterCRMAccept)
	counts := models.DestinationCounters{Calls: count.calls.Load(), RateLimited: count.limited.Load()}
	r.spendDaily(ctx, conn, counts.Calls, sent[0].Lane == models.LaneLive)
	var done []models.SyncOutcome
	var failed []failure
	for i, res := range results {
		if res.Err == nil {
			done = append(done, models.SyncOutcome{ContactID: sent[i].ContactID, Version: batch[i].Version, RemoteID: res.RemoteID,
				Written: res.Written, Conflicts: conflicts(res.Conflicts)})
			r.Metrics.synced(d.ID, d.Kind, r.now().Sub(sent[i].EnqueuedAt))
			continue
		}
		failed = append(failed, failure{item: sent[i], contact: batch[i], err: res.Err})
	}
	if err := r.Store.SyncDone(ctx, d.ID, done); err != nil {
		return err
	}
	r.rememberWrites(ctx, d.WorkspaceID, contacts, done)
	if err := r.checkRunaway(ctx, d, len(done)); err != nil {
		return err
	}
	counts.Synced = int64(len(done))
	for _, o := range done {
		if len(o.Conflicts) > 0 {
			r.Log.Info("crm sync: remote edits kept (conflict)", "destination", d.ID, "contact", o.ContactID, "fields", len(o.Conflicts))
		}
	}
	if err := r.handleFailures(ctx, d, conn, failed, &counts); err != nil {
		return err
	}
	return r.Store.DestinationCount(ctx, d.ID, counts)
}

// desired is the contact's current state as the adapter takes it, with what the destination last received.
func desired(c models.Contact, st models.SyncState) crm.Contact {
	return crm.Contact{LeadgateID: c.ID, Version: c.Version, RemoteID: st.RemoteID,
		Email: deref(c.Email), Phone: deref(c.Phone), FirstName: deref(c.FirstName), LastName: deref(c.LastName), Company: deref(c.Company),
		Stage: c.Stage, Fields: c.Fields, FirstTouch: c.FirstTouch, Tags: c.Tags, Score: c.Score,
		SubmissionCount: c.SubmissionCount, LastActivityAt: c.LastActivityAt, Previous: st.Written, InDoubt: st.InDoubt}
}

// recordMaySend records, before anything is sent, every value the batch's writes may carry as in doubt,
// and hands the widened doubt on to the adapter: a process killed between the CRM carrying a write out
// and leadgate reading the answer never gets to recordInDoubt, and the values would then pass for a
// person's edit. SyncDone clears them once the write is recorded.
func (r *SyncRelay) recordMaySend(ctx context.Context, destID int64, dest crm.Destination, batch []crm.Contact) error {
	ms, ok := dest.(crm.MaySend)
	if !ok {
		return nil
	}
	doubt := map[string]map[string][]string{}
	for i := range batch {
		sends, err := ms.MaySend(batch[i])
		if err != nil || len(sends) == 0 {
			continue // the adapter reports the contact's own fault when it comes to write it
		}
		batch[i].InDoubt = batch[i].InDoubt.With(sends)
		doubt[batch[i].LeadgateID] = batch[i].InDoubt
	}
	if err := r.Store.SyncRecordInDoubt(ctx, destID, doubt); err != nil {
		return fmt.Errorf("syncer: record what destination %d's batch may write: %w", destID, err)
	}
	return nil
}

// recordInDoubt keeps what the batch's writes may have left in the CRM (crm.Result.InDoubt) before any
// outcome is recorded: a lost answer is not a refusal, and the next write of such a contact must not
// mistake leadgate's own earlier value for a person's edit and keep it. Every result counts, not only the
// failed ones: a delivered write whose outcome is then not recorded (a shutdown, Postgres gone) is resent
// like a failed one. SyncDone clears the entries of the writes it records.
func (r *SyncRelay) recordInDoubt(ctx context.Context, destID int64, results []crm.Result) error {
	doubt := map[string]map[string][]string{}
	for _, res := range results {
		if len(res.InDoubt) > 0 {
			doubt[res.LeadgateID] = res.InDoubt
		}
	}
	return r.Store.SyncRecordInDoubt(ctx, destID, doubt)
}

func conflicts(in []crm.FieldConflict) []models.SyncConflict {
	out := make([]models.SyncConflict, len(in))
	for i, c := range in {
		out[i] = models.SyncConflict{Field: c.Field, OurLast: c.OurLast, Remote: c.Remote}
	}
	return out
}

func (r *SyncRelay) recordError(ctx context.Context, destID int64, msg string) {
	if err := r.Store.DestinationCount(ctx, destID, models.DestinationCounters{LastError: &msg}); err != nil {
		r.Log.Warn("crm sync: record error", "destination", destID, "err", err)
	}
}

func (r *SyncRelay) now() time.Time {
	if r.Now != nil {
		return r.Now()
	}
	return time.Now()
}

// lease is how long a claimed batch stays claimed. It only matters when the
// claimer dies or loses Postgres mid-batch (a live drain finishes or releases
// its batch itself), so it is
// short: a batch of 20 at 5 req/s takes about 12 s (longer while several senders
// share the budget), and a crash or a Postgres restart then delays the batch by at
// most this long.
func (r *SyncRelay) lease() time.Duration { return positiveOr(r.Lease, 30*time.Second) }

func (r *SyncRelay) passTime() time.Duration { return positiveOr(r.PassTime, 50*time.Second) }

func sleepCtx(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return fmt.Errorf("syncer: wait: %w", ctx.Err())
	case <-t.C:
		return nil
	}
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

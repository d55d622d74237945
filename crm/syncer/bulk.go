package syncer

import (
	"context"
	"time"

	"github.com/leadgate/leadgate/crm"
	"github.com/leadgate/leadgate/models"
)

// bulkRecheck is how often a pass's bulk loop that found no bulk work looks again: a burst of new leads
// arriving while the pass writes contacts one by one is taken up by the bulk import within a second.
const bulkRecheck = time.Second

// drainBulk sends one batch (up to crm.BulkInFlight import requests' worth) through the adapter's bulk import, when it has one (ActiveCampaign) and at
// least its minimum batch is due: first a backlog of live leads new to the destination (models.
// SyncClaimBulkNew; they keep the account's automations as the destination's setting says), then resync
// and backfill work (models.SyncMarkBulk; never the account's automations). Live changes of contacts the
// destination already holds stay on per-contact writes, which check for human edits first. It returns how
// many items it sent (0: nothing for the bulk path, the caller goes on with per-contact batches). liveOnly
// looks at the live backlog alone.
func (r *SyncRelay) drainBulk(ctx context.Context, d models.Destination, conn *Conn, liveOnly bool) (int, error) {
	bi, ok := conn.Dest.(crm.BulkImporter)
	if !ok {
		return 0, nil
	}
	least, most := bi.BulkLimits()
	most *= crm.BulkInFlight // the adapter imports that many requests' worth at once
	if d.Config.MaxWritesPerHour > 0 {
		// The runaway guard counts writes after each batch: with a ceiling, a batch stays at batch_size so the
		// guard stops a loop within one batch of it, as on the per-contact path.
		if most = min(most, max(d.BatchSize, 1)); most < least {
			return 0, nil
		}
	}
	for _, lane := range []struct {
		claim func(context.Context, int64, int, int, time.Duration) ([]models.SyncItem, error)
		opts  crm.BulkOptions
	}{
		{r.Store.SyncClaimBulkNew, crm.BulkOptions{Live: true}},
		{r.Store.SyncClaimBulk, crm.BulkOptions{}},
	} {
		if liveOnly && !lane.opts.Live {
			break
		}
		// The lease is the relay's usual one, renewed while the import runs (it waits on the CRM's queue
		// for minutes), so a process killed mid-import hands its batch back within a lease.
		items, err := lane.claim(ctx, d.ID, least, most, r.lease())
		if err != nil {
			return 0, err
		}
		if len(items) == 0 {
			continue
		}
		opts := lane.opts
		send := func(ctx context.Context, batch []crm.Contact) []crm.Result { return bi.BulkImport(ctx, batch, opts) }
		return len(items), r.whileLeased(ctx, d, items, r.lease(), func() error { return r.sendVia(ctx, d, conn, items, send) })
	}
	return 0, nil
}

package jobs

import (
	"context"
	"time"

	"github.com/leadgate/leadgate/crm"
	"github.com/leadgate/leadgate/models"
)

// bulkLease is how long a bulk batch stays claimed: one import request, a few status reads and, for
// contacts leadgate had no remote id for, a look-up by email each (250 at 5 req/s is under a minute), plus
// the import's own queueing time on the CRM's side (crm bounds the wait at 15 min).
const bulkLease = 20 * time.Minute

// drainBulk sends one batch of resync/backfill work (items marked bulk by a resync, see
// models.SyncMarkBulk) through the adapter's bulk import, when it has one (ActiveCampaign) and at least its
// minimum batch is due; live changes never take this path. It returns how many items it sent (0: nothing
// for the bulk path, the caller goes on with per-contact batches).
func (r *SyncRelay) drainBulk(ctx context.Context, d models.Destination, conn *Conn) (int, error) {
	bi, ok := conn.Dest.(crm.BulkImporter)
	if !ok {
		return 0, nil
	}
	least, most := bi.BulkLimits()
	items, err := r.Store.SyncClaimBulk(ctx, d.ID, least, most, bulkLease)
	if err != nil || len(items) == 0 {
		return 0, err
	}
	backfill := func(ctx context.Context, batch []crm.Contact) []crm.Result {
		return bi.BulkImport(ctx, batch, crm.BulkOptions{}) // resync/backfill work: never the account's automations
	}
	return len(items), r.sendVia(ctx, d, conn, items, backfill)
}

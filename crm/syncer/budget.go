package syncer

import (
	"context"
	"sync/atomic"
	"time"

	"github.com/leadgate/leadgate/crm"
	"github.com/leadgate/leadgate/crm/ratelimit"
	"github.com/leadgate/leadgate/models"
)

// defaultDaily is the daily request quota of a CRM that has one, when the destination sets none: HubSpot's
// lowest tier (free and Starter: 250,000 a day; Professional and Enterprise allow more) and GoHighLevel's
// 200,000 a day per location. ActiveCampaign publishes no daily cap.
var defaultDaily = map[string]int{crm.KindHubSpot: 250_000, crm.KindGoHighLevel: 200_000}

// daily is the destination's daily pacer (nil: no daily cap, or no Redis). The day is counted in UTC:
// GoHighLevel's reset time is undocumented (midnight UTC is assumed, as in crm), and HubSpot's is midnight
// in the account's zone, which the adapter reads only when a daily 429 arrives.
func (c *Connector) daily(d models.Destination) (*ratelimit.Daily, error) {
	limit := d.Config.DailyLimit
	if limit == 0 {
		limit = defaultDaily[d.Kind]
	}
	if limit <= 0 || c.Redis == nil {
		return nil, nil
	}
	return ratelimit.NewDaily(c.Redis, ratelimit.DailyConfig{Prefix: c.Prefix + "daily:", Limit: limit})
}

// sendCount counts the requests of one send (a batch), whichever sender's: a Conn's own totals are shared
// by every sender of the destination.
type sendCount struct{ calls, limited atomic.Int64 }

type sendCountKey struct{}

func withSendCount(ctx context.Context) (context.Context, *sendCount) {
	c := &sendCount{}
	return context.WithValue(ctx, sendCountKey{}, c), c
}

// countCall counts one request of the destination, and of the send whose context carries a count.
func (c *Conn) countCall(ctx context.Context) {
	c.calls.Add(1)
	if sc, ok := ctx.Value(sendCountKey{}).(*sendCount); ok {
		sc.calls.Add(1)
	}
}

// countRateLimited counts one 429 likewise.
func (c *Conn) countRateLimited(ctx context.Context) {
	c.rateLimited.Add(1)
	if sc, ok := ctx.Value(sendCountKey{}).(*sendCount); ok {
		sc.limited.Add(1)
	}
}

// dailyHold is the longest a sender holds a claimed backfill batch waiting for the daily pace; a longer
// wait hands the batch back, due when the pace allows it, and the sender looks for live work meanwhile.
const dailyHold = 2 * time.Second

// paceBackfill waits for the daily pace to admit a claimed backfill batch (its first request; the rest
// are spent after the send). It reports false when it handed the batch back instead.
func (r *SyncRelay) paceBackfill(ctx context.Context, d models.Destination, conn *Conn, items []models.SyncItem) (bool, error) {
	for {
		wait, err := conn.Daily.Take(ctx, conn.Key, false)
		if err != nil {
			// The burst limiter needs Redis too: a failing Redis stops the send there.
			r.Log.Warn("crm sync: daily pacer unavailable", "destination", d.ID, "err", err)
			return true, nil
		}
		if wait == 0 {
			return true, nil
		}
		if wait > dailyHold {
			ids := make([]string, len(items))
			for i, it := range items {
				ids[i] = it.ContactID
			}
			return false, r.Store.SyncRelease(ctx, d.ID, ids, r.now().Add(wait), "paced: spreading the daily API quota over the rest of the day")
		}
		if err := sleepCtx(ctx, wait); err != nil {
			return false, err
		}
	}
}

// spendDaily records a send's requests in the daily pace (backfill's first one was taken before it), and
// the quota the CRM reported left when it reports one.
func (r *SyncRelay) spendDaily(ctx context.Context, conn *Conn, calls int64, live bool) {
	if conn.Daily == nil {
		return
	}
	n := int(calls)
	if !live {
		n--
	}
	if err := conn.Daily.Spend(ctx, conn.Key, n, live); err != nil {
		r.Log.Warn("crm sync: daily pacer: record requests", "err", err)
	}
	if rep, ok := conn.Dest.(crm.DailyBudgetReporter); ok {
		if b, ok := rep.DailyBudget(); ok {
			if err := conn.Daily.Observe(ctx, conn.Key, b.Remaining); err != nil {
				r.Log.Warn("crm sync: daily pacer: record reported quota", "err", err)
			}
		}
	}
}

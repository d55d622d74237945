package syncer

import (
	"context"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/leadgate/leadgate/models"
)

// Runaway counts CRM writes per destination in the current clock hour (in
// Redis, so every replica adds to one count) and reports when a destination
// passes its ceiling (issue 5 §3): a loop that slipped past the echo guard
// or a misconfigured resync then pauses the destination — work is held, not
// dropped — instead of burning the CRM's quota.
type Runaway struct {
	Redis redis.Cmdable
	Now   func() time.Time
}

// Add records n writes and reports whether the destination is now above max (0: no ceiling).
func (g *Runaway) Add(ctx context.Context, destinationID int64, n, max int) (count int64, over bool, err error) {
	if g == nil || g.Redis == nil || max <= 0 || n <= 0 {
		return 0, false, nil
	}
	now := time.Now()
	if g.Now != nil {
		now = g.Now()
	}
	key := fmt.Sprintf("lg:runaway:%d:%s", destinationID, now.UTC().Format("2006010215"))
	pipe := g.Redis.TxPipeline()
	incr := pipe.IncrBy(ctx, key, int64(n))
	pipe.Expire(ctx, key, 2*time.Hour)
	if _, err := pipe.Exec(ctx); err != nil {
		return 0, false, fmt.Errorf("syncer: runaway count: %w", err)
	}
	return incr.Val(), incr.Val() > int64(max), nil
}

// checkRunaway pauses a destination whose writes this hour passed its ceiling
// and alerts once per pause episode.
func (r *SyncRelay) checkRunaway(ctx context.Context, d models.Destination, writes int) error {
	count, over, err := r.Runaway.Add(ctx, d.ID, writes, d.Config.MaxWritesPerHour)
	if err != nil {
		r.Log.Warn("crm sync: runaway guard unavailable", "destination", d.ID, "err", err)
		return nil
	}
	if !over {
		return nil
	}
	reason := fmt.Sprintf("runaway: %d CRM writes this hour, above the ceiling of %d", count, d.Config.MaxWritesPerHour)
	return r.Store.Tx(ctx, func(tx *models.Store) error {
		p, err := tx.DestinationPauseFault(ctx, d.ID, models.PauseRunaway, reason, nil, r.now())
		if err != nil || !p.Started {
			return err
		}
		episode := p.Episode
		r.Log.Error("crm sync: destination paused by the runaway guard", "destination", d.ID, "writes", count)
		if err := tx.AuditRecord(ctx, models.Audit{WorkspaceID: d.WorkspaceID, Actor: "crm-sync", Action: "destination.pause",
			SubjectType: "destination", SubjectID: fmt.Sprint(d.ID), Before: map[string]any{"paused": false},
			After: map[string]any{"paused": true, "reason": reason}}); err != nil {
			return err
		}
		return r.alert(ctx, tx, d, fmt.Sprintf("alert:crm:%d:runaway:%d", d.ID, episode), "crm_runaway",
			fmt.Sprintf("%s was paused: %s. Work is held; look for an automation loop, then resume.", d.Name, reason))
	})
}

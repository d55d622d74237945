package ingest

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/leadgate/leadgate/ingest/spool"
	"github.com/leadgate/leadgate/models"
)

// ReplaySpool moves spooled events into Postgres, deduplicated like live
// deliveries, then publishes and enqueues them. It returns how many records
// were replayed; records stay in the spool until Postgres has committed them.
func (s *Service) ReplaySpool(ctx context.Context) (int, error) {
	if s.Spool == nil || s.Spool.Pending() == 0 {
		return 0, nil
	}
	n, err := s.Spool.Replay(ctx, func(ctx context.Context, recs []spool.Record) error {
		batch := make([]models.IngestItem, 0, len(recs))
		for _, r := range recs {
			var it models.IngestItem
			if err := json.Unmarshal(r.Data, &it); err != nil {
				s.Log.Error("ingest: undecodable spool record skipped", "id", r.ID, "err", err)
				continue
			}
			batch = append(batch, it)
		}
		results, err := s.Store.IngestReplaySpooled(ctx, batch, s.Window)
		if err != nil {
			return fmt.Errorf("ingest: replay spool: %w", err)
		}
		s.Postgres.MarkUp()
		// A spooled id whose key was stored meanwhile was still acknowledged
		// to its sender: keep it as an alias of the stored event.
		for i, r := range results {
			if r.Duplicate && r.EventID != batch[i].Event.ID {
				if err := s.Store.EventAliasAdd(ctx, batch[i].Event.WorkspaceID, batch[i].Event.ID, r.EventID); err != nil {
					return fmt.Errorf("ingest: replay spool: %w", err)
				}
			}
		}
		s.afterCommit(ctx, batch, results)
		// Retries answered from the spool while the event waited there count now, on the key it was stored
		// under (the stored event's key when the replay itself was a duplicate).
		for i, r := range results {
			key := batch[i].Event.IdempotencyKey
			if r.Duplicate || key == "" {
				key = batch[i].Key
			}
			s.uncounted.spooledToKey(batch[i].Event.ID, batch[i].Event.WorkspaceID, key)
		}
		s.countUncounted(ctx)
		return nil
	})
	if s.Metrics != nil && n > 0 {
		s.Metrics.Replayed.Add(float64(n))
	}
	return n, err
}

// postgresBack is signalled when Postgres takes writes again (nil: never).
func (s *Service) postgresBack() <-chan struct{} {
	if s.Postgres == nil {
		return nil
	}
	return s.Postgres.Back
}

// RunSpoolReplay replays the spool every interval, and as soon as Postgres is back after an outage,
// until ctx ends.
func (s *Service) RunSpoolReplay(ctx context.Context, interval time.Duration) {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		case <-s.postgresBack():
		}
		n, err := s.ReplaySpool(ctx)
		if n > 0 {
			s.Log.Info("ingest: spool replayed", "events", n)
		}
		if err != nil && ctx.Err() == nil {
			s.Log.Warn("ingest: spool replay incomplete; will retry", "err", err)
		}
	}
}

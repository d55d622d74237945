package syncer

import (
	"context"
	"log/slog"
	"maps"
	"slices"
	"strings"
	"sync"

	"github.com/leadgate/leadgate/crm"
	"github.com/leadgate/leadgate/crm/sandbox"
	"github.com/leadgate/leadgate/models"
)

// DriftCheck compares what leadgate last wrote to each CRM (sync_state.written) with what the CRM holds
// now and stores the differences (sync_drift; GET .../destinations/{id}/drift). It reads through the
// destination's rate limiter, so it shares the CRM budget with writes; MaxContacts bounds one run.
type DriftCheck struct {
	Store       *models.Store
	Connector   *Connector
	Log         *slog.Logger
	MaxContacts int // per destination and run; default 500

	// cursor is where each destination's next run resumes, so that successive runs walk every synced
	// contact (wrapping at the end) instead of re-reading the first MaxContacts. It is a hint kept in
	// memory: after a restart the walk begins again from the start.
	mu     sync.Mutex
	cursor map[int64]string
}

// RunAll checks every active destination.
func (c *DriftCheck) RunAll(ctx context.Context) error {
	ds, err := c.Store.DestinationList(ctx, 0)
	if err != nil {
		return err
	}
	for _, d := range ds {
		if !d.Active() {
			continue
		}
		if n, err := c.Run(ctx, d); err != nil {
			c.Log.Warn("crm drift check failed", "destination", d.ID, "err", err)
		} else if n > 0 {
			c.Log.Info("crm drift found", "destination", d.ID, "fields", n)
		}
	}
	return nil
}

// Run checks one destination and returns how many drifted fields it found.
func (c *DriftCheck) Run(ctx context.Context, d models.Destination) (int, error) {
	get, err := c.getter(ctx, d)
	if err != nil {
		return 0, err
	}
	limit := c.MaxContacts
	if limit <= 0 {
		limit = 500
	}
	start := c.resumeAt(d.ID)
	found, after, seen := 0, start, 0
	wrapped := start == ""
	defer func() { c.saveCursor(d.ID, after) }()
	for seen < limit {
		states, err := c.Store.SyncStatesPage(ctx, d.ID, after, min(100, limit-seen))
		if err != nil {
			return found, err
		}
		if len(states) == 0 {
			if wrapped {
				after = ""
				return found, nil
			}
			after, wrapped = "", true // the end of the walk: go on from the first contact
			continue
		}
		var checked []string
		var drift []models.SyncDrift
		for _, st := range states {
			if wrapped && start != "" && st.ContactID > start {
				return found + len(drift), c.Store.SyncDriftReplace(ctx, d.ID, checked, drift) // a full lap
			}
			after = st.ContactID
			seen++
			remote, err := get(ctx, st.RemoteID)
			if err != nil {
				if crm.ClassOf(err) == crm.RateLimited || ctx.Err() != nil {
					return found, err
				}
				c.Log.Debug("crm drift: read failed", "destination", d.ID, "contact", st.ContactID, "err", err)
				continue
			}
			checked = append(checked, st.ContactID)
			drift = append(drift, compare(d, st, remote)...)
		}
		if err := c.Store.SyncDriftReplace(ctx, d.ID, checked, drift); err != nil {
			return found, err
		}
		found += len(drift)
	}
	return found, nil
}

func (c *DriftCheck) resumeAt(destinationID int64) string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.cursor[destinationID]
}

func (c *DriftCheck) saveCursor(destinationID int64, after string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.cursor == nil {
		c.cursor = map[int64]string{}
	}
	c.cursor[destinationID] = after
}

// compare lists the written fields whose remote value differs (bookkeeping keys and the loop fields aside).
func compare(d models.Destination, st models.SyncState, remote map[string]string) []models.SyncDrift {
	loop, sync := d.Config.LoopField, d.Config.SyncField
	if loop == "" {
		loop = crm.DefaultLoopField
	}
	if sync == "" {
		sync = crm.DefaultSyncField
	}
	var out []models.SyncDrift
	for _, k := range slices.Sorted(maps.Keys(st.Written)) {
		if strings.HasPrefix(k, "_") || k == loop || k == sync {
			continue
		}
		w, r := st.Written[k], remote[k]
		if !strings.EqualFold(strings.TrimSpace(w), strings.TrimSpace(r)) {
			out = append(out, models.SyncDrift{DestinationID: d.ID, ContactID: st.ContactID, Field: k, Written: w, Remote: r})
		}
	}
	return out
}

// getter reads one remote record's values: the sandbox from Postgres, CRMs through their reader.
func (c *DriftCheck) getter(ctx context.Context, d models.Destination) (func(context.Context, string) (map[string]string, error), error) {
	if d.Kind == crm.KindSandbox {
		sb := sandbox.New(c.Store.DB(), d.ID, sandbox.Options{})
		return func(ctx context.Context, id string) (map[string]string, error) {
			r, err := sb.Contact(ctx, id)
			if err != nil {
				return nil, err
			}
			return r.Values(), nil
		}, nil
	}
	reader, err := readerFor(ctx, c.Connector, d)
	if err != nil {
		return nil, err
	}
	return func(ctx context.Context, id string) (map[string]string, error) {
		rc, err := reader.Get(ctx, id)
		if err != nil {
			return nil, err
		}
		return rc.Values, nil
	}, nil
}

package apply

import (
	"context"

	"github.com/leadgate/leadgate/lifecycle"
	"github.com/leadgate/leadgate/models"
)

// resolutionCache is implemented by a store that keeps its contacts' field resolutions between events:
// a contact with a long history is then resolved over it once per batch, not once per event.
type resolutionCache interface {
	// FieldsWith is the contact's fields resolved over its observations and obs, which are not yet
	// added. ok is false when the cache cannot answer exactly; the caller then resolves in full.
	FieldsWith(ctx context.Context, contactID string, created bool, rules lifecycle.Rules, obs []models.Observation) (map[string]lifecycle.Resolved, bool, error)
}

// FieldsWith implements resolutionCache. A contact's resolution is built on first use from what the
// batch read up front and what it has added since; ObservationsAdd keeps it current, and a rollback
// forgets every resolution (they may hold what was undone).
func (b *batchStore) FieldsWith(ctx context.Context, contactID string, created bool, rules lifecycle.Rules, obs []models.Observation) (map[string]lifecycle.Resolved, bool, error) {
	res, ok := b.resolutions[contactID]
	if !ok {
		var history []models.Observation
		if !created {
			var err error
			if history, err = b.ObservationsForContact(ctx, contactID); err != nil {
				return nil, false, err
			}
		}
		res = rules.NewResolution(lifecycleObservations(history))
		if b.resolutions == nil {
			b.resolutions = map[string]*lifecycle.Resolution{}
		}
		b.resolutions[contactID] = res
	}
	fields, ok := res.With(lifecycleObservations(obs))
	return fields, ok, nil
}

// resolveAdded takes observations the batch adds into the resolutions it keeps.
func (b *batchStore) resolveAdded(obs []models.Observation) {
	if len(b.resolutions) == 0 {
		return
	}
	in := lifecycleObservations(obs)
	for i, o := range obs {
		if res, ok := b.resolutions[o.ContactID]; ok {
			res.Add(in[i])
		}
	}
}

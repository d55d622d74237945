package syncer

import (
	"context"
	"time"

	"github.com/leadgate/leadgate/models"
)

// rememberWrites records what a successful CRM write set, so that the CRM's
// webhook about that very change is recognised as our echo (issue 5 §1) and
// not applied again. Names are leadgate's: "stage" plus the field names.
func (r *SyncRelay) rememberWrites(ctx context.Context, workspaceID int64, contacts map[string]models.Contact, done []models.SyncOutcome) {
	if r.Writes == nil || len(done) == 0 {
		return
	}
	ttl := models.LoopSettings{}.WithDefaults().EchoWindow()
	if g, err := r.Store.GuardSettingsGet(ctx, workspaceID); err == nil {
		ttl = g.Loop.WithDefaults().EchoWindow()
	}
	for _, o := range done {
		c, ok := contacts[o.ContactID]
		if !ok {
			continue
		}
		identity := EchoIdentity(c)
		if identity == "" {
			continue
		}
		if err := r.Writes.Remember(ctx, workspaceID, identity, EchoValues(c), ttl); err != nil {
			r.Log.Warn("crm sync: echo memory not updated; a CRM echo may be applied once", "contact", c.ID, "err", err)
		}
	}
}

// EchoIdentity is the key the loop guard remembers a contact's writes under:
// its normalized email, else its E.164 phone.
func EchoIdentity(c models.Contact) string {
	if c.Email != nil {
		return *c.Email
	}
	if c.Phone != nil {
		return *c.Phone
	}
	return ""
}

// EchoValues are the values leadgate wrote for a contact, in leadgate names.
func EchoValues(c models.Contact) map[string]string {
	v := make(map[string]string, len(c.Fields)+1)
	for k, val := range c.Fields {
		v[k] = val
	}
	v["stage"] = c.Stage
	return v
}

// DestinationProbe reports, for the health alarms, how many of a workspace's
// destinations are paused by an auth failure and the age of its oldest queued sync.
func DestinationProbe(store *models.Store) func(ctx context.Context, workspaceID int64) (int, time.Duration, bool, error) {
	return func(ctx context.Context, workspaceID int64) (int, time.Duration, bool, error) {
		return store.DestinationHealth(ctx, workspaceID)
	}
}

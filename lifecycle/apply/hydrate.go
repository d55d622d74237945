package apply

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/leadgate/leadgate/crm/hydrate"
	"github.com/leadgate/leadgate/ingest/normalize"
	"github.com/leadgate/leadgate/internal/failpoint"
	"github.com/leadgate/leadgate/models"
)

// Hydrator fetches the lead behind an id-only payload (a Meta leadgen id, a
// HubSpot objectId) from its provider.
type Hydrator interface {
	Hydrate(ctx context.Context, workspaceID int64, hydration json.RawMessage) (email, phone, first, last string, fields map[string]string, err error)
}

// hydrate fills an id-only event from its provider before identity
// resolution. It returns the completed event and true, or false when the
// event was parked (no credentials yet, a transient provider failure),
// rejected (the provider's lead has no identity) or dead-lettered.
func (a *Applier) hydrate(ctx context.Context, ev models.Event) (models.Event, bool, error) {
	if a.Hydrator == nil {
		return ev, false, a.parkForHydration(ctx, ev, 15*time.Minute,
			"waiting for hydration: the payload carries only a provider id and no provider client is configured for it", false)
	}
	email, phone, first, last, fields, err := a.Hydrator.Hydrate(ctx, ev.WorkspaceID, ev.Hydration)
	a.Failpoints.Hit(failpoint.HydrateAfterFetch)
	var perr *hydrate.Error
	switch {
	case errors.Is(err, hydrate.ErrNoCredentials):
		return ev, false, a.parkForHydration(ctx, ev, 15*time.Minute,
			"waiting for hydration: add the provider's credentials (API: /hydration-providers) and it is fetched on the next try", false)
	case errors.As(err, &perr) && perr.Retry:
		delay := max(perr.RetryAfter, waitDelay(ev.Attempts+1))
		return ev, false, a.parkForHydration(ctx, ev, delay, "hydration: "+perr.Error(), true)
	case err != nil:
		return ev, false, a.quarantineHydration(ctx, ev, "hydration failed: "+err.Error())
	}
	src, err := a.Store.SourceGet(ctx, ev.WorkspaceID, ev.SourceID)
	if err != nil {
		return ev, false, err
	}
	e, p := normalize.Email(email), normalize.Phone(phone, src.Config.DefaultRegion)
	merged := map[string]any{}
	if len(ev.Fields) > 0 {
		_ = json.Unmarshal(ev.Fields, &merged)
	}
	for k, v := range fields {
		if _, ok := merged[k]; !ok {
			merged[k] = v
		}
	}
	fb, _ := json.Marshal(merged)
	h := models.EventHydration{Email: e.Value, EmailRaw: e.Raw, Phone: p.Value, PhoneRaw: p.Raw,
		FirstName: normalize.Name(first), LastName: normalize.Name(last), Fields: fb}
	if !e.Valid && !p.Valid {
		h.Status, h.Reason = models.EventRejected, fmt.Sprintf("the provider's lead has no usable email or phone (email %q, phone %q)", email, phone)
	}
	updated, err := a.Store.EventHydrate(ctx, ev.ID, h)
	if err != nil {
		return ev, false, err
	}
	a.Failpoints.Hit(failpoint.HydrateAfterStore)
	return updated, h.Status == "", nil
}

// parkForHydration leaves the event waiting; transient failures count towards
// the event's attempts and dead-letter it after PoisonAttempts.
func (a *Applier) parkForHydration(ctx context.Context, ev models.Event, delay time.Duration, reason string, counts bool) error {
	attempts := ev.Attempts
	if counts {
		attempts++
		if attempts >= a.poisonAttempts() {
			return a.quarantineHydration(ctx, ev, fmt.Sprintf("%s (gave up after %d attempts)", reason, attempts))
		}
	}
	next := a.now().Add(delay)
	return a.Store.EventSetOutcome(ctx, ev.ID, models.EventOutcome{Status: models.EventWaiting, Reason: reason, Attempts: attempts, NextAttemptAt: &next})
}

func (a *Applier) quarantineHydration(ctx context.Context, ev models.Event, reason string) error {
	return a.Store.Tx(ctx, func(tx *models.Store) error {
		if _, err := tx.DeadLetterAdd(ctx, models.DeadLetter{WorkspaceID: ev.WorkspaceID, Kind: "hydration_failed", Reason: reason,
			EventID: &ev.ID, SourceID: &ev.SourceID, Payload: eventPayload(ev), Attempts: ev.Attempts}); err != nil {
			return err
		}
		return tx.EventSetOutcome(ctx, ev.ID, models.EventOutcome{Status: models.EventQuarantined, Reason: reason, Attempts: ev.Attempts})
	})
}

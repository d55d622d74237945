package apply

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/leadgate/leadgate/ingest/normalize"
	"github.com/leadgate/leadgate/internal/failpoint"
	"github.com/leadgate/leadgate/lifecycle/hydrate"
	"github.com/leadgate/leadgate/models"
)

// Hydrator fetches the lead behind an id-only payload (a Meta leadgen id, a
// HubSpot objectId) from its provider.
type Hydrator interface {
	Hydrate(ctx context.Context, workspaceID int64, hydration json.RawMessage) (email, phone, first, last string, fields map[string]string, err error)
}

// HydrationAttempts is how many failed fetches dead-letter an id-only event.
// The delays between them (hydrationDelay) add up to about ten hours, so a
// provider outage of hours delays a lead without losing it.
const HydrationAttempts = 9

// hydrationDelay is the wait after the n-th failed fetch: 2 s, 4 s and 8 s for
// a blip, then the dead-letter auto-retry schedule (20 min, 40, 80, 160, 320).
func hydrationDelay(n int) time.Duration {
	if n <= 3 {
		return 2 * time.Second << max(n-1, 0)
	}
	return 20 * time.Minute << min(n-4, 4)
}

// needsHydration reports an id-only event that has no identity yet.
func needsHydration(ev models.Event) bool {
	return len(ev.Hydration) > 0 && ev.Email == nil && ev.Phone == nil
}

// hydrate fills an id-only event from its provider before identity
// resolution. It returns the completed event and true, or false when the
// event was parked (no credentials yet, a transient provider failure),
// rejected (the provider's lead has no identity) or dead-lettered.
func (a *Applier) hydrate(ctx context.Context, ev models.Event) (models.Event, bool, error) {
	h, err := a.fetchLead(ctx, ev)
	var perr *hydrate.Error
	switch {
	case errors.Is(err, errNoHydrator):
		return ev, false, a.parkForHydration(ctx, ev, 15*time.Minute,
			"waiting for hydration: the payload carries only a provider id and no provider client is configured for it", false)
	case errors.Is(err, hydrate.ErrNoCredentials):
		return ev, false, a.parkForHydration(ctx, ev, 15*time.Minute,
			"waiting for hydration: add the provider's credentials (API: /hydration-providers) and it is fetched on the next try", false)
	case errors.As(err, &perr) && perr.Retry:
		return ev, false, a.parkForHydration(ctx, ev, perr.RetryAfter, "hydration: "+perr.Error(), true)
	case errors.Is(err, errSourceLookup):
		return ev, false, err
	case err != nil:
		return ev, false, a.quarantineHydration(ctx, ev, ev.Attempts+1, "hydration failed: "+err.Error())
	}
	updated, err := a.Store.EventHydrate(ctx, ev.ID, h)
	if err != nil {
		return ev, false, err
	}
	a.Failpoints.Hit(failpoint.HydrateAfterStore)
	return updated, h.Status == "", nil
}

var (
	errNoHydrator   = errors.New("apply: no provider client is configured")
	errSourceLookup = errors.New("apply: read the event's source")
)

// fetchLead asks the provider for an id-only event's lead and normalizes it
// as ingest would. A lead without a usable email or phone comes back with
// Status rejected: it is never applied.
func (a *Applier) fetchLead(ctx context.Context, ev models.Event) (models.EventHydration, error) {
	if a.Hydrator == nil {
		return models.EventHydration{}, errNoHydrator
	}
	email, phone, first, last, fields, err := a.Hydrator.Hydrate(ctx, ev.WorkspaceID, ev.Hydration)
	a.Failpoints.Hit(failpoint.HydrateAfterFetch)
	if err != nil {
		return models.EventHydration{}, err
	}
	src, err := a.Store.SourceGet(ctx, ev.WorkspaceID, ev.SourceID)
	if err != nil {
		return models.EventHydration{}, fmt.Errorf("%w %d: %w", errSourceLookup, ev.SourceID, err)
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
		h.Email, h.Phone = "", ""
		h.Status, h.Reason = models.EventRejected, fmt.Sprintf("no identity: the provider's lead has no usable email or phone (email %q, phone %q); it is not a lead and is not retried", email, phone)
	}
	return h, nil
}

// parkForHydration leaves the event waiting. A transient provider failure
// (counts) is one attempt: the event waits hydrationDelay (or the provider's
// Retry-After, when longer) and is dead-lettered at HydrationAttempts, with
// the count it records and the count its reason states being the same.
func (a *Applier) parkForHydration(ctx context.Context, ev models.Event, delay time.Duration, reason string, counts bool) error {
	attempts := ev.Attempts
	if counts {
		attempts++
		if attempts >= HydrationAttempts {
			return a.quarantineHydration(ctx, ev, attempts, fmt.Sprintf("%s (gave up after %d attempts)", reason, attempts))
		}
		delay = max(delay, hydrationDelay(attempts))
		reason = fmt.Sprintf("%s (attempt %d of %d; next in %s)", reason, attempts, HydrationAttempts, delay)
	}
	next := a.now().Add(delay)
	return a.Store.EventSetOutcome(ctx, ev.ID, models.EventOutcome{Status: models.EventWaiting, Reason: reason, Attempts: attempts, NextAttemptAt: &next})
}

func (a *Applier) quarantineHydration(ctx context.Context, ev models.Event, attempts int, reason string) error {
	return a.Store.Tx(ctx, func(tx *models.Store) error {
		dlID, err := tx.DeadLetterAdd(ctx, models.DeadLetter{WorkspaceID: ev.WorkspaceID, Kind: KindHydrationFailed, Reason: reason,
			EventID: &ev.ID, SourceID: &ev.SourceID, Payload: eventPayload(ev), Attempts: attempts})
		if err != nil {
			return err
		}
		if err := addAlert(ctx, tx, ev, nil, dlID, KindHydrationFailed, reason); err != nil {
			return err
		}
		return tx.EventSetOutcome(ctx, ev.ID, models.EventOutcome{Status: models.EventQuarantined, Reason: reason, Attempts: attempts})
	})
}

// KindHydrationFailed is the dead-letter kind of an id-only event whose lead
// could not be fetched. Replaying it fetches the lead again.
const KindHydrationFailed = "hydration_failed"

// holdWithoutIdentity is the guard every applying path passes: an event with
// neither email nor phone is never applied. An id-only event is sent back to
// hydration (waiting, retried at once); anything else is rejected as not a
// lead. It reports whether it handled the event.
func (r *applyRun) holdWithoutIdentity(ctx context.Context, ev models.Event) (bool, error) {
	if ev.Email != nil || ev.Phone != nil {
		return false, nil
	}
	if len(ev.Hydration) == 0 {
		return true, r.tx.EventSetOutcome(ctx, ev.ID, models.EventOutcome{Status: models.EventRejected,
			Reason: "no email or phone: not a lead", Attempts: ev.Attempts})
	}
	next := r.a.now().Add(time.Second)
	if r.later != nil {
		*r.later = append(*r.later, delayed{eventID: ev.ID, delay: time.Second})
	}
	return true, r.tx.EventSetOutcome(ctx, ev.ID, models.EventOutcome{Status: models.EventWaiting,
		Reason: "waiting for hydration: the lead's email and phone are fetched from the provider first", Attempts: ev.Attempts, NextAttemptAt: &next})
}

// rehydrateForReplay fetches the lead of a hydration dead letter again before
// it is replayed ("fix the cause, then replay"). A fetch that still fails, or
// a lead without an identity, is the operator's to see: the dead letter stays
// open and nothing is applied.
func (a *Applier) rehydrateForReplay(ctx context.Context, workspaceID, id int64) error {
	dl, err := a.Store.DeadLetterGet(ctx, workspaceID, id)
	if err != nil || dl.EventID == nil || dl.Status != models.DeadLetterOpen {
		return nil // the replay itself reports these
	}
	ev, err := a.Store.EventByID(ctx, *dl.EventID)
	if err != nil {
		return err
	}
	if !needsHydration(ev) {
		return nil
	}
	h, err := a.fetchLead(ctx, ev)
	if err != nil {
		if errors.Is(err, errSourceLookup) {
			return err
		}
		return &OperatorError{Field: "id", Conflict: true, Message: "dead letter " + strconv.FormatInt(id, 10) +
			" is still open: fetching the lead from its provider failed again (" + err.Error() + "); fix the cause and replay again"}
	}
	if h.Status != "" {
		return &OperatorError{Field: "id", Conflict: true, Message: "dead letter " + strconv.FormatInt(id, 10) +
			" is still open: " + h.Reason + "; there is no lead to apply, discard it"}
	}
	return a.Store.EventRehydrate(ctx, ev.ID, h)
}

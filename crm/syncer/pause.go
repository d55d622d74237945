package syncer

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/leadgate/leadgate/crm"
	"github.com/leadgate/leadgate/internal/egress"
	"github.com/leadgate/leadgate/models"
)

// quotaUnknownWait is how long a spent quota holds the destination when the CRM did not say when it resets.
const quotaUnknownWait = time.Hour

// destinationFault is a failure that every contact of the destination would meet the same way: it pauses
// the destination instead of failing each contact.
type destinationFault struct {
	cause  string // models.PauseAuth, PauseBlocked, PauseSetup, PauseQuota
	reason string // the plain paused_reason
	why    string // for the alert
	until  *time.Time
	err    error
}

// faultOf describes err (an Auth, Setup or Quota failure) as a fault of the destination.
func (r *SyncRelay) faultOf(err error) destinationFault {
	msg := err.Error()
	var ce *crm.Error
	if errors.As(err, &ce) {
		msg = ce.Message
	}
	switch crm.ClassOf(err) {
	case crm.Setup:
		return destinationFault{cause: models.PauseSetup, reason: msg, why: "its setup is incomplete", err: err}
	case crm.Quota:
		wait := retryAfter(err)
		if wait <= 0 {
			wait = quotaUnknownWait
		}
		until := r.now().Add(wait).UTC()
		return destinationFault{cause: models.PauseQuota, until: &until, err: err, why: "its daily API quota is used up",
			reason: fmt.Sprintf("daily API quota used up until %s: %s", until.Format(time.RFC3339), msg)}
	}
	if egress.IsBlocked(err) {
		return destinationFault{cause: models.PauseBlocked, reason: "blocked: " + err.Error(), err: err,
			why: "the SSRF guard refused its base URL's address"}
	}
	return destinationFault{cause: models.PauseAuth, reason: "auth: " + err.Error(), err: err, why: "the CRM rejected leadgate's credentials"}
}

// faultRank orders the faults of one batch: the one a person must fix first names the pause.
var faultRank = map[string]int{models.PauseQuota: 1, models.PauseSetup: 2, models.PauseAuth: 3, models.PauseBlocked: 4}

// worse returns whichever of f and g names the pause.
func (f destinationFault) worse(g destinationFault) destinationFault {
	if faultRank[g.cause] > faultRank[f.cause] {
		return g
	}
	return f
}

// pauseForFault pauses the destination for fault; only the call that starts a pause episode audits and
// alerts, and a fault the probe could not see (back right after an automatic resume) does not alert again.
func (r *SyncRelay) pauseForFault(ctx context.Context, d models.Destination, fault destinationFault) error {
	return r.Store.Tx(ctx, func(tx *models.Store) error {
		p, err := tx.DestinationPauseFault(ctx, d.ID, fault.cause, fault.reason, fault.until, r.now())
		if err != nil || !p.Started {
			return err
		}
		r.Connector.Forget(d.ID)
		r.Log.Error("crm sync: destination paused", "destination", d.ID, "cause", fault.cause, "repeat", p.Repeat, "err", fault.err)
		after := map[string]any{"paused": true, "cause": fault.cause, "reason": fault.reason}
		if fault.until != nil {
			after["paused_until"] = fault.until
		}
		if err := tx.AuditRecord(ctx, models.Audit{WorkspaceID: d.WorkspaceID, Actor: "crm-sync", Action: "destination.pause",
			SubjectType: "destination", SubjectID: fmt.Sprint(d.ID), Before: map[string]any{"paused": false}, After: after}); err != nil {
			return err
		}
		if p.Repeat {
			return nil
		}
		resume := "leadgate resumes it by itself once the fault is gone (checked every 15 s)"
		if fault.until != nil {
			resume = "leadgate resumes it at " + fault.until.Format(time.RFC3339)
		}
		return r.alert(ctx, tx, d, fmt.Sprintf("alert:crm:%d:paused:%d", d.ID, p.Episode), "crm_destination_paused",
			fmt.Sprintf("%s was paused: %s (%s). Work is held; %s, or resume it by hand.", d.Name, fault.why, fault.reason, resume))
	})
}

package syncer

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/leadgate/leadgate/crm"
	"github.com/leadgate/leadgate/models"
)

// syncPendingWait is how long a native side effect waits when its contact has no record at a destination
// yet (the contact's sync is still pending): it looks again without spending an attempt.
const syncPendingWait = 15 * time.Second

// syncPendingLimit bounds that wait: a side effect whose contact still has no record a day after the row was
// written (its sync dead-lettered, the contact was erased) is retried as a counted failure and then
// dead-lettered with the reason, instead of waiting for ever.
const syncPendingLimit = 24 * time.Hour

// sendNative runs a side effect natively at every enabled destination that can (no webhook configured):
// the sandbox records any action; a CRM adapter implementing crm.ActionRunner runs the actions it supports
// on the contact's record there, through the destination's rate limiter and failure classes (crmErr). A
// destination done is recorded in the row's payload ("done"), so a retry never repeats it. A destination
// that cannot run the action is named in the outcome; when none can, the row is dead-lettered at once
// with the reason. It returns "" when no destination runs native actions at all (the row is skipped).
func (r *SideEffectRelay) sendNative(ctx context.Context, row models.OutboxRow, body sideEffectBody) (string, error) {
	var p struct {
		Done []int64 `json:"done"`
	}
	_ = json.Unmarshal(row.Payload, &p) // the payload was read as sideEffectBody already
	dests, err := r.Store.DestinationList(ctx, row.WorkspaceID)
	if err != nil {
		return "", err
	}
	var outcome, unsupported []string
	var fails destFailures
	capable := len(p.Done) > 0
	for _, d := range dests {
		if !d.Enabled || slices.Contains(p.Done, d.ID) {
			continue
		}
		note, ok, err := r.nativeOne(ctx, row, body, d)
		switch {
		case !ok:
			if note != "" {
				unsupported = append(unsupported, note)
			}
			continue
		case err != nil:
			capable = true
			fails.add(err)
			continue
		}
		capable = true
		outcome = append(outcome, note)
		p.Done = append(p.Done, d.ID)
		if err := r.saveProgress(ctx, row, p.Done); err != nil {
			return "", err
		}
	}
	if err := fails.err(); err != nil {
		return "native", err
	}
	switch {
	case !capable && len(unsupported) > 0:
		return "native", permanentError{errors.New(strings.Join(unsupported, "; "))}
	case !capable:
		return "", nil
	case len(outcome) == 0:
		return "native: every destination was done by an earlier attempt", nil
	}
	return "native: " + strings.Join(append(outcome, unsupported...), "; "), nil
}

// nativeOne runs the action at one destination. ok is false when the destination does not run it (note
// then says why, or is "" for a destination without native actions at all).
func (r *SideEffectRelay) nativeOne(ctx context.Context, row models.OutboxRow, body sideEffectBody, d models.Destination) (note string, ok bool, err error) {
	conn, err := r.Connector.Connect(ctx, d)
	if err != nil {
		return "", true, fmt.Errorf("connect destination %s: %w", d.Name, err)
	}
	if sb, isSandbox := conn.Dest.(ActionRunner); isSandbox {
		if d.Paused {
			return "", true, heldError{fmt.Errorf("destination %s is paused", d.Name), pausedWait}
		}
		if err := sb.RunAction(ctx, row.StableID, body.ContactID, body.Action, body.Params); err != nil {
			return "", true, r.crmErr(ctx, d, conn, "run "+body.Action, err)
		}
		return d.Name + " ran " + body.Action, true, nil
	}
	runner, isRunner := conn.Dest.(crm.ActionRunner)
	if !isRunner {
		return "", false, nil
	}
	if !runner.SupportsAction(body.Action) {
		// RunAction answers an unsupported action with its reason (the actions it does support) and sends
		// nothing.
		return fmt.Sprintf("%s: %v", d.Name, runner.RunAction(ctx, "", crm.Action{Name: body.Action})), false, nil
	}
	if d.Paused {
		return "", true, heldError{fmt.Errorf("destination %s is paused", d.Name), pausedWait}
	}
	if body.ContactID == "" {
		return "", true, permanentError{fmt.Errorf("%s: %s: the side effect names no contact", d.Name, body.Action)}
	}
	st, err := r.Store.SyncStateGet(ctx, d.ID, body.ContactID)
	if err != nil && !errors.Is(err, models.ErrNotFound) {
		return "", true, err
	}
	if st.RemoteID == "" {
		pending := fmt.Errorf("%s: contact %s has no record there yet (its sync is pending)", d.Name, body.ContactID)
		if r.now().Sub(row.CreatedAt) > syncPendingLimit {
			return "", true, pending
		}
		return "", true, heldError{pending, syncPendingWait}
	}
	act := crm.Action{StableID: row.StableID, Name: body.Action, Params: body.Params}
	if err := runner.RunAction(ctx, st.RemoteID, act); err != nil {
		return "", true, r.crmErr(ctx, d, conn, body.Action+" on record "+st.RemoteID, err)
	}
	return d.Name + " ran " + body.Action + " on " + st.RemoteID, true, nil
}

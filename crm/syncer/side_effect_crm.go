package syncer

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/leadgate/leadgate/crm"
	"github.com/leadgate/leadgate/models"
)

// isCRMAction reports whether a side effect operates on CRM records through the destinations' adapters
// (crm_delete from an erase, crm_merge from a leadgate merge) rather than a webhook or a native action.
func isCRMAction(action string) bool {
	return action == models.ActionCRMDelete || action == models.ActionCRMMerge
}

// crmSideEffect is what sendCRM reads from a crm_delete or crm_merge payload.
type crmSideEffect struct {
	ContactID string                        `json:"contact_id"` // erased contact, or merge survivor
	LoserID   string                        `json:"loser_id"`   // crm_merge
	RemoteIDs map[string]string             `json:"remote_ids"` // crm_delete: destination id -> record id
	Remotes   map[string]models.MergeRemote `json:"remotes"`    // crm_merge: destination id -> records
	Done      []int64                       `json:"done"`       // destinations already carried out
}

// heldError is a CRM side effect that waits without counting an attempt: its destination is paused, answered
// 429, or refused the credentials. Pausing holds work (issue 4 §1, §7): an expired token or a rate limit
// must not turn erasures into dead letters.
type heldError struct {
	error
	wait time.Duration
}

// pausedWait is how long a side effect for a paused destination waits before it looks again.
const pausedWait = time.Minute

// sendCRM carries a crm_delete or crm_merge out at every destination named in its payload, each through the
// destination's adapter and rate limiter (the Connector). A destination done is recorded in the row's
// payload at once, so a retry after a failure elsewhere never repeats it (no second delete, no second
// merge). Deleted or disabled destinations, the sandbox (erased in the erase's own transaction) and
// adapters without the operation are skipped and named in the outcome. It returns the outcome text, and an
// error when a destination must be retried (permanentError when no retry can help).
func (r *SideEffectRelay) sendCRM(ctx context.Context, row models.OutboxRow) (string, error) {
	var p crmSideEffect
	if err := json.Unmarshal(row.Payload, &p); err != nil {
		return "", permanentError{fmt.Errorf("%s: payload: %w", row.Action, err)}
	}
	targets := map[int64]models.MergeRemote{}
	for k, v := range p.RemoteIDs {
		if id, err := strconv.ParseInt(k, 10, 64); err == nil && v != "" {
			targets[id] = models.MergeRemote{Survivor: v}
		}
	}
	for k, v := range p.Remotes {
		if id, err := strconv.ParseInt(k, 10, 64); err == nil && v.Survivor != "" && v.Loser != "" {
			targets[id] = v
		}
	}
	var outcome []string
	var fails destFailures
	for _, destID := range slices.Sorted(maps.Keys(targets)) {
		if slices.Contains(p.Done, destID) {
			continue
		}
		note, err := r.crmOne(ctx, row, p, destID, targets[destID])
		if err != nil {
			fails.add(err)
			continue
		}
		outcome = append(outcome, note)
		p.Done = append(p.Done, destID)
		if err := r.saveProgress(ctx, row, p.Done); err != nil {
			return "", err
		}
	}
	if err := fails.err(); err != nil {
		return "crm", err
	}
	switch {
	case len(outcome) == 0 && len(p.Done) == 0:
		return "crm: no destination holds a record of the contact", nil
	case len(outcome) == 0:
		return "crm: every destination was done by an earlier attempt", nil
	}
	return "crm: " + strings.Join(outcome, "; "), nil
}

// crmOne carries the operation out at one destination and describes what was done.
func (r *SideEffectRelay) crmOne(ctx context.Context, row models.OutboxRow, p crmSideEffect, destID int64, rec models.MergeRemote) (string, error) {
	d, err := r.Store.DestinationByID(ctx, destID)
	if errors.Is(err, models.ErrNotFound) || (err == nil && d.WorkspaceID != row.WorkspaceID) {
		return fmt.Sprintf("destination %d gone: skipped", destID), nil
	}
	if err != nil {
		return "", err
	}
	switch {
	case !d.Enabled:
		return d.Name + " disabled: skipped", nil
	case d.Kind == crm.KindSandbox && row.Action == models.ActionCRMDelete:
		return d.Name + " deleted at erase", nil
	case d.Paused:
		return "", heldError{fmt.Errorf("destination %s is paused", d.Name), pausedWait}
	}
	conn, err := r.Connector.Connect(ctx, d)
	if err != nil {
		return "", fmt.Errorf("connect destination %s: %w", d.Name, err)
	}
	switch row.Action {
	case models.ActionCRMDelete:
		del, ok := conn.Dest.(crm.Deleter)
		if !ok {
			return d.Name + " cannot delete: skipped", nil
		}
		if err := del.DeleteContact(ctx, rec.Survivor); err != nil {
			return "", r.crmErr(ctx, d, conn, "delete record "+rec.Survivor, err)
		}
		return d.Name + " deleted " + rec.Survivor, nil
	default:
		m, ok := conn.Dest.(crm.Merger)
		if !ok {
			return d.Name + " cannot merge: skipped", nil
		}
		newID, err := m.MergeContacts(ctx, crm.Merge{SurvivorRemoteID: rec.Survivor, LoserRemoteID: rec.Loser,
			SurvivorLeadgateID: p.ContactID, LoserLeadgateID: p.LoserID})
		if err != nil {
			return "", r.crmErr(ctx, d, conn, "merge record "+rec.Loser+" into "+rec.Survivor, err)
		}
		if newID != "" {
			if err := r.Store.SyncRemoteMoved(ctx, d.ID, p.ContactID, rec.Survivor, newID); err != nil {
				return "", err
			}
			return d.Name + " merged " + rec.Loser + " into " + rec.Survivor + " (now " + newID + ")", nil
		}
		return d.Name + " merged " + rec.Loser + " into " + rec.Survivor, nil
	}
}

// crmErr names the destination and classifies the failure: a validation answer cannot be fixed by
// retrying; a 429 pauses the destination's limiter (for the sync too, on every replica) and holds the side
// effect for Retry-After; refused credentials hold it until the destination works again.
func (r *SideEffectRelay) crmErr(ctx context.Context, d models.Destination, conn *Conn, what string, err error) error {
	wrapped := fmt.Errorf("%s: %s: %w", d.Name, what, err)
	switch crm.ClassOf(err) {
	case crm.Invalid:
		return permanentError{wrapped}
	case crm.RateLimited:
		wait := max(retryAfter(err), time.Second)
		if conn.Limiter != nil {
			if perr := conn.Limiter.Pause(ctx, conn.Key, r.now().Add(wait)); perr != nil {
				r.Log.Warn("side effect: pause limiter", "destination", d.ID, "err", perr)
			}
		}
		return heldError{wrapped, wait}
	case crm.Auth:
		return heldError{wrapped, pausedWait}
	}
	return wrapped
}

// destFailures gathers the failures of one side effect's destinations and decides what the row does.
type destFailures struct {
	retry, perm []error
	held        time.Duration
}

func (f *destFailures) add(err error) {
	var pe permanentError
	var he heldError
	switch {
	case errors.As(err, &pe):
		f.perm = append(f.perm, err)
	case errors.As(err, &he):
		f.held = max(f.held, he.wait)
		f.retry = append(f.retry, err)
	default:
		f.retry = append(f.retry, err)
	}
}

// err is nil when no destination failed; held when every failure only waits; a counted retry when any
// destination must be retried; permanent when only permanent failures remain.
func (f *destFailures) err() error {
	switch {
	case f.held > 0 && len(f.perm) == 0 && allHeld(f.retry):
		return heldError{errors.Join(f.retry...), f.held}
	case len(f.retry) > 0:
		// Counted and retried as a whole: flattened so that neither a held nor a permanent failure of one
		// destination decides for the others.
		return errors.New(errors.Join(append(f.retry, f.perm...)...).Error())
	case len(f.perm) > 0:
		return permanentError{errors.Join(f.perm...)}
	}
	return nil
}

func allHeld(errs []error) bool {
	for _, err := range errs {
		var he heldError
		if !errors.As(err, &he) {
			return false
		}
	}
	return true
}

// saveProgress records the destinations done in the row's payload, keeping its other fields.
func (r *SideEffectRelay) saveProgress(ctx context.Context, row models.OutboxRow, done []int64) error {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(row.Payload, &m); err != nil {
		return fmt.Errorf("side effect %d: payload: %w", row.ID, err)
	}
	b, _ := json.Marshal(done)
	m["done"] = b
	payload, _ := json.Marshal(m)
	return r.Store.SideEffectProgress(ctx, row.ID, payload)
}

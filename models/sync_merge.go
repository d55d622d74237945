package models

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"time"
)

// Side-effect actions carried out on CRM records by the destinations' adapters (crm/syncer/side_effect_crm.go).
const (
	ActionCRMDelete = "crm_delete"
	ActionCRMMerge  = "crm_merge"
)

// MergeRemote is one destination's pair of records in a crm_merge side effect.
type MergeRemote struct {
	Survivor string `json:"survivor"`
	Loser    string `json:"loser"`
}

// CRMMergePayload is the payload of a crm_merge side effect.
type CRMMergePayload struct {
	ContactID string                 `json:"contact_id"` // the survivor
	LoserID   string                 `json:"loser_id"`
	Action    string                 `json:"action"`
	Remotes   map[string]MergeRemote `json:"remotes"` // destination id -> records
	Done      []int64                `json:"done,omitempty"`
}

// SyncMergeIntent carries a leadgate merge to the CRMs. Called in the merge's transaction: for every
// destination where both contacts have a record, one crm_merge side effect (stable id
// "merge:<loser>:<survivor>") names the two records; the side-effect relay merges them (HubSpot) or tags
// the loser's for review. The loser's mappings are retired at once (remote id and what leadgate wrote
// cleared): the loser is never synced again, and its record must not be taken for the survivor's by a
// resync, the drift check or an erase. At a destination where only the loser has a record, that record is
// handed to the survivor instead.
func (s *Store) SyncMergeIntent(ctx context.Context, workspaceID int64, loserID, survivorID string) error {
	loser, err := s.ContactRemoteIDs(ctx, loserID)
	if err != nil {
		return err
	}
	if len(loser) == 0 {
		return nil
	}
	survivor, err := s.ContactRemoteIDs(ctx, survivorID)
	if err != nil {
		return err
	}
	// Where only the loser has a record, the record becomes the survivor's: its next sync updates it by id
	// (and an erase of the survivor finds it) instead of leaving it behind, unreferenced, in the CRM.
	for dest := range loser {
		if survivor[dest] != "" {
			continue
		}
		err := s.db.WithContext(ctx).Exec(`INSERT INTO sync_state (destination_id, contact_id, remote_id, written, last_version, synced_at)
			SELECT destination_id, ?, remote_id, written, 0, synced_at FROM sync_state WHERE destination_id = ? AND contact_id = ?
			ON CONFLICT (destination_id, contact_id) DO UPDATE SET remote_id = EXCLUDED.remote_id, written = EXCLUDED.written`,
			survivorID, dest, loserID).Error
		if err != nil {
			return fmt.Errorf("models: hand merged contact's record to the survivor: %w", err)
		}
	}
	if err := s.db.WithContext(ctx).Exec(`UPDATE sync_state SET remote_id = '', written = '{}' WHERE contact_id = ?`, loserID).Error; err != nil {
		return fmt.Errorf("models: retire merged contact's remote ids: %w", err)
	}
	p := CRMMergePayload{ContactID: survivorID, LoserID: loserID, Action: ActionCRMMerge, Remotes: map[string]MergeRemote{}}
	for dest, l := range loser {
		if sv := survivor[dest]; sv != "" && sv != l {
			p.Remotes[strconv.FormatInt(dest, 10)] = MergeRemote{Survivor: sv, Loser: l}
		}
	}
	if len(p.Remotes) == 0 {
		return nil
	}
	body, err := json.Marshal(p)
	if err != nil {
		return fmt.Errorf("models: merge side effect: %w", err)
	}
	cid := survivorID
	_, err = s.OutboxAdd(ctx, OutboxRow{WorkspaceID: workspaceID, ContactID: &cid, Kind: OutboxSideEffect,
		StableID: "merge:" + loserID + ":" + survivorID, Action: ActionCRMMerge, Payload: body})
	return err
}

// SideEffectProgress stores a side effect's updated payload (the destinations already done), so that a
// retry after a failure at one destination does not repeat the others.
func (s *Store) SideEffectProgress(ctx context.Context, id int64, payload json.RawMessage) error {
	if err := s.db.WithContext(ctx).Exec(`UPDATE outbox SET payload = ? WHERE id = ?`, payload, id).Error; err != nil {
		return fmt.Errorf("models: side effect %d progress: %w", id, err)
	}
	return nil
}

// SyncRemoteMoved maps a contact to the new id a CRM gave its record (a HubSpot merge may mint one), when it
// is still mapped to the old one.
func (s *Store) SyncRemoteMoved(ctx context.Context, destinationID int64, contactID, oldID, newID string) error {
	err := s.db.WithContext(ctx).Exec(`UPDATE sync_state SET remote_id = ? WHERE destination_id = ? AND contact_id = ? AND remote_id = ?`,
		newID, destinationID, contactID, oldID).Error
	if err != nil {
		return fmt.Errorf("models: move remote id: %w", err)
	}
	return nil
}

// SideEffectHold makes a side effect due again at at without counting an attempt: its target is paused or
// rate limited, which holds work and drops nothing.
func (s *Store) SideEffectHold(ctx context.Context, id int64, at time.Time, reason string) error {
	err := s.db.WithContext(ctx).Exec(`UPDATE outbox SET next_attempt_at = ?, last_error = ? WHERE id = ?`, at, syncTruncate(reason), id).Error
	if err != nil {
		return fmt.Errorf("models: side effect %d hold: %w", id, err)
	}
	return nil
}

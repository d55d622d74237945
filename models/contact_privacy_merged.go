package models

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strconv"
)

// CRMRecords are the CRM records holding an erased contact's personal data, per destination: its own
// (sync_state), and those of the contacts merged into it, directly or through a chain of merges. A merge
// retires the loser's remote ids (SyncMergeIntent), and ActiveCampaign and GoHighLevel keep the loser's
// record (tagged leadgate-merged-duplicate), so those are found through the merge history: the crm_merge
// side effects' payloads name both records of every destination the two contacts shared.
type CRMRecords struct {
	Own    map[int64]string   // destination id -> the contact's record
	Merged map[int64][]string // destination id -> records of contacts merged into it
}

// ContactCRMRecords collects the records an erase with crm_delete deletes. Call it before ContactErase,
// which wipes the merge side effects' payloads. A merged record now mapped to a contact outside the
// merge tree (a later contact linked to it by email) is left alone: it is someone else's now.
func (s *Store) ContactCRMRecords(ctx context.Context, contactID string) (CRMRecords, error) {
	own, err := s.ContactRemoteIDs(ctx, contactID)
	if err != nil {
		return CRMRecords{}, err
	}
	recs := CRMRecords{Own: own, Merged: map[int64][]string{}}
	db := s.db.WithContext(ctx)
	var tree []string // the contact and every contact merged into it, however deep
	if err := db.Raw(`WITH RECURSIVE tree(id) AS (
			SELECT id FROM contacts WHERE id = ?
			UNION SELECT c.id FROM contacts c JOIN tree t ON c.merged_into = t.id)
		SELECT id::text FROM tree`, contactID).Scan(&tree).Error; err != nil {
		return CRMRecords{}, fmt.Errorf("models: merge tree of %s: %w", contactID, err)
	}
	seen := map[int64]map[string]bool{}
	add := func(dest int64, remote string) {
		if remote == "" || own[dest] == remote || seen[dest][remote] {
			return
		}
		if seen[dest] == nil {
			seen[dest] = map[string]bool{}
		}
		seen[dest][remote] = true
		recs.Merged[dest] = append(recs.Merged[dest], remote)
	}
	// Losers still mapped (merged before their remote ids were retired on merge).
	var mapped []struct {
		DestinationID int64
		RemoteID      string
	}
	if err := db.Raw(`SELECT destination_id, remote_id FROM sync_state WHERE contact_id IN ? AND contact_id <> ? AND remote_id <> ''
		ORDER BY destination_id, remote_id`, tree, contactID).Scan(&mapped).Error; err != nil {
		return CRMRecords{}, fmt.Errorf("models: remote ids merged into %s: %w", contactID, err)
	}
	for _, m := range mapped {
		add(m.DestinationID, m.RemoteID)
	}
	// The merge history: every crm_merge whose survivor is in the tree names the loser's record and the
	// survivor's record at the time (an intermediate contact's own, since merged away too).
	var payloads []json.RawMessage
	if err := db.Raw(`SELECT payload FROM outbox WHERE kind = ? AND action = ? AND contact_id IN ? ORDER BY id`,
		OutboxSideEffect, ActionCRMMerge, tree).Scan(&payloads).Error; err != nil {
		return CRMRecords{}, fmt.Errorf("models: merge history of %s: %w", contactID, err)
	}
	for _, raw := range payloads {
		var p CRMMergePayload
		if json.Unmarshal(raw, &p) != nil {
			continue
		}
		for _, k := range slices.Sorted(maps.Keys(p.Remotes)) {
			dest, err := strconv.ParseInt(k, 10, 64)
			if err != nil {
				continue
			}
			add(dest, p.Remotes[k].Loser)
			add(dest, p.Remotes[k].Survivor)
		}
	}
	// Records another contact (outside the tree) is mapped to now are not this person's to delete.
	for dest, list := range recs.Merged {
		var taken []string
		if err := db.Raw(`SELECT remote_id FROM sync_state WHERE destination_id = ? AND remote_id IN ? AND contact_id NOT IN ?`,
			dest, list, tree).Scan(&taken).Error; err != nil {
			return CRMRecords{}, fmt.Errorf("models: records of %s in use: %w", contactID, err)
		}
		list = slices.DeleteFunc(list, func(r string) bool { return slices.Contains(taken, r) })
		if len(list) == 0 {
			delete(recs.Merged, dest)
		} else {
			recs.Merged[dest] = list
		}
	}
	return recs, nil
}

// Generations splits the records into sets with at most one record per destination, own first: the shape
// of a crm_delete payload (remote_ids) and of EraseSandboxRecords' input.
func (r CRMRecords) Generations() []map[int64]string {
	out := []map[int64]string{r.Own}
	for dest, list := range r.Merged {
		for i, remote := range list {
			for len(out) <= i+1 {
				out = append(out, map[int64]string{})
			}
			out[i+1][dest] = remote
		}
	}
	return out
}

// QueueCRMDelete queues the crm_delete side effects of an erase (after ContactErase, in its transaction):
// "erase:<id>" names the contact's own records, "erase:<id>:merged:<n>" the records of contacts merged
// into it. Payloads hold record ids only, no personal data. It returns how many merged records it named.
func (s *Store) QueueCRMDelete(ctx context.Context, c Contact, recs CRMRecords) (int, error) {
	merged := 0
	for i, gen := range recs.Generations() {
		stable := "erase:" + c.ID
		if i > 0 {
			stable += ":merged:" + strconv.Itoa(i)
			merged += len(gen)
		}
		body, err := json.Marshal(map[string]any{"contact_id": c.ID, "remote_ids": gen})
		if err != nil {
			return 0, fmt.Errorf("models: crm_delete payload: %w", err)
		}
		cid := c.ID
		if _, err := s.OutboxAdd(ctx, OutboxRow{WorkspaceID: c.WorkspaceID, ContactID: &cid, Kind: OutboxSideEffect,
			StableID: stable, Action: ActionCRMDelete, Payload: body}); err != nil {
			return 0, err
		}
	}
	return merged, nil
}

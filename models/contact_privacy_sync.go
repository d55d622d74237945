package models

import (
	"context"
	"fmt"
)

// ContactRemoteIDs maps destination id to the contact's id in that CRM.
func (s *Store) ContactRemoteIDs(ctx context.Context, contactID string) (map[int64]string, error) {
	rows := []struct {
		DestinationID int64
		RemoteID      string
	}{}
	if err := s.db.WithContext(ctx).Raw(`SELECT destination_id, remote_id FROM sync_state WHERE contact_id = ? AND remote_id <> ''`, contactID).Scan(&rows).Error; err != nil {
		return nil, fmt.Errorf("models: remote ids of %s: %w", contactID, err)
	}
	out := make(map[int64]string, len(rows))
	for _, r := range rows {
		out[r.DestinationID] = r.RemoteID
	}
	return out, nil
}

// EraseSyncState is an erase hook for the CRM sync's tables: what leadgate
// last wrote, conflicts and drift findings hold the contact's values.
func EraseSyncState(ctx context.Context, st *Store, c Contact) error {
	db := st.db.WithContext(ctx)
	for _, q := range []string{
		`UPDATE sync_state SET written = '{}', in_doubt = NULL WHERE contact_id = ?`,
		`DELETE FROM sync_conflicts WHERE contact_id = ?`,
		`DELETE FROM sync_drift WHERE contact_id = ?`,
		`DELETE FROM sync_queue WHERE contact_id = ?`,
	} {
		if err := db.Exec(q, c.ID).Error; err != nil {
			return fmt.Errorf("models: erase sync state of %s: %w", c.ID, err)
		}
	}
	return nil
}

// EraseSandboxRecords deletes the contact from built-in sandbox CRMs: for
// the sandbox, leadgate is the CRM, so a delete request is carried out at once.
func EraseSandboxRecords(ctx context.Context, st *Store, remoteIDs map[int64]string) error {
	db := st.db.WithContext(ctx)
	for dest, remote := range remoteIDs {
		err := db.Exec(`DELETE FROM sandbox_contacts WHERE destination_id = ? AND id::text = ?
			AND EXISTS (SELECT 1 FROM destinations d WHERE d.id = ? AND d.kind = 'sandbox')`, dest, remote, dest).Error
		if err != nil {
			return fmt.Errorf("models: erase sandbox record: %w", err)
		}
		if err := db.Exec(`UPDATE sandbox_actions SET params = '{}' WHERE destination_id = ? AND contact_id IN (SELECT contact_id FROM sync_state WHERE destination_id = ? AND remote_id = ?)`, dest, dest, remote).Error; err != nil {
			return fmt.Errorf("models: erase sandbox actions: %w", err)
		}
	}
	return nil
}

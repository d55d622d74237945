package models

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
)

// ErrNotCRMDeadLetter means a dead letter does not belong to the CRM sync.
var ErrNotCRMDeadLetter = errors.New("not a CRM sync dead letter")

// SyncReplayDeadLetter closes an open CRM dead letter (transient or invalid_mapping) and queues the
// contact's CURRENT desired state for its destination: the stale payload is never sent. A replay that fails
// again opens a new dead letter. The change is audited in the same transaction.
func (s *Store) SyncReplayDeadLetter(ctx context.Context, workspaceID, id int64, actor string) (SyncDeadLetterPayload, error) {
	var p SyncDeadLetterPayload
	err := s.Tx(ctx, func(tx *Store) error {
		dl, err := tx.DeadLetterLock(ctx, workspaceID, id)
		if err != nil {
			return err
		}
		if p, err = tx.SyncReplayLocked(ctx, dl, actor); err != nil {
			return err
		}
		return tx.AuditRecord(ctx, Audit{WorkspaceID: workspaceID, Actor: actor, Action: "dead_letter.replay", SubjectType: "dead_letter",
			SubjectID: strconv.FormatInt(id, 10), Before: map[string]any{"status": dl.Status, "kind": dl.Kind, "reason": dl.Reason},
			After: map[string]any{"status": DeadLetterReplayed, "mode": "resend_current_state", "destination_id": p.DestinationID}})
	})
	return p, err
}

// SyncReplayLocked closes a locked, open CRM dead letter and queues the contact's current state;
// ErrNotCRMDeadLetter when it is not one. The caller audits.
func (s *Store) SyncReplayLocked(ctx context.Context, dl DeadLetter, actor string) (SyncDeadLetterPayload, error) {
	var p SyncDeadLetterPayload
	if dl.Kind != "transient" && dl.Kind != "invalid_mapping" || dl.OutboxID == nil && dl.ContactID == nil {
		return p, ErrNotCRMDeadLetter
	}
	if err := json.Unmarshal(dl.Payload, &p); err != nil || p.DestinationID == 0 || p.ContactID == "" {
		return p, ErrNotCRMDeadLetter
	}
	if err := s.DeadLetterResolve(ctx, dl.ID, DeadLetterReplayed, actor, "resend current state"); err != nil {
		return p, err
	}
	if err := s.db.WithContext(ctx).Exec(`UPDATE sync_queue SET dead_letter_id = NULL WHERE dead_letter_id = ?`, dl.ID).Error; err != nil {
		return p, fmt.Errorf("models: replay: unlink: %w", err)
	}
	return p, s.SyncRequeue(ctx, p.DestinationID, p.ContactID)
}

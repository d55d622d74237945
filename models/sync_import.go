package models

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"
)

// SyncImport is one run of a CRM's initial import.
type SyncImport struct {
	ID            int64      `json:"id"`
	DestinationID int64      `json:"destination_id"`
	Status        string     `json:"status"`
	Seen          int        `json:"seen"`
	Created       int        `json:"created"`
	Linked        int        `json:"linked"`
	Error         string     `json:"error,omitempty"`
	StartedBy     string     `json:"started_by"`
	StartedAt     time.Time  `json:"started_at"`
	FinishedAt    *time.Time `json:"finished_at"`
}

// TableName maps SyncImport to sync_imports.
func (SyncImport) TableName() string { return "sync_imports" }

// SyncImportStart records a new import run.
func (s *Store) SyncImportStart(ctx context.Context, destinationID int64, by string) (SyncImport, error) {
	im := SyncImport{DestinationID: destinationID, Status: "running", StartedBy: by}
	if err := s.db.WithContext(ctx).Select("DestinationID", "Status", "StartedBy").Create(&im).Error; err != nil {
		return im, fmt.Errorf("models: start import: %w", err)
	}
	return im, nil
}

// SyncImportFinish stores an import run's outcome.
func (s *Store) SyncImportFinish(ctx context.Context, im SyncImport) error {
	err := s.db.WithContext(ctx).Exec(`UPDATE sync_imports SET status = ?, seen = ?, created = ?, linked = ?, error = ?, finished_at = now() WHERE id = ?`,
		im.Status, im.Seen, im.Created, im.Linked, syncTruncate(im.Error), im.ID).Error
	if err != nil {
		return fmt.Errorf("models: finish import %d: %w", im.ID, err)
	}
	return nil
}

// SyncImportGet returns one import run of a destination.
func (s *Store) SyncImportGet(ctx context.Context, destinationID, id int64) (SyncImport, error) {
	var im SyncImport
	err := s.db.WithContext(ctx).Where("destination_id = ? AND id = ?", destinationID, id).Take(&im).Error
	return im, syncNotFound(err, "import")
}

// ImportedContact is one CRM contact as read by an import: identity (already normalized), its stage as a
// leadgate stage name ("" when unmapped) and what the CRM holds per remote field (the written baseline).
type ImportedContact struct {
	RemoteID                          string
	Email, Phone, FirstName, LastName string
	Company                           string
	Stage                             string
	Tags                              []string
	Remote                            map[string]string
	CreatedAt                         time.Time
}

// Import outcomes.
const (
	ImportCreated = "created" // a new leadgate contact at the CRM's stage
	ImportLinked  = "linked"  // an existing leadgate contact now knows its remote id
	ImportSkipped = "skipped" // no identity, or already linked to another remote record
)

// SyncImportContact brings one CRM contact into leadgate: a contact found by email (then phone) is linked
// to its remote record and handed, locked, to onLinked (which may move it forward to the CRM's stage);
// otherwise a contact is created at the CRM's stage with stage history, so that later events can never
// move it backwards from where the CRM has it. Nothing is written to the outbox for a created contact: the
// CRM already holds its state.
func (s *Store) SyncImportContact(ctx context.Context, workspaceID, destinationID int64, ic ImportedContact, actor string,
	onLinked func(tx *Store, c *Contact) error) (string, error) {
	if ic.Email == "" && ic.Phone == "" {
		return ImportSkipped, nil
	}
	outcome := ImportSkipped
	err := s.Tx(ctx, func(tx *Store) error {
		c, err := tx.ContactFindByEmail(ctx, workspaceID, ic.Email)
		if errors.Is(err, ErrNotFound) && ic.Phone != "" {
			c, err = tx.ContactFindByPhone(ctx, workspaceID, ic.Phone)
		}
		if err != nil && !errors.Is(err, ErrNotFound) {
			return err
		}
		if err == nil {
			outcome = ImportLinked
			if c, err = tx.ContactLockNoWait(ctx, c.ID); err != nil {
				return err
			}
			if onLinked != nil {
				if err := onLinked(tx, &c); err != nil {
					return err
				}
			}
			// Version 0: leadgate changes not yet delivered still flow to the CRM.
			return tx.importState(ctx, destinationID, c.ID, 0, ic)
		}
		now := time.Now().UTC()
		first := ic.CreatedAt
		if first.IsZero() || first.After(now) {
			first = now
		}
		c = Contact{ID: uuid.NewString(), WorkspaceID: workspaceID, Email: optText(ic.Email), Phone: optText(ic.Phone),
			FirstName: optText(ic.FirstName), LastName: optText(ic.LastName), Company: optText(ic.Company), Stage: ic.Stage,
			Fields: map[string]string{}, FirstTouch: map[string]string{"source": "import", "channel": "crm_import"}, Tags: ic.Tags,
			ScoreBreakdown: json.RawMessage("[]"), FirstSeenAt: first, LastActivityAt: first, Version: 1}
		if c.Tags == nil {
			c.Tags = []string{}
		}
		if ic.Stage != "" {
			c.StageEnteredAt = &now
		}
		if err := tx.ContactCreate(ctx, &c); err != nil {
			return err
		}
		if ic.Stage != "" {
			if err := tx.db.WithContext(ctx).Exec(`INSERT INTO stage_history (workspace_id, contact_id, from_stage, to_stage, actor, reason, occurred_at)
				VALUES (?, ?, '', ?, ?, ?, ?)`, workspaceID, c.ID, ic.Stage, actor, "imported from CRM record "+ic.RemoteID, now).Error; err != nil {
				return fmt.Errorf("models: import stage history: %w", err)
			}
		}
		outcome = ImportCreated
		return tx.importState(ctx, destinationID, c.ID, c.Version, ic)
	})
	if errors.Is(err, ErrConflict) || errors.Is(err, ErrBusy) {
		return ImportSkipped, nil // a concurrent apply holds or created the contact: the next import links it
	}
	if err != nil {
		return "", fmt.Errorf("models: import contact %s: %w", ic.RemoteID, err)
	}
	return outcome, nil
}

// importState links a contact to its remote record unless it is linked already; the remote values become
// the written baseline, so a later leadgate change is not mistaken for a human edit.
func (s *Store) importState(ctx context.Context, destinationID int64, contactID string, version int64, ic ImportedContact) error {
	remote, err := json.Marshal(ic.Remote)
	if err != nil {
		return err
	}
	err = s.db.WithContext(ctx).Exec(`INSERT INTO sync_state (destination_id, contact_id, remote_id, written, last_version, synced_at, imported)
		VALUES (?, ?, ?, ?, ?, now(), true) ON CONFLICT (destination_id, contact_id) DO NOTHING`,
		destinationID, contactID, ic.RemoteID, remote, version).Error
	if err != nil {
		return fmt.Errorf("models: import link: %w", err)
	}
	return nil
}

func optText(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

package actions

import (
	"context"
	"errors"
	"fmt"

	"github.com/google/uuid"

	"github.com/leadgate/leadgate/models"
)

// Contacts carries out the privacy actions on one workspace's contacts.
type Contacts struct {
	Store *models.Store
	// EraseHooks erase a contact from tables owned by other packages (CRM sync state, the sandbox);
	// the sync state's own hook always runs first.
	EraseHooks []func(ctx context.Context, st *models.Store, c models.Contact) error
}

// EraseContact names the contact to erase and whether its CRM records go too.
type EraseContact struct {
	ContactID string
	// CRMDelete also deletes the contact's records in the CRMs it reached: the built-in sandbox at once,
	// real CRMs through delete requests queued for the side-effect relay.
	CRMDelete bool
}

// ErasedContact is the outcome of an erase.
type ErasedContact struct {
	ContactID string
	// AlreadyErased: the contact had been erased before, so nothing was done or audited again.
	AlreadyErased bool
	// CRMDelete: this erase deleted the CRM records too.
	CRMDelete bool
	// MergedRecords counts the CRM delete requests queued (CRMDelete only).
	MergedRecords int
}

// Erase removes a contact's personal data everywhere in leadgate, in one transaction with its audit
// entry. Erasing an erased contact succeeds without doing anything, so a retried request is harmless.
func (a Contacts) Erase(ctx context.Context, workspaceID int64, actor string, in EraseContact) (ErasedContact, error) {
	out := ErasedContact{ContactID: in.ContactID}
	if _, err := uuid.Parse(in.ContactID); err != nil {
		return out, NotFound("id", "unknown contact")
	}
	err := a.Store.Tx(ctx, func(tx *models.Store) error {
		c, err := tx.ContactGet(ctx, workspaceID, in.ContactID)
		if errors.Is(err, models.ErrNotFound) {
			return NotFound("id", "unknown contact")
		}
		if err != nil {
			return fmt.Errorf("read contact: %w", err)
		}
		// The stored id, spelled canonically whatever spelling of the UUID was asked for.
		out.ContactID = c.ID
		if c.ErasedAt != nil {
			out.AlreadyErased = true
			return nil
		}
		// Its own records and those of contacts merged into it, read before the erase wipes the merge
		// history's payloads.
		recs, err := tx.ContactCRMRecords(ctx, c.ID)
		if err != nil {
			return fmt.Errorf("read CRM records: %w", err)
		}
		if in.CRMDelete {
			// The built-in sandbox is leadgate's own table: deleted now.
			for _, gen := range recs.Generations() {
				if err := models.EraseSandboxRecords(ctx, tx, gen); err != nil {
					return fmt.Errorf("erase sandbox records: %w", err)
				}
			}
		}
		hooks := append([]func(context.Context, *models.Store, models.Contact) error{models.EraseSyncState}, a.EraseHooks...)
		if err := tx.ContactErase(ctx, c, hooks...); err != nil {
			return fmt.Errorf("erase: %w", err)
		}
		after := map[string]any{"crm_delete": in.CRMDelete}
		if in.CRMDelete {
			// Real CRMs get delete requests naming their record ids only (no personal data).
			if out.MergedRecords, err = tx.QueueCRMDelete(ctx, c, recs); err != nil {
				return fmt.Errorf("queue CRM deletes: %w", err)
			}
			after["merged_records"] = out.MergedRecords
		}
		if err := tx.AuditRecord(ctx, models.Audit{WorkspaceID: c.WorkspaceID, Actor: actor, Action: "contact.erase",
			SubjectType: "contact_privacy", SubjectID: c.ID, After: after}); err != nil {
			return fmt.Errorf("audit: %w", err)
		}
		return nil
	})
	if err != nil {
		var missing *NotFoundError
		if errors.As(err, &missing) {
			return out, err
		}
		return out, fmt.Errorf("actions: erase contact %s: %w", in.ContactID, err)
	}
	out.CRMDelete = in.CRMDelete && !out.AlreadyErased
	return out, nil
}

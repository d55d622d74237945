package handlers

import (
	"context"
	"encoding/json"
	"net/http"

	"github.com/leadgate/leadgate/models"
)

// ExportContact answers everything held about one contact (audited).
func (a *API) ExportContact(w http.ResponseWriter, r *http.Request) {
	c, ok := a.loadContact(w, r)
	if !ok {
		return
	}
	var x models.ContactExport
	err := a.Store.Tx(r.Context(), func(tx *models.Store) error {
		var err error
		if x, err = tx.ContactExportAll(r.Context(), c); err != nil {
			return err
		}
		return tx.AuditRecord(r.Context(), models.Audit{WorkspaceID: c.WorkspaceID, Actor: actor(r), Action: "contact.export",
			SubjectType: "contact_privacy", SubjectID: c.ID, After: map[string]int{"events": len(x.Events), "observations": len(x.Observations)}})
	})
	if err != nil {
		serverError(a.Log, w, r, err)
		return
	}
	w.Header().Set("Content-Disposition", `attachment; filename="contact-`+c.ID+`.json"`)
	writeJSON(w, http.StatusOK, x)
}

// EraseContact removes a contact's personal data everywhere in leadgate:
// POST .../contacts/{id}/erase {"crm_delete": true} also asks the CRM to delete it.
func (a *API) EraseContact(w http.ResponseWriter, r *http.Request) {
	c, ok := a.loadContact(w, r)
	if !ok {
		return
	}
	var in struct {
		CRMDelete bool `json:"crm_delete"`
	}
	if r.ContentLength != 0 && !decodeJSON(w, r, &in) {
		return
	}
	if c.ErasedAt != nil {
		writeJSON(w, http.StatusOK, map[string]any{"status": "erased", "contact_id": c.ID})
		return
	}
	err := a.Store.Tx(r.Context(), func(tx *models.Store) error {
		remote, err := tx.ContactRemoteIDs(r.Context(), c.ID)
		if err != nil {
			return err
		}
		if in.CRMDelete {
			// The built-in sandbox is leadgate's own table: deleted now.
			if err := models.EraseSandboxRecords(r.Context(), tx, remote); err != nil {
				return err
			}
		}
		hooks := append([]func(context.Context, *models.Store, models.Contact) error{models.EraseSyncState}, a.EraseHooks...)
		if err := tx.ContactErase(r.Context(), c, hooks...); err != nil {
			return err
		}
		if in.CRMDelete {
			// Real CRMs get a delete request naming their record ids only
			// (no personal data), delivered by the side-effect relay.
			body, _ := json.Marshal(map[string]any{"contact_id": c.ID, "remote_ids": remote})
			cid := c.ID
			if _, err := tx.OutboxAdd(r.Context(), models.OutboxRow{WorkspaceID: c.WorkspaceID, ContactID: &cid, Kind: models.OutboxSideEffect,
				StableID: "erase:" + c.ID, Action: "crm_delete", Payload: body}); err != nil {
				return err
			}
		}
		return tx.AuditRecord(r.Context(), models.Audit{WorkspaceID: c.WorkspaceID, Actor: actor(r), Action: "contact.erase",
			SubjectType: "contact_privacy", SubjectID: c.ID, After: map[string]any{"crm_delete": in.CRMDelete}})
	})
	if err != nil {
		serverError(a.Log, w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"status": "erased", "contact_id": c.ID, "crm_delete": in.CRMDelete})
}

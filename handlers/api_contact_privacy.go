package handlers

import (
	"context"
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
	merged := 0
	err := a.Store.Tx(r.Context(), func(tx *models.Store) error {
		// Its own records and those of contacts merged into it (read before the erase wipes the merge
		// history's payloads).
		recs, err := tx.ContactCRMRecords(r.Context(), c.ID)
		if err != nil {
			return err
		}
		if in.CRMDelete {
			// The built-in sandbox is leadgate's own table: deleted now.
			for _, gen := range recs.Generations() {
				if err := models.EraseSandboxRecords(r.Context(), tx, gen); err != nil {
					return err
				}
			}
		}
		hooks := append([]func(context.Context, *models.Store, models.Contact) error{models.EraseSyncState}, a.EraseHooks...)
		if err := tx.ContactErase(r.Context(), c, hooks...); err != nil {
			return err
		}
		after := map[string]any{"crm_delete": in.CRMDelete}
		if in.CRMDelete {
			// Real CRMs get delete requests naming their record ids only
			// (no personal data), delivered by the side-effect relay.
			if merged, err = tx.QueueCRMDelete(r.Context(), c, recs); err != nil {
				return err
			}
			after["merged_records"] = merged
		}
		return tx.AuditRecord(r.Context(), models.Audit{WorkspaceID: c.WorkspaceID, Actor: actor(r), Action: "contact.erase",
			SubjectType: "contact_privacy", SubjectID: c.ID, After: after})
	})
	if err != nil {
		serverError(a.Log, w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"status": "erased", "contact_id": c.ID, "crm_delete": in.CRMDelete})
}

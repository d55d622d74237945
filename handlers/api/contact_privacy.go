package api

import (
	"net/http"

	"github.com/leadgate/leadgate/actions"
	"github.com/leadgate/leadgate/handlers"
)

// ExportContact answers everything held about one contact (audited).
func (a *API) ExportContact(w http.ResponseWriter, r *http.Request) {
	c, ok := a.loadContact(w, r)
	if !ok {
		return
	}
	x, err := a.contactActions().Export(r.Context(), handlers.Actor(r), c)
	if err != nil {
		handlers.ServerError(a.Log, w, r, err)
		return
	}
	w.Header().Set("Content-Disposition", `attachment; filename="contact-`+c.ID+`.json"`)
	handlers.WriteJSON(w, http.StatusOK, x)
}

// contactActions is the privacy actions over the API's store and erase hooks.
func (a *API) contactActions() actions.Contacts {
	return actions.Contacts{Store: a.Store, EraseHooks: a.EraseHooks}
}

// EraseContact removes a contact's personal data everywhere in leadgate:
// POST .../contacts/{id}/erase {"crm_delete": true} also asks the CRM to delete it.
func (a *API) EraseContact(w http.ResponseWriter, r *http.Request) {
	// An unknown contact is answered before the body is read, whatever the body holds.
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
	out, err := a.contactActions().Erase(r.Context(), c.WorkspaceID, handlers.Actor(r), actions.EraseContact{ContactID: c.ID, CRMDelete: in.CRMDelete})
	if err != nil {
		writeActionError(a.Log, w, r, err)
		return
	}
	if out.AlreadyErased {
		handlers.WriteJSON(w, http.StatusOK, map[string]any{"status": "erased", "contact_id": out.ContactID})
		return
	}
	handlers.WriteJSON(w, http.StatusOK, map[string]any{"status": "erased", "contact_id": out.ContactID, "crm_delete": out.CRMDelete})
}

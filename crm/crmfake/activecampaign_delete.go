package crmfake

import (
	"net/http"
	"slices"
)

// DELETE /api/3/contacts/{id}: 200 {} when deleted, 404 "No Result found for Subscriber with id N" otherwise.
// The contact's deals stay (ActiveCampaign keeps them without a contact).
func (f *ActiveCampaign) deleteContact(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	defer f.mu.Unlock()
	id := r.PathValue("id")
	if f.contacts[id] == nil {
		acNotFound(w, "Subscriber", id)
		return
	}
	delete(f.contacts, id)
	f.order = slices.DeleteFunc(f.order, func(x string) bool { return x == id })
	f.deleted = append(f.deleted, id)
	writeJSON(w, http.StatusOK, map[string]any{})
}

// Deleted returns the ids of the contacts deleted through the API, in order.
func (f *ActiveCampaign) Deleted() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.deleted)
}

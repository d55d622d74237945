package crmfake

import (
	"net/http"
	"slices"
)

// DELETE /contacts/{id}: 200 {"succeded":true}; an unknown id is a 404.
func (f *GoHighLevel) deleteContact(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	defer f.mu.Unlock()
	id := r.PathValue("id")
	if f.contacts[id] == nil {
		writeJSON(w, http.StatusNotFound, map[string]any{"statusCode": 404, "message": "Contact not found"})
		return
	}
	delete(f.contacts, id)
	f.order = slices.DeleteFunc(f.order, func(x string) bool { return x == id })
	f.deleted = append(f.deleted, id)
	writeJSON(w, http.StatusOK, map[string]any{"succeded": true})
}

// Deleted returns the ids of the contacts deleted through the API, in order.
func (f *GoHighLevel) Deleted() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.deleted)
}

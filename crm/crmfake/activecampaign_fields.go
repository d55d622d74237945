package crmfake

import (
	"fmt"
	"net/http"
	"slices"
	"strings"
)

// GET /api/3/fields (reference/retrieve-fields-1), paged.
func (f *ActiveCampaign) listFields(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	var out []map[string]any
	for _, x := range f.acOpts.Fields {
		out = append(out, map[string]any{"id": x.ID, "title": x.Title, "perstag": x.Perstag, "type": cmpOr(x.Type, "text")})
	}
	f.mu.Unlock()
	acList(w, r, "fields", out)
}

// POST /api/3/fields {"field":{"type","title","perstag"}}: title and type are required.
func (f *ActiveCampaign) createField(w http.ResponseWriter, r *http.Request) {
	var in struct {
		Field ACField `json:"field"`
	}
	if !decode(w, r, &in, acBad) {
		return
	}
	switch {
	case strings.TrimSpace(in.Field.Title) == "":
		acError(w, http.StatusUnprocessableEntity, "Missing attribute", "field_missing", "/data/attributes/title")
		return
	case strings.TrimSpace(in.Field.Type) == "":
		acError(w, http.StatusUnprocessableEntity, "Missing attribute", "field_missing", "/data/attributes/type")
		return
	}
	f.mu.Lock()
	in.Field.ID = f.newID()
	f.acOpts.Fields = append(f.acOpts.Fields, in.Field)
	f.mu.Unlock()
	writeJSON(w, http.StatusCreated, map[string]any{"field": map[string]any{"id": in.Field.ID, "title": in.Field.Title,
		"perstag": in.Field.Perstag, "type": in.Field.Type}})
}

// AddField adds a custom field to the account as a person would in the UI, and returns its id.
func (f *ActiveCampaign) AddField(field ACField) string {
	f.mu.Lock()
	defer f.mu.Unlock()
	field.ID = f.newID()
	f.acOpts.Fields = append(f.acOpts.Fields, field)
	return field.ID
}

// Fields returns the account's custom fields.
func (f *ActiveCampaign) Fields() []ACField {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.acOpts.Fields)
}

// RemoveField deletes a custom field as a person would in the UI: later writes naming it are refused
// (422 "Field N does not exist"), as the real API refuses them.
func (f *ActiveCampaign) RemoveField(id string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.acOpts.Fields = slices.DeleteFunc(f.acOpts.Fields, func(x ACField) bool { return x.ID == id })
}

// POST /api/3/notes {"note":{"note","relid","reltype":"Subscriber"}}.
func (f *ActiveCampaign) addNote(w http.ResponseWriter, r *http.Request) {
	var in struct {
		Note struct {
			Note    string `json:"note"`
			RelID   any    `json:"relid"`
			RelType string `json:"reltype"`
		} `json:"note"`
	}
	if !decode(w, r, &in, acBad) {
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	c := f.contacts[anyString(in.Note.RelID)]
	if c == nil || in.Note.RelType != "Subscriber" {
		acNotFound(w, "Subscriber", anyString(in.Note.RelID))
		return
	}
	c.Notes = append(c.Notes, in.Note.Note)
	writeJSON(w, http.StatusCreated, map[string]any{"note": map[string]any{"id": f.newID(), "note": in.Note.Note, "relid": c.ID, "reltype": "Subscriber"}})
}

// GET /api/3/contacts/{id}/notes (reference/retrieve-a-contacts-notes), paged.
func (f *ActiveCampaign) listContactNotes(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	id := r.PathValue("id")
	c := f.contacts[id]
	if c == nil {
		f.mu.Unlock()
		acNotFound(w, "Subscriber", id)
		return
	}
	out := []map[string]any{}
	for i, n := range c.Notes {
		out = append(out, map[string]any{"id": fmt.Sprintf("%s-%d", id, i+1), "note": n, "relid": id, "reltype": "Subscriber"})
	}
	f.mu.Unlock()
	acList(w, r, "notes", out)
}

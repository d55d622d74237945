package crmfake

import (
	"encoding/json"
	"net/http"
)

// The HubSpot endpoints native side effects use: v3 list memberships and task objects, v4 associations.
func (f *HubSpot) routeActions(mux *http.ServeMux) {
	mux.HandleFunc("PUT /crm/v3/lists/{listId}/memberships/add", f.addListMembers)
	mux.HandleFunc("POST /crm/v3/objects/tasks", f.createTask)
	mux.HandleFunc("POST /crm/v3/objects/tasks/batch/read", f.readTasks)
	mux.HandleFunc("GET /crm/v4/objects/contacts/{id}/associations/tasks", f.contactTaskAssociations)
}

// PUT /crm/v3/lists/{listId}/memberships/add [recordIds]: 200 {"recordIdsAdded":[...],
// "recordsIdsAlreadyInList":[...],"recordIdsMissing":[...]}.
func (f *HubSpot) addListMembers(w http.ResponseWriter, r *http.Request) {
	var ids []string
	if !decode(w, r, &ids, hsBad) {
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	added, already, missing := []string{}, []string{}, []string{}
	for _, id := range ids {
		switch {
		case f.contacts[id] == nil:
			missing = append(missing, id)
		case f.acts.addToList(r.PathValue("listId"), id):
			added = append(added, id)
		default:
			already = append(already, id)
		}
	}
	writeJSON(w, http.StatusOK, map[string]any{"recordIdsAdded": added, "recordsIdsAlreadyInList": already, "recordIdsMissing": missing})
}

// POST /crm/v3/objects/tasks {"properties":{hs_task_subject, hs_task_body, hs_timestamp, ...},
// "associations":[{"to":{"id"},"types":[{"associationCategory","associationTypeId"}]}]}: 201 with the task.
// hs_timestamp is required (400 VALIDATION_ERROR); an association to an unknown contact is 400 too.
func (f *HubSpot) createTask(w http.ResponseWriter, r *http.Request) {
	var in struct {
		Properties   map[string]string `json:"properties"`
		Associations []struct {
			To struct {
				ID json.Number `json:"id"`
			} `json:"to"`
			Types []struct {
				Category string `json:"associationCategory"`
				TypeID   int    `json:"associationTypeId"`
			} `json:"types"`
		} `json:"associations"`
	}
	if !decode(w, r, &in, hsBad) {
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if in.Properties["hs_timestamp"] == "" {
		hsBad(w, "Property values were not valid: hs_timestamp is required")
		return
	}
	contact := ""
	for _, a := range in.Associations {
		for _, t := range a.Types {
			if t.Category == "HUBSPOT_DEFINED" && t.TypeID == 204 {
				contact = a.To.ID.String()
			}
		}
	}
	if contact != "" && f.contacts[contact] == nil {
		hsBad(w, "One or more associations are invalid: contact "+contact+" does not exist")
		return
	}
	t := Task{ID: f.newID(), ContactID: contact, Title: in.Properties["hs_task_subject"], Body: in.Properties["hs_task_body"],
		Due: in.Properties["hs_timestamp"]}
	f.acts.tasks = append(f.acts.tasks, t)
	writeJSON(w, http.StatusCreated, hsTaskJSON(t))
}

// POST /crm/v3/objects/tasks/batch/read {"properties":[...],"inputs":[{"id"}]}: 200 {"status","results"}.
func (f *HubSpot) readTasks(w http.ResponseWriter, r *http.Request) {
	var in struct {
		Inputs []struct {
			ID string `json:"id"`
		} `json:"inputs"`
	}
	if !decode(w, r, &in, hsBad) {
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	out := []any{}
	for _, want := range in.Inputs {
		for _, t := range f.acts.tasks {
			if t.ID == want.ID {
				out = append(out, hsTaskJSON(t))
			}
		}
	}
	writeJSON(w, http.StatusOK, map[string]any{"status": "COMPLETE", "results": out})
}

// GET /crm/v4/objects/contacts/{id}/associations/tasks: {"results":[{"toObjectId","associationTypes"}]}.
func (f *HubSpot) contactTaskAssociations(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	defer f.mu.Unlock()
	id := r.PathValue("id")
	if f.contacts[id] == nil {
		hsError(w, http.StatusNotFound, "OBJECT_NOT_FOUND", "resource not found")
		return
	}
	out := []any{}
	for _, t := range f.acts.contactTasks(id) {
		out = append(out, map[string]any{"toObjectId": json.Number(t.ID), "associationTypes": []any{
			map[string]any{"category": "HUBSPOT_DEFINED", "typeId": 203, "label": nil}}})
	}
	writeJSON(w, http.StatusOK, map[string]any{"results": out})
}

func hsTaskJSON(t Task) map[string]any {
	return map[string]any{"id": t.ID, "properties": map[string]any{"hs_task_subject": t.Title, "hs_task_body": t.Body,
		"hs_timestamp": t.Due, "hs_object_id": t.ID}, "archived": false}
}

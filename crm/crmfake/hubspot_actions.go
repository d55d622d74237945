package crmfake

import (
	"encoding/json"
	"net/http"
	"strconv"
	"time"
)

// The HubSpot endpoints native side effects use: v3 list memberships (PublicApiSpecs/CRM/Lists/.../v3/
// lists.json), task objects (PublicApiSpecs/CRM/Tasks/.../v3/tasks.json) and v4 associations
// (PublicApiSpecs/CRM/Associations/.../v4/associations.json) in HubSpot-public-api-spec-collection.
func (f *HubSpot) routeActions(mux *http.ServeMux) {
	mux.HandleFunc("PUT /crm/v3/lists/{listId}/memberships/add", f.addListMembers)
	mux.HandleFunc("POST /crm/v3/objects/tasks", f.createTask)
	mux.HandleFunc("POST /crm/v3/objects/tasks/batch/read", f.readTasks)
	mux.HandleFunc("GET /crm/v4/objects/contacts/{id}/associations/tasks", f.contactTaskAssociations)
}

// PUT /crm/v3/lists/{listId}/memberships/add [recordIds]: 200 MembershipsUpdateResponse
// {"recordIdsAdded":[...],"recordIdsMissing":[...]} (the reference's example; its schema spells the first
// "recordsIdsAdded"). Records that do not exist, or are members already, are ignored: the first come back
// in recordIdsMissing, the second in neither list.
func (f *HubSpot) addListMembers(w http.ResponseWriter, r *http.Request) {
	var ids []string
	if !decode(w, r, &ids, hsBad) {
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	added, missing := []string{}, []string{}
	for _, id := range ids {
		switch {
		case f.contacts[id] == nil:
			missing = append(missing, id)
		case f.acts.addToList(r.PathValue("listId"), id):
			added = append(added, id)
		}
	}
	writeJSON(w, http.StatusOK, map[string]any{"recordIdsAdded": added, "recordIdsMissing": missing})
}

// POST /crm/v3/objects/tasks SimplePublicObjectInputForCreate {"properties":{hs_task_subject,
// hs_task_body, hs_timestamp, ...},"associations":[{"to":{"id"},"types":[{"associationCategory",
// "associationTypeId"}]}]}: 200 CreatedResponseSimplePublicObject {"createdResourceId","entity","location"}.
// properties and associations are required and hs_timestamp is the required due date (400
// VALIDATION_ERROR); an association to an unknown contact is 400 too.
func (f *HubSpot) createTask(w http.ResponseWriter, r *http.Request) {
	var in struct {
		Properties   map[string]string `json:"properties"`
		Associations *[]struct {
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
	switch {
	case in.Properties == nil || in.Associations == nil:
		hsBad(w, "Invalid input JSON: properties and associations are required")
		return
	case in.Properties["hs_timestamp"] == "":
		hsBad(w, "Property values were not valid: hs_timestamp is required")
		return
	}
	contact := ""
	for _, a := range *in.Associations {
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
	writeJSON(w, http.StatusOK, map[string]any{"createdResourceId": t.ID, "entity": hsTaskJSON(t),
		"location": "https://api.hubapi.com/crm/v3/objects/tasks/" + t.ID})
}

// POST /crm/v3/objects/tasks/batch/read BatchReadInputSimplePublicObjectId {"inputs":[{"id"}],
// "properties":[...],"propertiesWithHistory":[...]} (all three required, 400 otherwise): 200
// {"status","results","startedAt","completedAt"}.
func (f *HubSpot) readTasks(w http.ResponseWriter, r *http.Request) {
	var in struct {
		Inputs *[]struct {
			ID string `json:"id"`
		} `json:"inputs"`
		Properties            *[]string `json:"properties"`
		PropertiesWithHistory *[]string `json:"propertiesWithHistory"`
	}
	if !decode(w, r, &in, hsBad) {
		return
	}
	if in.Inputs == nil || in.Properties == nil || in.PropertiesWithHistory == nil {
		hsBad(w, "Invalid input JSON: inputs, properties and propertiesWithHistory are required")
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	out := []any{}
	for _, want := range *in.Inputs {
		for _, t := range f.acts.tasks {
			if t.ID == want.ID {
				out = append(out, hsTaskJSON(t))
			}
		}
	}
	now := time.Now().UTC().Format(time.RFC3339)
	writeJSON(w, http.StatusOK, map[string]any{"status": "COMPLETE", "results": out, "startedAt": now, "completedAt": now})
}

// GET /crm/v4/objects/contacts/{id}/associations/tasks?limit&after: CollectionResponseMultiAssociatedObject
// WithLabelForwardPaging {"results":[{"toObjectId":"…","associationTypes":[...]}],"paging":{"next":
// {"after"}}}, at most limit (default 500) per page; toObjectId is a string.
func (f *HubSpot) contactTaskAssociations(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	defer f.mu.Unlock()
	id := r.PathValue("id")
	if f.contacts[id] == nil {
		hsError(w, http.StatusNotFound, "OBJECT_NOT_FOUND", "resource not found")
		return
	}
	limit, err := strconv.Atoi(r.URL.Query().Get("limit"))
	if err != nil || limit <= 0 || limit > 500 {
		limit = 500
	}
	after, _ := strconv.Atoi(r.URL.Query().Get("after"))
	tasks := f.acts.contactTasks(id)
	out := []any{}
	for i := after; i < len(tasks) && i < after+limit; i++ {
		out = append(out, map[string]any{"toObjectId": tasks[i].ID, "associationTypes": []any{
			map[string]any{"category": "HUBSPOT_DEFINED", "typeId": 203, "label": nil}}})
	}
	resp := map[string]any{"results": out}
	if next := after + limit; next < len(tasks) {
		resp["paging"] = map[string]any{"next": map[string]any{"after": strconv.Itoa(next)}}
	}
	writeJSON(w, http.StatusOK, resp)
}

func hsTaskJSON(t Task) map[string]any {
	now := time.Now().UTC().Format(time.RFC3339)
	return map[string]any{"id": t.ID, "properties": map[string]any{"hs_task_subject": t.Title, "hs_task_body": t.Body,
		"hs_timestamp": t.Due, "hs_object_id": t.ID}, "archived": false, "createdAt": now, "updatedAt": now}
}

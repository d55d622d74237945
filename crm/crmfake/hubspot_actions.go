package crmfake

import (
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

// PUT /crm/v3/lists/{listId}/memberships/add [recordIds] (a JSON array of strings): 200
// MembershipsUpdateResponse, whose schema requires recordsIdsAdded (so spelled), recordIdsRemoved and
// recordIdsMissing; the reference's example spells the first recordIdsAdded, so both are sent. Records that do
// not exist come back in recordIdsMissing; members already in the list are in neither list.
func (f *HubSpot) addListMembers(w http.ResponseWriter, r *http.Request) {
	var ids []string
	if !hsDecode(w, r, &ids) {
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
	writeJSON(w, http.StatusOK, map[string]any{"recordsIdsAdded": added, "recordIdsAdded": added, "recordIdsRemoved": []string{},
		"recordIdsMissing": missing})
}

// POST /crm/v3/objects/tasks SimplePublicObjectInputForCreate {"properties":{hs_task_subject, hs_task_body,
// hs_timestamp, ...},"associations":[{"to":{"id"},"types":[{"associationCategory","associationTypeId"}]}]}
// (PublicApiSpecs/CRM/Tasks/Rollouts/424/v3/tasks.json): 201 SimplePublicObject. properties and
// associations are required and hs_timestamp is the required due date (400 VALIDATION_ERROR); an
// association to an unknown contact is 400 too.
func (f *HubSpot) createTask(w http.ResponseWriter, r *http.Request) {
	var in hsCreateInput
	if !hsDecode(w, r, &in) || !hsRequired(w, "SimplePublicObjectInputForCreate", missing("associations", in.Associations == nil, "properties", in.Properties == nil)...) {
		return
	}
	if msg := checkAssociations(*in.Associations); msg != "" {
		hsBad(w, msg)
		return
	}
	props := *in.Properties
	if props["hs_timestamp"] == "" {
		hsInvalidProperties(w, []hsPropErr{{Message: "hs_timestamp is required", Error: "REQUIRED", Name: "hs_timestamp"}})
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	contact := ""
	for _, a := range *in.Associations {
		for _, t := range *a.Types {
			if *t.Category == "HUBSPOT_DEFINED" && *t.TypeID == 204 {
				contact = *a.To.ID
			}
		}
	}
	if contact != "" && f.contacts[contact] == nil {
		hsBad(w, "One or more associations are invalid: contact "+contact+" does not exist")
		return
	}
	t := Task{ID: f.newID(), ContactID: contact, Title: props["hs_task_subject"], Body: props["hs_task_body"], Due: props["hs_timestamp"]}
	f.acts.tasks = append(f.acts.tasks, t)
	writeJSON(w, http.StatusCreated, hsTaskJSON(t))
}

// POST /crm/v3/objects/tasks/batch/read BatchReadInputSimplePublicObjectId {"inputs":[{"id"}],
// "properties":[...],"propertiesWithHistory":[...]} (all three required, 400 otherwise): 200
// {"status","results","startedAt","completedAt"}.
func (f *HubSpot) readTasks(w http.ResponseWriter, r *http.Request) {
	in := decodeRead(w, r)
	if in == nil {
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []map[string]any
	for _, want := range *in.Inputs {
		for _, t := range f.acts.tasks {
			if t.ID == *want.ID {
				out = append(out, hsTaskJSON(t))
			}
		}
	}
	hsBatchAnswer(w, out, nil)
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

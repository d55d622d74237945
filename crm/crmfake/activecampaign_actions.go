package crmfake

import (
	"net/http"
	"strconv"
)

// The ActiveCampaign v3 endpoints native side effects use.
func (f *ActiveCampaign) routeActions(mux *http.ServeMux) {
	mux.HandleFunc("POST /api/3/contactLists", f.addContactList)
	mux.HandleFunc("GET /api/3/contacts/{id}/contactAutomations", f.listContactAutomations)
	mux.HandleFunc("POST /api/3/contactAutomations", f.addContactAutomation)
	mux.HandleFunc("GET /api/3/dealTasks", f.listDealTasks)
	mux.HandleFunc("POST /api/3/dealTasks", f.createDealTask)
}

// POST /api/3/contactLists {"contactList":{"list","contact","status"}}: 200 {"contactList":{...}} (a repeat
// updates the same subscription); an unknown contact is 404, a missing attribute 422.
func (f *ActiveCampaign) addContactList(w http.ResponseWriter, r *http.Request) {
	var in struct {
		ContactList struct {
			List    any `json:"list"`
			Contact any `json:"contact"`
			Status  any `json:"status"`
		} `json:"contactList"`
	}
	if !decode(w, r, &in, acBad) {
		return
	}
	list, contact := anyString(in.ContactList.List), anyString(in.ContactList.Contact)
	f.mu.Lock()
	defer f.mu.Unlock()
	switch {
	case list == "":
		acError(w, http.StatusUnprocessableEntity, "Missing attribute", "field_missing", "/data/attributes/list")
	case contact == "" || f.contacts[contact] == nil:
		acNotFound(w, "Subscriber", contact)
	default:
		if anyString(in.ContactList.Status) == "1" {
			f.acts.addToList(list, contact)
		}
		writeJSON(w, http.StatusOK, map[string]any{"contactList": map[string]any{"list": list, "contact": contact,
			"status": anyString(in.ContactList.Status), "id": f.newID()}})
	}
}

// GET /api/3/contacts/{id}/contactAutomations: {"contactAutomations":[{"contact","automation",...}]}.
func (f *ActiveCampaign) listContactAutomations(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	defer f.mu.Unlock()
	id := r.PathValue("id")
	if f.contacts[id] == nil {
		acNotFound(w, "Subscriber", id)
		return
	}
	out := []any{}
	for _, a := range f.acts.enrolments[id] {
		out = append(out, map[string]any{"contact": id, "automation": a, "completed": 0})
	}
	writeJSON(w, http.StatusOK, map[string]any{"contactAutomations": out, "meta": map[string]any{"total": strconv.Itoa(len(out))}})
}

// POST /api/3/contactAutomations {"contactAutomation":{"contact","automation"}}: 201 with the enrolment.
// Like an automation that may run more than once, a repeat is accepted (EnrolmentCalls counts it).
func (f *ActiveCampaign) addContactAutomation(w http.ResponseWriter, r *http.Request) {
	var in struct {
		ContactAutomation struct {
			Contact    any `json:"contact"`
			Automation any `json:"automation"`
		} `json:"contactAutomation"`
	}
	if !decode(w, r, &in, acBad) {
		return
	}
	contact, automation := anyString(in.ContactAutomation.Contact), anyString(in.ContactAutomation.Automation)
	f.mu.Lock()
	defer f.mu.Unlock()
	switch {
	case automation == "":
		acError(w, http.StatusUnprocessableEntity, "Missing attribute", "field_missing", "/data/attributes/automation")
	case f.contacts[contact] == nil:
		acNotFound(w, "Subscriber", contact)
	default:
		f.acts.enrol(contact, automation)
		writeJSON(w, http.StatusCreated, map[string]any{"contactAutomation": map[string]any{"contact": contact,
			"automation": automation, "id": f.newID()}})
	}
}

// GET /api/3/dealTasks?filters[reltype]=Subscriber&filters[relid]=N: {"dealTasks":[...]}.
func (f *ActiveCampaign) listDealTasks(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	f.mu.Lock()
	defer f.mu.Unlock()
	out := []any{}
	for _, t := range f.acts.tasks {
		if (q.Get("filters[relid]") == "" || q.Get("filters[relid]") == t.ContactID) &&
			(q.Get("filters[reltype]") == "" || q.Get("filters[reltype]") == "Subscriber") {
			out = append(out, map[string]any{"id": t.ID, "relid": t.ContactID, "reltype": "Subscriber", "title": t.Title,
				"note": t.Body, "duedate": t.Due, "status": "0"})
		}
	}
	writeJSON(w, http.StatusOK, map[string]any{"dealTasks": out, "meta": map[string]any{"total": strconv.Itoa(len(out))}})
}

// POST /api/3/dealTasks {"dealTask":{"title","ownerType":"contact","relid","note","duedate","dealTasktype"}}:
// 201 with the task (relType Subscriber). A missing relid or dealTasktype is 422; an unknown contact 404.
func (f *ActiveCampaign) createDealTask(w http.ResponseWriter, r *http.Request) {
	var in struct {
		DealTask struct {
			Title     string `json:"title"`
			OwnerType string `json:"ownerType"`
			RelID     any    `json:"relid"`
			Note      string `json:"note"`
			DueDate   string `json:"duedate"`
			Type      any    `json:"dealTasktype"`
		} `json:"dealTask"`
	}
	if !decode(w, r, &in, acBad) {
		return
	}
	t := in.DealTask
	relid := anyString(t.RelID)
	f.mu.Lock()
	defer f.mu.Unlock()
	switch {
	case relid == "":
		acError(w, http.StatusUnprocessableEntity, "Missing attribute", "field_missing", "/data/attributes/relid")
	case anyString(t.Type) == "":
		acError(w, http.StatusUnprocessableEntity, "Missing attribute", "field_missing", "/data/attributes/dealTasktype")
	case t.OwnerType != "contact":
		acError(w, http.StatusUnprocessableEntity, "Invalid attribute", "field_invalid", "/data/attributes/ownerType")
	case f.contacts[relid] == nil:
		acNotFound(w, "Subscriber", relid)
	default:
		task := Task{ID: f.newID(), ContactID: relid, Title: t.Title, Body: t.Note, Due: t.DueDate}
		f.acts.tasks = append(f.acts.tasks, task)
		writeJSON(w, http.StatusCreated, map[string]any{"dealTask": map[string]any{"id": task.ID, "relid": relid,
			"reltype": "Subscriber", "title": t.Title, "note": t.Note, "duedate": t.DueDate}})
	}
}

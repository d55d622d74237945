package crmfake

import (
	"net/http"
	"strconv"
)

// The ActiveCampaign v3 endpoints native side effects use, as the v3 reference describes them
// (api-evangelist/activecampaign openapi/activecampaign-contacts-api-openapi.yml: contactLists,
// contactAutomations, contactTags; activecampaign-deals-api-openapi.yml: dealTasks). POST /contactTags is
// in activecampaign_handlers.go (the contact sync uses it too).
func (f *ActiveCampaign) routeActions(mux *http.ServeMux) {
	mux.HandleFunc("GET /api/3/contacts/{id}/contactTags", f.listContactTags)
	mux.HandleFunc("GET /api/3/contacts/{id}/contactLists", f.listContactLists)
	mux.HandleFunc("POST /api/3/contactLists", f.addContactList)
	mux.HandleFunc("GET /api/3/contacts/{id}/contactAutomations", f.listContactAutomations)
	mux.HandleFunc("POST /api/3/contactAutomations", f.addContactAutomation)
	mux.HandleFunc("GET /api/3/dealTasks", f.listDealTasks)
	mux.HandleFunc("POST /api/3/dealTasks", f.createDealTask)
}

// SetListStatus sets a contact's subscription status on a list as if it changed in ActiveCampaign ("1"
// active, "2" unsubscribed, "3" bounced, "0" unconfirmed).
func (f *ActiveCampaign) SetListStatus(list, contact, status string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.acts.setListStatus(list, contact, status)
}

// GET /api/3/contacts/{id}/contactTags: {"contactTags":[{"contact","tag","id"}],"meta":{"total"}} (tag = the
// tag's id), paged like every v3 collection (default 20, at most 100). A tag name the fake has no id for
// (set directly on the contact) is left out.
func (f *ActiveCampaign) listContactTags(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	defer f.mu.Unlock()
	id := r.PathValue("id")
	c := f.contacts[id]
	if c == nil {
		acNotFound(w, "Subscriber", id)
		return
	}
	out := []any{}
	for _, name := range c.Tags {
		if tid := f.tagIDOf(name); tid != "" {
			out = append(out, map[string]any{"contact": id, "tag": tid, "id": id + "-" + tid})
		}
	}
	acList(w, r, "contactTags", out)
}

// GET /api/3/contacts/{id}/contactLists: {"contactLists":[{"contact","list","status",...}]} with status a
// string ("1" active, "2" unsubscribed, ...), one entry per list the contact has a status on, paged.
func (f *ActiveCampaign) listContactLists(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	defer f.mu.Unlock()
	id := r.PathValue("id")
	if f.contacts[id] == nil {
		acNotFound(w, "Subscriber", id)
		return
	}
	out := []any{}
	for _, list := range sortedKeys(f.acts.listStatus) {
		if st, ok := f.acts.listStatus[list][id]; ok {
			out = append(out, map[string]any{"contact": id, "list": list, "status": st, "sourceid": "0", "id": list + "-" + id})
		}
	}
	acList(w, r, "contactLists", out)
}

// POST /api/3/contactLists {"contactList":{"list","contact","status"}} (all three required; status "1"
// subscribes, "2" unsubscribes): 200 {"contacts":[...],"contactList":{...,"status":N}}. Like the real one it
// sets whatever status it is sent, so status 1 re-subscribes a contact who unsubscribed (the reference's
// warning); an unknown contact is 404, a missing attribute 422.
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
	list, contact, status := anyString(in.ContactList.List), anyString(in.ContactList.Contact), anyString(in.ContactList.Status)
	f.mu.Lock()
	defer f.mu.Unlock()
	switch {
	case list == "":
		acError(w, http.StatusUnprocessableEntity, "Missing attribute", "field_missing", "/data/attributes/list")
	case status == "":
		acError(w, http.StatusUnprocessableEntity, "Missing attribute", "field_missing", "/data/attributes/status")
	case contact == "" || f.contacts[contact] == nil:
		acNotFound(w, "Subscriber", contact)
	default:
		f.acts.setListStatus(list, contact, status)
		st, _ := strconv.Atoi(status)
		writeJSON(w, http.StatusOK, map[string]any{"contacts": []any{f.contactJSON(f.contacts[contact])},
			"contactList": map[string]any{"list": list, "contact": contact, "status": st, "sourceid": "0", "id": list + "-" + contact}})
	}
}

// GET /api/3/contacts/{id}/contactAutomations: {"contactAutomations":[{"contact","automation","seriesid",
// "status","completed",...}],"meta":{"total"}}.
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
		out = append(out, map[string]any{"contact": id, "automation": a, "seriesid": a, "status": "1", "completed": 0})
	}
	acList(w, r, "contactAutomations", out)
}

// POST /api/3/contactAutomations {"contactAutomation":{"contact","automation"}} (both required): 201
// {"contacts":[...],"contactAutomation":{...}}. Like an automation that may run more than once, a repeat is
// accepted (EnrolmentCalls counts it).
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
		writeJSON(w, http.StatusCreated, map[string]any{"contacts": []any{f.contactJSON(f.contacts[contact])},
			"contactAutomation": map[string]any{"contact": contact, "automation": automation, "seriesid": automation,
				"status": 1, "completed": 0, "id": f.newID()}})
	}
}

// GET /api/3/dealTasks?filters[reltype]=Subscriber|Deal&filters[relid]=N&limit&offset: {"dealTasks":[...],
// "meta":{"total"}}, paged like every v3 list (default 20, at most 100).
func (f *ActiveCampaign) listDealTasks(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	f.mu.Lock()
	defer f.mu.Unlock()
	var match []any
	for _, t := range f.acts.tasks {
		rel := cmpOr(t.RelType, "Subscriber")
		if (q.Get("filters[relid]") == "" || q.Get("filters[relid]") == t.ContactID) &&
			(q.Get("filters[reltype]") == "" || q.Get("filters[reltype]") == rel) {
			owner := map[string]any{"type": "contact", "id": t.ContactID}
			if rel == "Deal" {
				owner["type"] = "deal"
			}
			match = append(match, map[string]any{"id": t.ID, "relid": t.ContactID, "reltype": rel, "title": t.Title,
				"note": t.Body, "duedate": t.Due, "status": 0, "dealTasktype": "1", "owner": owner})
		}
	}
	acList(w, r, "dealTasks", match)
}

// POST /api/3/dealTasks {"dealTask":{"title","ownerType","relid","status","note","duedate","edate",
// "dealTasktype"}}: 201 {"dealTask":{...,"reltype","owner":{"type","id"}}}. relid, duedate and
// dealTasktype are required (422); ownerType is "contact" or "deal" and defaults to "deal"; an unknown
// contact or deal is 404.
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
	relid, owner := anyString(t.RelID), cmpOr(t.OwnerType, "deal")
	f.mu.Lock()
	defer f.mu.Unlock()
	switch {
	case relid == "":
		acError(w, http.StatusUnprocessableEntity, "Missing attribute", "field_missing", "/data/attributes/relid")
	case t.DueDate == "":
		acError(w, http.StatusUnprocessableEntity, "Missing attribute", "field_missing", "/data/attributes/duedate")
	case anyString(t.Type) == "":
		acError(w, http.StatusUnprocessableEntity, "Missing attribute", "field_missing", "/data/attributes/dealTasktype")
	case owner != "contact" && owner != "deal":
		acError(w, http.StatusUnprocessableEntity, "Invalid attribute", "field_invalid", "/data/attributes/ownerType")
	case owner == "contact" && f.contacts[relid] == nil:
		acNotFound(w, "Subscriber", relid)
	case owner == "deal" && f.deals[relid] == nil:
		acNotFound(w, "Deal", relid)
	default:
		rel := "Subscriber"
		if owner == "deal" {
			rel = "Deal"
		}
		task := Task{ID: f.newID(), ContactID: relid, Title: t.Title, Body: t.Note, Due: t.DueDate, RelType: rel}
		f.acts.tasks = append(f.acts.tasks, task)
		writeJSON(w, http.StatusCreated, map[string]any{"dealTask": map[string]any{"id": task.ID, "relid": relid,
			"reltype": rel, "title": t.Title, "note": t.Note, "duedate": t.DueDate, "status": 0,
			"dealTasktype": anyString(t.Type), "owner": map[string]any{"type": owner, "id": relid}}})
	}
}

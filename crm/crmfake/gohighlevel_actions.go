package crmfake

import (
	"net/http"
)

// The GoHighLevel v2 contact endpoints native side effects use (tags are in gohighlevel_handlers.go).
func (f *GoHighLevel) routeActions(mux *http.ServeMux) {
	mux.HandleFunc("POST /contacts/{id}/workflow/{workflowId}", f.addToWorkflow)
	mux.HandleFunc("GET /contacts/{id}/tasks", f.listTasks)
	mux.HandleFunc("POST /contacts/{id}/tasks", f.createTask)
}

// POST /contacts/{id}/workflow/{workflowId} {"eventStartTime"?}: 200 {"succeded":true}; an unknown contact
// is 404. A contact already in the workflow stays in it once.
func (f *GoHighLevel) addToWorkflow(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	defer f.mu.Unlock()
	id := r.PathValue("id")
	if f.contacts[id] == nil {
		writeJSON(w, http.StatusNotFound, map[string]any{"statusCode": 404, "message": "Contact not found"})
		return
	}
	f.acts.enrol(id, r.PathValue("workflowId"))
	writeJSON(w, http.StatusOK, map[string]any{"succeded": true})
}

// GET /contacts/{id}/tasks: {"tasks":[{"id","title","body","dueDate","completed","contactId"}]}.
func (f *GoHighLevel) listTasks(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	defer f.mu.Unlock()
	id := r.PathValue("id")
	if f.contacts[id] == nil {
		writeJSON(w, http.StatusNotFound, map[string]any{"statusCode": 404, "message": "Contact not found"})
		return
	}
	out := []any{}
	for _, t := range f.acts.contactTasks(id) {
		out = append(out, ghlTaskJSON(t))
	}
	writeJSON(w, http.StatusOK, map[string]any{"tasks": out})
}

// POST /contacts/{id}/tasks {"title","body","dueDate","completed"}: 201 {"task":{...}}; title and dueDate
// are required (422).
func (f *GoHighLevel) createTask(w http.ResponseWriter, r *http.Request) {
	var in struct {
		Title     string `json:"title"`
		Body      string `json:"body"`
		DueDate   string `json:"dueDate"`
		Completed *bool  `json:"completed"`
	}
	if !decode(w, r, &in, ghlBad) {
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	id := r.PathValue("id")
	switch {
	case in.Title == "" || in.DueDate == "" || in.Completed == nil:
		ghl422(w, "title, dueDate and completed are required")
	case f.contacts[id] == nil:
		writeJSON(w, http.StatusNotFound, map[string]any{"statusCode": 404, "message": "Contact not found"})
	default:
		t := Task{ID: f.newID(), ContactID: id, Title: in.Title, Body: in.Body, Due: in.DueDate}
		f.acts.tasks = append(f.acts.tasks, t)
		writeJSON(w, http.StatusCreated, map[string]any{"task": ghlTaskJSON(t)})
	}
}

func ghlTaskJSON(t Task) map[string]any {
	return map[string]any{"id": t.ID, "title": t.Title, "body": t.Body, "dueDate": t.Due, "completed": false, "contactId": t.ContactID}
}

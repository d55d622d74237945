package crmfake

import (
	"net/http"
	"strconv"
)

// The GoHighLevel v2 contact endpoints native side effects use (GoHighLevel/highlevel-api-docs
// apps/contacts.json). Adding tags, adding a note and reading the contact are in gohighlevel_handlers.go.
func (f *GoHighLevel) routeActions(mux *http.ServeMux) {
	mux.HandleFunc("POST /contacts/{id}/workflow/{workflowId}", f.addToWorkflow)
	mux.HandleFunc("GET /contacts/{id}/notes", f.listNotes)
	mux.HandleFunc("GET /contacts/{id}/tasks", f.listTasks)
	mux.HandleFunc("POST /contacts/{id}/tasks", f.createTask)
}

// POST /contacts/{id}/workflow/{workflowId} CreateWorkflowDto {"eventStartTime"?} (a JSON body is
// required, the field is not; nothing else is declared): 200 {"succeded":true}; an unknown contact is 404.
// The reference does not say that a contact already in the workflow is left alone, so every accepted
// request is an enrolment (Enrolments lists repeats): the adapter must not send a second one.
func (f *GoHighLevel) addToWorkflow(w http.ResponseWriter, r *http.Request) {
	if _, ok := checkBody(w, r, ghlWorkflowDTO); !ok {
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	id := r.PathValue("id")
	if f.contacts[id] == nil {
		ghlNotFound(w, "Contact")
		return
	}
	f.acts.enrolAgain(id, r.PathValue("workflowId"))
	writeJSON(w, http.StatusOK, map[string]any{"succeded": true})
}

// GET /contacts/{id}/notes: {"notes":[{"id","body","userId","dateAdded","contactId"}]}, oldest first. The
// fake keeps no note ids, so they are numbered per contact.
func (f *GoHighLevel) listNotes(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	defer f.mu.Unlock()
	id := r.PathValue("id")
	c := f.contacts[id]
	if c == nil {
		ghlNotFound(w, "Contact")
		return
	}
	out := []any{}
	for i, body := range c.Notes {
		out = append(out, map[string]any{"id": id + "-note-" + strconv.Itoa(i+1), "body": body, "contactId": id})
	}
	writeJSON(w, http.StatusOK, map[string]any{"notes": out})
}

// GET /contacts/{id}/tasks: {"tasks":[{"id","title","body","assignedTo","dueDate","completed","contactId"}]}
// (not paged in the reference).
func (f *GoHighLevel) listTasks(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	defer f.mu.Unlock()
	id := r.PathValue("id")
	if f.contacts[id] == nil {
		ghlNotFound(w, "Contact")
		return
	}
	out := []any{}
	for _, t := range f.acts.contactTasks(id) {
		out = append(out, ghlTaskJSON(t))
	}
	writeJSON(w, http.StatusOK, map[string]any{"tasks": out})
}

// POST /contacts/{id}/tasks CreateTaskParams {"title","body","dueDate","completed","assignedTo"}: 201
// {"task":{...}}; title, dueDate and completed are required (422).
func (f *GoHighLevel) createTask(w http.ResponseWriter, r *http.Request) {
	raw, ok := checkBody(w, r, ghlCreateTaskDTO)
	if !ok {
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	id := r.PathValue("id")
	switch {
	case f.contacts[id] == nil:
		ghlNotFound(w, "Contact")
	default:
		t := Task{ID: f.newID(), ContactID: id, Title: deref(optString(raw, "title")), Body: deref(optString(raw, "body")),
			Due: deref(optString(raw, "dueDate"))}
		f.acts.tasks = append(f.acts.tasks, t)
		writeJSON(w, http.StatusCreated, map[string]any{"task": ghlTaskJSON(t)})
	}
}

func ghlTaskJSON(t Task) map[string]any {
	return map[string]any{"id": t.ID, "title": t.Title, "body": t.Body, "dueDate": t.Due, "completed": false, "contactId": t.ContactID}
}

package crmfake

import (
	"slices"
)

// Task is a task created through a fake (AC dealTask, HubSpot task associated with a contact, GoHighLevel
// contact task). ContactID is the contact it belongs to; an AC task on a deal has RelType "Deal" and the
// deal's id in ContactID.
type Task struct {
	ID, ContactID, Title, Body, Due string
	RelType                         string // AC: "Subscriber" (ownerType contact) or "Deal"; "" = a contact's task
}

// actions is what the native side-effect endpoints changed, shared by the three fakes.
type actions struct {
	tasks      []Task
	lists      map[string][]string          // list id -> subscribed contact ids, in the order added
	listStatus map[string]map[string]string // AC: list id -> contact id -> contactList status ("1", "2", ...)
	enrolments map[string][]string          // contact id -> automation (AC) or workflow (GHL) ids
	enrolCalls int                          // enrolment requests accepted, repeats included
}

func (a *actions) addToList(list, contact string) (added bool) {
	if a.lists == nil {
		a.lists = map[string][]string{}
	}
	if slices.Contains(a.lists[list], contact) {
		return false
	}
	a.lists[list] = append(a.lists[list], contact)
	return true
}

// setListStatus records an AC subscription status; only status "1" makes the contact a list member.
func (a *actions) setListStatus(list, contact, status string) {
	if a.listStatus == nil {
		a.listStatus = map[string]map[string]string{}
	}
	if a.listStatus[list] == nil {
		a.listStatus[list] = map[string]string{}
	}
	a.listStatus[list][contact] = status
	if status == "1" {
		a.addToList(list, contact)
		return
	}
	if a.lists != nil {
		a.lists[list] = slices.DeleteFunc(a.lists[list], func(c string) bool { return c == contact })
	}
}

// enrol records an enrolment once per contact and id (AC: a repeat is accepted but the contact is in the
// automation once).
func (a *actions) enrol(contact, id string) {
	if a.enrolments == nil {
		a.enrolments = map[string][]string{}
	}
	a.enrolCalls++
	if !slices.Contains(a.enrolments[contact], id) {
		a.enrolments[contact] = append(a.enrolments[contact], id)
	}
}

// enrolAgain records every enrolment, repeats included (GHL: the reference does not say a repeat is
// ignored, and a workflow that allows re-entry runs again, so the fake assumes the unsafe case).
func (a *actions) enrolAgain(contact, id string) {
	if a.enrolments == nil {
		a.enrolments = map[string][]string{}
	}
	a.enrolCalls++
	a.enrolments[contact] = append(a.enrolments[contact], id)
}

func (a *actions) contactTasks(contact string) []Task {
	var out []Task
	for _, t := range a.tasks {
		if t.ContactID == contact && t.RelType != "Deal" {
			out = append(out, t)
		}
	}
	return out
}

// Tasks returns the tasks created so far, in order.
func (s *server) Tasks() []Task {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.acts.tasks)
}

// SeedTask stores a task on the contact as if someone had created it in the CRM, and returns its id. It is not counted as a request.
func (s *server) SeedTask(contactID, title, body string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	t := Task{ID: s.newID(), ContactID: contactID, Title: title, Body: body, Due: "2030-01-01T00:00:00Z"}
	s.acts.tasks = append(s.acts.tasks, t)
	return t.ID
}

// ListMembers returns the contacts subscribed to a list (AC list, HubSpot static list), in order.
func (s *server) ListMembers(list string) []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.acts.lists[list])
}

// Enrolments returns the automations (AC, once each) or workflows (GHL, every enrolment accepted, repeats
// included) the contact was added to.
func (s *server) Enrolments(contact string) []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.acts.enrolments[contact])
}

// EnrolmentCalls is how many enrolment requests were accepted, repeats included.
func (s *server) EnrolmentCalls() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.acts.enrolCalls
}

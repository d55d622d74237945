package crmfake

import (
	"slices"
)

// Task is a task created through a fake (AC dealTask with relType Subscriber, HubSpot task associated
// with a contact, GoHighLevel contact task).
type Task struct {
	ID, ContactID, Title, Body, Due string
}

// actions is what the native side-effect endpoints changed, shared by the three fakes.
type actions struct {
	tasks      []Task
	lists      map[string][]string // list id -> contact ids, in the order added
	enrolments map[string][]string // contact id -> automation (AC) or workflow (GHL) ids, once each
	enrolCalls int                 // enrolment requests accepted, repeats included
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

func (a *actions) enrol(contact, id string) {
	if a.enrolments == nil {
		a.enrolments = map[string][]string{}
	}
	a.enrolCalls++
	if !slices.Contains(a.enrolments[contact], id) {
		a.enrolments[contact] = append(a.enrolments[contact], id)
	}
}

func (a *actions) contactTasks(contact string) []Task {
	var out []Task
	for _, t := range a.tasks {
		if t.ContactID == contact {
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

// ListMembers returns the contacts added to a list (AC list, HubSpot static list), in order.
func (s *server) ListMembers(list string) []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.acts.lists[list])
}

// Enrolments returns the automations (AC) or workflows (GHL) the contact was added to, once each.
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

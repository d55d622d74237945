package crm

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Native side-effect actions: the action names a stage rule's side_effects entry uses to have the CRM
// itself act (docs/stage-rules.md). Any other action name is for the side-effect webhook only.
const (
	ActionAddTag          = "add_tag"          // params: tag (name)
	ActionAddToList       = "add_to_list"      // params: list (id)
	ActionStartAutomation = "start_automation" // params: automation (id)
	ActionEnrollWorkflow  = "enroll_workflow"  // params: workflow (id)
	ActionCreateTask      = "create_task"      // params: title; optional body, due_in_days (default 1), task_type (AC)
)

// Action is one side effect for a CRM to carry out on a contact record.
type Action struct {
	StableID string // the outbox row's stable id: written into a created task so a repeat can find it
	Name     string
	Params   map[string]string
}

// ActionRunner is implemented by destinations that run side effects natively.
type ActionRunner interface {
	// SupportsAction reports whether the CRM can carry out the named action.
	SupportsAction(name string) bool
	// RunAction carries the action out on the record remoteID, once per Action.StableID: adding a tag, a
	// list membership or an automation enrolment is idempotent (or checked first), and a task is created
	// only when none of the contact's tasks carries the stable id's marker. An action the CRM does not
	// support, or missing params, is an Invalid error (never retried).
	RunAction(ctx context.Context, remoteID string, a Action) error
}

// TaskMarker is the line put into a created task's body (and into the note leadgate leaves after a
// GoHighLevel workflow enrolment); a retry that finds it on one of the contact's tasks (notes) does not
// create a second one.
func TaskMarker(stableID string) string { return "leadgate side effect " + stableID }

// hasMarker reports whether text carries stableID's marker as a whole token: the marker of "s1" must not
// match inside the marker of "s10", so the character after it may not continue an id.
func hasMarker(text, stableID string) bool {
	marker := TaskMarker(stableID)
	for i := strings.Index(text, marker); i >= 0; {
		end := i + len(marker)
		if end == len(text) || !isIDChar(text[end]) {
			return true
		}
		next := strings.Index(text[end:], marker)
		if next < 0 {
			return false
		}
		i = end + next
	}
	return false
}

func isIDChar(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.IndexByte("-_:.", c) >= 0
}

// unsupportedAction is the error for an action the CRM cannot run.
func unsupportedAction(kind, name string, supported ...string) error {
	return &Error{Class: Invalid, Message: fmt.Sprintf("%s cannot run action %q natively (it supports %s); "+
		"configure a side-effect webhook for it or remove the rule", kind, name, strings.Join(supported, ", "))}
}

// param returns a required action parameter, else an Invalid error naming it.
func (a Action) param(kind, key string) (string, error) {
	v := strings.TrimSpace(a.Params[key])
	if v == "" {
		return "", &Error{Class: Invalid, Message: fmt.Sprintf("%s: action %s needs the param %q", kind, a.Name, key)}
	}
	return v, nil
}

// taskBody is the task's description with the marker line appended.
func (a Action) taskBody() string {
	body := strings.TrimSpace(a.Params["body"])
	if body != "" {
		body += "\n\n"
	}
	return body + TaskMarker(a.StableID)
}

// taskDue is when the task is due: due_in_days (default 1) after now.
func (a Action) taskDue(now time.Time) time.Time {
	days := 1
	if n, err := strconv.Atoi(strings.TrimSpace(a.Params["due_in_days"])); err == nil && n >= 0 {
		days = n
	}
	return now.UTC().Add(time.Duration(days) * 24 * time.Hour).Truncate(time.Second)
}

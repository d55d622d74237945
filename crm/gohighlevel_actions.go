package crm

import (
	"context"
	"log/slog"
	"net/http"
	"slices"
	"strings"
	"time"
)

var ghlActions = []string{ActionAddTag, ActionEnrollWorkflow, ActionCreateTask}

// SupportsAction: tags, workflows and tasks (GoHighLevel contacts have no lists or AC-style automations).
func (g *goHighLevel) SupportsAction(name string) bool { return slices.Contains(ghlActions, name) }

// RunAction carries a native side effect out on the contact. Endpoints and bodies follow the v2 contacts
// reference (GoHighLevel/highlevel-api-docs apps/contacts.json); docs/crm-sync.md lists what each checks.
func (g *goHighLevel) RunAction(ctx context.Context, remoteID string, act Action) error {
	path := "/contacts/" + pathID(remoteID)
	switch act.Name {
	case ActionAddTag:
		return g.addTag(ctx, path, act)
	case ActionEnrollWorkflow:
		return g.enrollWorkflow(ctx, path, act)
	case ActionCreateTask:
		return g.createTask(ctx, path, act)
	}
	return unsupportedAction(KindGoHighLevel, act.Name, ghlActions...)
}

// addTag adds the tag with POST /contacts/{id}/tags {"tags":[name]} (201 {"tags"}); upserts would overwrite
// the whole tag set. The reference does not say whether adding a tag the contact has fires the location's
// "tag added" workflow triggers again, so the contact is read first (GET /contacts/{id}, contact.tags) and
// a tag it has already (GoHighLevel compares tags without case) is not sent again.
func (g *goHighLevel) addTag(ctx context.Context, path string, act Action) error {
	tag, err := act.param(KindGoHighLevel, "tag")
	if err != nil {
		return err
	}
	var cur struct {
		Contact struct {
			Tags []string `json:"tags"`
		} `json:"contact"`
	}
	if _, err := g.do(ctx, call{method: http.MethodGet, path: path, out: &cur}, nil); err != nil {
		return err
	}
	if slices.ContainsFunc(cur.Contact.Tags, func(t string) bool { return strings.EqualFold(strings.TrimSpace(t), tag) }) {
		return nil
	}
	_, err = g.do(ctx, call{method: http.MethodPost, path: path + "/tags", in: map[string][]string{"tags": {tag}}}, nil)
	return err
}

// enrollWorkflow adds the contact to the workflow: POST /contacts/{id}/workflow/{workflowId} with
// CreateWorkflowDto {"eventStartTime"} (optional in the reference; leadgate sends now), answered 200
// {"succeded":true}. The reference does not say whether a second POST for a contact already in the
// workflow is ignored or enrols it again (workflows may allow re-entry), and GoHighLevel has no endpoint
// that lists a contact's enrolments. So leadgate keeps its own marker: after a successful enrolment it
// leaves a note (POST /contacts/{id}/notes {"body"}) carrying TaskMarker(stable id), and a run first reads
// the contact's notes (GET /contacts/{id}/notes, {"notes":[{"body"}]}) and enrols only when no note has
// the marker. A retry or replay of a side effect already done therefore sends no second enrolment. The
// one window left is an enrolment whose answer is lost (timeout) before the note is written: the retry
// finds no note and enrols again.
func (g *goHighLevel) enrollWorkflow(ctx context.Context, path string, act Action) error {
	wf, err := act.param(KindGoHighLevel, "workflow")
	if err != nil {
		return err
	}
	var notes struct {
		Notes []struct {
			Body string `json:"body"`
		} `json:"notes"`
	}
	if _, err := g.do(ctx, call{method: http.MethodGet, path: path + "/notes", out: &notes}, nil); err != nil {
		return err
	}
	for _, n := range notes.Notes {
		if hasMarker(n.Body, act.StableID) {
			return nil
		}
	}
	in := map[string]string{"eventStartTime": g.cfg.Now().UTC().Format(time.RFC3339)}
	if _, err := g.do(ctx, call{method: http.MethodPost, path: path + "/workflow/" + pathID(wf), in: in}, nil); err != nil {
		return err
	}
	note := map[string]string{"body": "Enrolled in workflow " + wf + " by leadgate.\n\n" + TaskMarker(act.StableID)}
	if _, err := g.do(ctx, call{method: http.MethodPost, path: path + "/notes", in: note}, nil); err != nil {
		// The enrolment happened; failing the action would only make a retry enrol again. The relay records
		// the destination as done, so the missing note matters only to a later replay.
		slog.WarnContext(ctx, "gohighlevel: workflow enrolment done but its marker note was not written",
			"workflow", wf, "stable_id", act.StableID, "err", err)
	}
	return nil
}

// createTask creates the task (POST /contacts/{id}/tasks, CreateTaskParams: title, dueDate and completed
// required, body optional; 201 {"task"}) unless one of the contact's tasks (GET /contacts/{id}/tasks,
// {"tasks":[{"body"}]}, not paged in the reference) already carries the stable id's marker.
func (g *goHighLevel) createTask(ctx context.Context, path string, act Action) error {
	title, err := act.param(KindGoHighLevel, "title")
	if err != nil {
		return err
	}
	var cur struct {
		Tasks []struct {
			Body string `json:"body"`
		} `json:"tasks"`
	}
	if _, err := g.do(ctx, call{method: http.MethodGet, path: path + "/tasks", out: &cur}, nil); err != nil {
		return err
	}
	for _, t := range cur.Tasks {
		if hasMarker(t.Body, act.StableID) {
			return nil
		}
	}
	in := map[string]any{"title": title, "body": act.taskBody(), "dueDate": act.taskDue(g.cfg.Now()).Format(time.RFC3339),
		"completed": false}
	_, err = g.do(ctx, call{method: http.MethodPost, path: path + "/tasks", in: in}, nil)
	return err
}

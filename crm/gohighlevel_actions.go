package crm

import (
	"context"
	"net/http"
	"slices"
	"strings"
	"time"
)

var ghlActions = []string{ActionAddTag, ActionEnrollWorkflow, ActionCreateTask}

// SupportsAction: tags, workflows and tasks (GoHighLevel contacts have no lists or AC-style automations).
func (g *goHighLevel) SupportsAction(name string) bool { return slices.Contains(ghlActions, name) }

// RunAction carries a native side effect out on the contact.
func (g *goHighLevel) RunAction(ctx context.Context, remoteID string, act Action) error {
	path := "/contacts/" + pathID(remoteID)
	switch act.Name {
	case ActionAddTag:
		tag, err := act.param(KindGoHighLevel, "tag")
		if err != nil {
			return err
		}
		// The add-tags endpoint is additive and idempotent (upserts would overwrite the tag set).
		_, err = g.api.do(ctx, call{method: http.MethodPost, path: path + "/tags", in: map[string][]string{"tags": {tag}}}, nil)
		return err
	case ActionEnrollWorkflow:
		wf, err := act.param(KindGoHighLevel, "workflow")
		if err != nil {
			return err
		}
		// GoHighLevel keeps a contact in a workflow once: adding it again while it is enrolled is a no-op.
		in := map[string]string{"eventStartTime": g.cfg.Now().UTC().Format(time.RFC3339)}
		_, err = g.api.do(ctx, call{method: http.MethodPost, path: path + "/workflow/" + pathID(wf), in: in}, nil)
		return err
	case ActionCreateTask:
		return g.createTask(ctx, path, act)
	}
	return unsupportedAction(KindGoHighLevel, act.Name, ghlActions...)
}

// createTask creates the task unless one of the contact's tasks already carries the stable id's marker.
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
	if _, err := g.api.do(ctx, call{method: http.MethodGet, path: path + "/tasks", out: &cur}, nil); err != nil {
		return err
	}
	marker := TaskMarker(act.StableID)
	for _, t := range cur.Tasks {
		if strings.Contains(t.Body, marker) {
			return nil
		}
	}
	in := map[string]any{"title": title, "body": act.taskBody(), "dueDate": act.taskDue(g.cfg.Now()).Format(time.RFC3339),
		"completed": false}
	_, err = g.api.do(ctx, call{method: http.MethodPost, path: path + "/tasks", in: in}, nil)
	return err
}

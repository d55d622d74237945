package crm

import (
	"context"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"
)

var acActions = []string{ActionAddTag, ActionAddToList, ActionStartAutomation, ActionCreateTask}

// SupportsAction: tags, list subscriptions, automations and tasks.
func (a *activeCampaign) SupportsAction(name string) bool { return slices.Contains(acActions, name) }

// RunAction carries a native side effect out on the contact.
func (a *activeCampaign) RunAction(ctx context.Context, remoteID string, act Action) error {
	switch act.Name {
	case ActionAddTag:
		tag, err := act.param(KindActiveCampaign, "tag")
		if err != nil {
			return err
		}
		tagID, err := a.tagID(ctx, tag, nil)
		if err != nil {
			return err
		}
		// Attaching a tag the contact has already is harmless: the contact keeps one tag.
		in := map[string]any{"contactTag": map[string]any{"contact": remoteID, "tag": tagID}}
		_, err = a.api.do(ctx, call{method: http.MethodPost, path: "/contactTags", in: in}, nil)
		return err
	case ActionAddToList:
		list, err := act.param(KindActiveCampaign, "list")
		if err != nil {
			return err
		}
		// status 1 = subscribed; posting it again for a subscribed contact changes nothing.
		in := map[string]any{"contactList": map[string]any{"list": list, "contact": remoteID, "status": 1}}
		_, err = a.api.do(ctx, call{method: http.MethodPost, path: "/contactLists", in: in}, nil)
		return err
	case ActionStartAutomation:
		return a.startAutomation(ctx, remoteID, act)
	case ActionCreateTask:
		return a.createTask(ctx, remoteID, act)
	}
	return unsupportedAction(KindActiveCampaign, act.Name, acActions...)
}

// startAutomation adds the contact to the automation unless it is in it already (an automation set to run
// more than once would start again on a repeat).
func (a *activeCampaign) startAutomation(ctx context.Context, remoteID string, act Action) error {
	automation, err := act.param(KindActiveCampaign, "automation")
	if err != nil {
		return err
	}
	var cur struct {
		ContactAutomations []struct {
			Automation flexString `json:"automation"`
		} `json:"contactAutomations"`
	}
	if _, err := a.api.do(ctx, call{method: http.MethodGet, path: "/contacts/" + pathID(remoteID) + "/contactAutomations",
		query: url.Values{"limit": {"100"}}, out: &cur}, nil); err != nil {
		return err
	}
	for _, ca := range cur.ContactAutomations {
		if string(ca.Automation) == automation {
			return nil
		}
	}
	in := map[string]any{"contactAutomation": map[string]any{"contact": remoteID, "automation": automation}}
	_, err = a.api.do(ctx, call{method: http.MethodPost, path: "/contactAutomations", in: in}, nil)
	return err
}

// createTask creates a contact task (POST /dealTasks, relType Subscriber) unless one of the contact's tasks
// already carries the stable id's marker: a retry after a lost answer finds the first one.
func (a *activeCampaign) createTask(ctx context.Context, remoteID string, act Action) error {
	title, err := act.param(KindActiveCampaign, "title")
	if err != nil {
		return err
	}
	var cur struct {
		DealTasks []struct {
			Note string `json:"note"`
		} `json:"dealTasks"`
	}
	q := url.Values{"filters[reltype]": {"Subscriber"}, "filters[relid]": {remoteID}, "limit": {"100"}}
	if _, err := a.api.do(ctx, call{method: http.MethodGet, path: "/dealTasks", query: q, out: &cur}, nil); err != nil {
		return err
	}
	marker := TaskMarker(act.StableID)
	for _, t := range cur.DealTasks {
		if strings.Contains(t.Note, marker) {
			return nil
		}
	}
	due := act.taskDue(a.cfg.Now())
	taskType := strings.TrimSpace(act.Params["task_type"])
	if taskType == "" {
		taskType = "1"
	}
	in := map[string]any{"dealTask": map[string]any{"title": title, "ownerType": "contact", "relid": remoteID, "status": 0,
		"note": act.taskBody(), "duedate": due.Format(time.RFC3339), "edate": due.Add(15 * time.Minute).Format(time.RFC3339),
		"dealTasktype": taskType}}
	_, err = a.api.do(ctx, call{method: http.MethodPost, path: "/dealTasks", in: in}, nil)
	return err
}

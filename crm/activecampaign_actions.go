package crm

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"
)

var acActions = []string{ActionAddTag, ActionAddToList, ActionStartAutomation, ActionCreateTask}

// SupportsAction: tags, list subscriptions, automations and tasks.
func (a *activeCampaign) SupportsAction(name string) bool { return slices.Contains(acActions, name) }

// RunAction carries a native side effect out on the contact. Endpoints and bodies follow the v3 reference
// (api-evangelist/activecampaign openapi/activecampaign-contacts-api-openapi.yml and
// activecampaign-deals-api-openapi.yml); docs/crm-sync.md lists what each read and write checks.
func (a *activeCampaign) RunAction(ctx context.Context, remoteID string, act Action) error {
	switch act.Name {
	case ActionAddTag:
		return a.addTag(ctx, remoteID, act)
	case ActionAddToList:
		return a.addToList(ctx, remoteID, act)
	case ActionStartAutomation:
		return a.startAutomation(ctx, remoteID, act)
	case ActionCreateTask:
		return a.createTask(ctx, remoteID, act)
	}
	return unsupportedAction(KindActiveCampaign, act.Name, acActions...)
}

// addTag attaches the tag (POST /contactTags {"contactTag":{"contact","tag"}}) unless the contact has it
// already. The reference does not say what a second POST of the same pair does (a duplicate answer, or a
// second "tag added" automation trigger), so the contact's tags are read first (GET
// /contacts/{id}/contactTags, {"contactTags":[{"tag":id}]}, every page).
func (a *activeCampaign) addTag(ctx context.Context, remoteID string, act Action) error {
	tag, err := act.param(KindActiveCampaign, "tag")
	if err != nil {
		return err
	}
	tagID, err := a.tagID(ctx, tag, nil)
	if err != nil {
		return err
	}
	has, err := a.hasTag(ctx, remoteID, tagID, nil)
	if err != nil || has {
		return err
	}
	in := map[string]any{"contactTag": map[string]any{"contact": remoteID, "tag": tagID}}
	_, err = a.api.do(ctx, call{method: http.MethodPost, path: "/contactTags", in: in}, nil)
	return err
}

// addToList subscribes the contact (POST /contactLists {"contactList":{"list","contact","status":1}}) when
// it has no subscription to the list yet. The reference warns that setting status 1 on an unsubscribed
// contact re-subscribes someone who unsubscribed themselves, so the contact's list memberships are read
// first (GET /contacts/{id}/contactLists, every page): already active (status 1) is done; any other status
// (unsubscribed, bounced, unconfirmed) is left alone and reported as an Invalid error, which dead-letters
// the side effect with the reason for a person to decide.
func (a *activeCampaign) addToList(ctx context.Context, remoteID string, act Action) error {
	list, err := act.param(KindActiveCampaign, "list")
	if err != nil {
		return err
	}
	type contactList struct {
		List   flexString `json:"list"`
		Status flexString `json:"status"`
	}
	cur, err := acListAll[contactList](ctx, a.api, "/contacts/"+pathID(remoteID)+"/contactLists", nil, "contactLists", nil)
	if err != nil {
		return err
	}
	for _, cl := range cur {
		if string(cl.List) != list {
			continue
		}
		if string(cl.Status) == "1" {
			return nil
		}
		return &Error{Class: Invalid, Message: fmt.Sprintf("activecampaign: contact %s has status %s on list %s "+
			"(2 = unsubscribed, 3 = bounced, 0 = unconfirmed); leadgate does not override it with a subscription",
			remoteID, cl.Status, list)}
	}
	in := map[string]any{"contactList": map[string]any{"list": list, "contact": remoteID, "status": 1}}
	_, err = a.api.do(ctx, call{method: http.MethodPost, path: "/contactLists", in: in}, nil)
	return err
}

// startAutomation adds the contact to the automation (POST /contactAutomations
// {"contactAutomation":{"contact","automation"}}) unless GET /contacts/{id}/contactAutomations lists it
// there already, running or completed: an automation set to run more than once would start again on a
// repeat, and a list entry carries no stable id to tell leadgate's own enrolment from an earlier one.
func (a *activeCampaign) startAutomation(ctx context.Context, remoteID string, act Action) error {
	automation, err := act.param(KindActiveCampaign, "automation")
	if err != nil {
		return err
	}
	type contactAutomation struct {
		Automation flexString `json:"automation"`
	}
	cur, err := acListAll[contactAutomation](ctx, a.api, "/contacts/"+pathID(remoteID)+"/contactAutomations", nil, "contactAutomations", nil)
	if err != nil {
		return err
	}
	for _, ca := range cur {
		if string(ca.Automation) == automation {
			return nil
		}
	}
	in := map[string]any{"contactAutomation": map[string]any{"contact": remoteID, "automation": automation}}
	_, err = a.api.do(ctx, call{method: http.MethodPost, path: "/contactAutomations", in: in}, nil)
	return err
}

// createTask creates a contact task unless one of the contact's tasks already carries the stable id's
// marker: a retry after a lost answer finds the first one. The contact's tasks are listed with
// GET /dealTasks?filters[reltype]=Subscriber&filters[relid]={id}, every page (limit/offset, meta.total),
// so a contact with more tasks than one page still has its marker found. The create body is
// {"dealTask":{"title","ownerType":"contact","relid","status":0,"note","duedate","edate","dealTasktype"}};
// relid, duedate and dealTasktype are the reference's required fields, ownerType defaults to "deal" there.
func (a *activeCampaign) createTask(ctx context.Context, remoteID string, act Action) error {
	title, err := act.param(KindActiveCampaign, "title")
	if err != nil {
		return err
	}
	found, err := a.taskWithMarker(ctx, remoteID, act.StableID)
	if err != nil || found {
		return err
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

// taskWithMarker reports whether one of the contact's tasks carries stableID's marker in its note.
func (a *activeCampaign) taskWithMarker(ctx context.Context, remoteID, stableID string) (bool, error) {
	type dealTask struct {
		Note string `json:"note"`
	}
	q := url.Values{"filters[reltype]": {"Subscriber"}, "filters[relid]": {remoteID}}
	tasks, err := acListAll[dealTask](ctx, a.api, "/dealTasks", q, "dealTasks", nil)
	if err != nil {
		return false, err
	}
	for _, t := range tasks {
		if hasMarker(t.Note, stableID) {
			return true, nil
		}
	}
	return false, nil
}

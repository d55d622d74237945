package crm

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"
)

var acActions = []string{ActionAddTag, ActionAddToList, ActionStartAutomation, ActionCreateTask}

// acPage is the page size of the v3 list reads below (AC's documented maximum; the default is 20).
const acPage = 100

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
// /contacts/{id}/contactTags, {"contactTags":[{"tag":id}]}).
func (a *activeCampaign) addTag(ctx context.Context, remoteID string, act Action) error {
	tag, err := act.param(KindActiveCampaign, "tag")
	if err != nil {
		return err
	}
	tagID, err := a.tagID(ctx, tag, nil)
	if err != nil {
		return err
	}
	var cur struct {
		ContactTags []struct {
			Tag flexString `json:"tag"`
		} `json:"contactTags"`
	}
	if _, err := a.api.do(ctx, call{method: http.MethodGet, path: "/contacts/" + pathID(remoteID) + "/contactTags",
		query: url.Values{"limit": {strconv.Itoa(acPage)}}, out: &cur}, nil); err != nil {
		return err
	}
	for _, ct := range cur.ContactTags {
		if string(ct.Tag) == tagID {
			return nil
		}
	}
	in := map[string]any{"contactTag": map[string]any{"contact": remoteID, "tag": tagID}}
	_, err = a.api.do(ctx, call{method: http.MethodPost, path: "/contactTags", in: in}, nil)
	return err
}

// addToList subscribes the contact (POST /contactLists {"contactList":{"list","contact","status":1}}) when
// it has no subscription to the list yet. The reference warns that setting status 1 on an unsubscribed
// contact re-subscribes someone who unsubscribed themselves, so the contact's list memberships are read
// first (GET /contacts/{id}/contactLists): already active (status 1) is done; any other status
// (unsubscribed, bounced, unconfirmed) is left alone and reported as an Invalid error, which dead-letters
// the side effect with the reason for a person to decide.
func (a *activeCampaign) addToList(ctx context.Context, remoteID string, act Action) error {
	list, err := act.param(KindActiveCampaign, "list")
	if err != nil {
		return err
	}
	var cur struct {
		ContactLists []struct {
			List   flexString `json:"list"`
			Status flexString `json:"status"`
		} `json:"contactLists"`
	}
	if _, err := a.api.do(ctx, call{method: http.MethodGet, path: "/contacts/" + pathID(remoteID) + "/contactLists",
		query: url.Values{"limit": {strconv.Itoa(acPage)}}, out: &cur}, nil); err != nil {
		return err
	}
	for _, cl := range cur.ContactLists {
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
	var cur struct {
		ContactAutomations []struct {
			Automation flexString `json:"automation"`
		} `json:"contactAutomations"`
	}
	if _, err := a.api.do(ctx, call{method: http.MethodGet, path: "/contacts/" + pathID(remoteID) + "/contactAutomations",
		query: url.Values{"limit": {strconv.Itoa(acPage)}}, out: &cur}, nil); err != nil {
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
	for offset := 0; ; {
		var page struct {
			DealTasks []struct {
				Note string `json:"note"`
			} `json:"dealTasks"`
			Meta struct {
				Total flexString `json:"total"`
			} `json:"meta"`
		}
		q := url.Values{"filters[reltype]": {"Subscriber"}, "filters[relid]": {remoteID},
			"limit": {strconv.Itoa(acPage)}, "offset": {strconv.Itoa(offset)}}
		if _, err := a.api.do(ctx, call{method: http.MethodGet, path: "/dealTasks", query: q, out: &page}, nil); err != nil {
			return false, err
		}
		for _, t := range page.DealTasks {
			if hasMarker(t.Note, stableID) {
				return true, nil
			}
		}
		offset += len(page.DealTasks)
		total, err := strconv.Atoi(string(page.Meta.Total))
		// A short page is the last one; so is reaching meta.total when the answer carries it.
		if len(page.DealTasks) < acPage || (err == nil && offset >= total) {
			return false, nil
		}
	}
}

package crm

import (
	"context"
	"net/http"
	"net/url"
	"slices"
	"strconv"
)

var hsActions = []string{ActionAddToList, ActionCreateTask}

// hsTaskToContact is HubSpot's default association type id from a task to a contact.
const hsTaskToContact = 204

// SupportsAction: static-list membership and tasks. HubSpot contacts have no tags and workflows are not
// enrolled through the CRM API, so add_tag, start_automation and enroll_workflow are unsupported.
func (h *hubSpot) SupportsAction(name string) bool { return slices.Contains(hsActions, name) }

// RunAction carries a native side effect out on the contact.
func (h *hubSpot) RunAction(ctx context.Context, remoteID string, act Action) error {
	switch act.Name {
	case ActionAddToList:
		list, err := act.param(KindHubSpot, "list")
		if err != nil {
			return err
		}
		return h.addToList(ctx, remoteID, list)
	case ActionCreateTask:
		return h.createTask(ctx, remoteID, act)
	}
	return unsupportedAction(KindHubSpot, act.Name, hsActions...)
}

// addToList adds the contact to a MANUAL or SNAPSHOT list: PUT /crm/v3/lists/{listId}/memberships/add
// with a JSON array of record ids, answered 200 MembershipsUpdateResponse (lists v3,
// HubSpot-public-api-spec-collection PublicApiSpecs/CRM/Lists/Rollouts/144891/v3/lists.json). The reference
// says records "that do not exist or that are already members of the list are ignored": a member already
// in the list is a success, but a record HubSpot does not know comes back in recordIdsMissing with a 200,
// so that answer is read and turned into a NotFound error instead of a silent success.
func (h *hubSpot) addToList(ctx context.Context, remoteID, list string) error {
	var out struct {
		Missing []flexString `json:"recordIdsMissing"`
	}
	path := "/crm/v3/lists/" + pathID(list) + "/memberships/add"
	if _, err := h.do(ctx, call{method: http.MethodPut, path: path, in: []string{remoteID}, out: &out}, nil); err != nil {
		return err
	}
	for _, id := range out.Missing {
		if string(id) == remoteID {
			return &Error{Class: NotFound, Message: "hubspot: list " + list + ": record " + remoteID + " does not exist (recordIdsMissing)"}
		}
	}
	return nil
}

// createTask creates a task associated with the contact unless one of the contact's tasks already carries
// the stable id's marker. The check reads the contact's task associations and their bodies (not the
// search API, whose index lags writes by seconds). The create body is SimplePublicObjectInputForCreate
// (tasks v3: properties and associations are both required; hs_timestamp is the required due date,
// milliseconds since the epoch); the association type id 204 (task to contact, HUBSPOT_DEFINED) is
// HubSpot's published default, not part of the OpenAPI file.
func (h *hubSpot) createTask(ctx context.Context, remoteID string, act Action) error {
	subject, err := act.param(KindHubSpot, "title")
	if err != nil {
		return err
	}
	found, err := h.taskWithMarker(ctx, remoteID, act.StableID)
	if err != nil || found {
		return err
	}
	props := map[string]string{"hs_task_subject": subject, "hs_task_body": act.taskBody(), "hs_task_status": "NOT_STARTED",
		"hs_timestamp": strconv.FormatInt(act.taskDue(h.cfg.Now()).UnixMilli(), 10)}
	in := map[string]any{"properties": props, "associations": []any{map[string]any{
		"to":    map[string]string{"id": remoteID},
		"types": []any{map[string]any{"associationCategory": "HUBSPOT_DEFINED", "associationTypeId": hsTaskToContact}},
	}}}
	_, err = h.do(ctx, call{method: http.MethodPost, path: "/crm/v3/objects/tasks", in: in}, nil)
	return err
}

// taskWithMarker reports whether a task associated with the contact has stableID's marker in its body. It
// pages GET /crm/v4/objects/contacts/{id}/associations/tasks (limit 500, paging.next.after; toObjectId is
// a string in the v4 reference) and reads the bodies with POST /crm/v3/objects/tasks/batch/read, whose
// BatchReadInputSimplePublicObjectId requires inputs, properties and propertiesWithHistory.
func (h *hubSpot) taskWithMarker(ctx context.Context, remoteID, stableID string) (bool, error) {
	var assoc struct {
		Results []struct {
			ToObjectID flexString `json:"toObjectId"`
		} `json:"results"`
		Paging *struct {
			Next *struct {
				After string `json:"after"`
			} `json:"next"`
		} `json:"paging"`
	}
	path := "/crm/v4/objects/contacts/" + pathID(remoteID) + "/associations/tasks"
	var ids []map[string]string
	after := ""
	for {
		q := url.Values{"limit": {"500"}}
		if after != "" {
			q.Set("after", after)
		}
		assoc.Results, assoc.Paging = nil, nil
		if _, err := h.do(ctx, call{method: http.MethodGet, path: path, query: q, out: &assoc}, nil); err != nil {
			return false, err
		}
		for _, r := range assoc.Results {
			ids = append(ids, map[string]string{"id": string(r.ToObjectID)})
		}
		if assoc.Paging == nil || assoc.Paging.Next == nil || assoc.Paging.Next.After == "" {
			break
		}
		after = assoc.Paging.Next.After
	}
	for chunk := range slices.Chunk(ids, 100) {
		var out struct {
			Results []hsObject `json:"results"`
		}
		in := map[string]any{"properties": []string{"hs_task_body"}, "propertiesWithHistory": []string{}, "inputs": chunk}
		if _, err := h.do(ctx, call{method: http.MethodPost, path: "/crm/v3/objects/tasks/batch/read", in: in, out: &out}, nil); err != nil {
			return false, err
		}
		for _, t := range out.Results {
			if b := t.Properties["hs_task_body"]; b != nil && hasMarker(*b, stableID) {
				return true, nil
			}
		}
	}
	return false, nil
}

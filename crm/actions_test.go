package crm_test

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/leadgate/leadgate/crm"
	"github.com/leadgate/leadgate/crm/crmfake"
)

// actionFake is what the native-action contract tests read from each fake.
type actionFake struct {
	add        func(email string) string
	tags       func(id string) []string // nil: the CRM has no contact tags
	tasks      func() []crmfake.Task
	members    func(list string) []string
	enrolments func(id string) []string
	enrolCalls func() int
	fail       func(r crmfake.Response)
	taskPath   func(id string) string // the create-task request path
	requests   func() []crmfake.Request
	seedTask   func(contact, title, body string) string
	supported  []string
}

func actionFakes(t *testing.T) map[string]func() (actionFake, crm.ActionRunner) {
	runner := func(d crm.Destination) crm.ActionRunner {
		r, ok := d.(crm.ActionRunner)
		if !ok {
			t.Fatalf("%s adapter does not implement crm.ActionRunner", d.Kind())
		}
		return r
	}
	return map[string]func() (actionFake, crm.ActionRunner){
		crm.KindActiveCampaign: func() (actionFake, crm.ActionRunner) {
			f, d := newAC(t, crmfake.ACOptions{})
			return actionFake{
				add: func(e string) string { return f.AddContact(crmfake.ACContact{Email: e}) },
				tags: func(id string) []string {
					i := slices.IndexFunc(f.Contacts(), func(c crmfake.ACContact) bool { return c.ID == id })
					return f.Contacts()[i].Tags
				},
				tasks: f.Tasks, members: f.ListMembers, enrolments: f.Enrolments, enrolCalls: f.EnrolmentCalls, fail: f.FailNext,
				requests: f.Requests, seedTask: f.SeedTask,
				taskPath:  func(string) string { return "/api/3/dealTasks" },
				supported: []string{crm.ActionAddTag, crm.ActionAddToList, crm.ActionStartAutomation, crm.ActionCreateTask},
			}, runner(d)
		},
		crm.KindGoHighLevel: func() (actionFake, crm.ActionRunner) {
			f, d := newGHL(t, crmfake.GHLOptions{})
			return actionFake{
				add: func(e string) string { return f.AddContact(crmfake.GHLContact{Email: e}) },
				tags: func(id string) []string {
					i := slices.IndexFunc(f.Contacts(), func(c crmfake.GHLContact) bool { return c.ID == id })
					return f.Contacts()[i].Tags
				},
				tasks: f.Tasks, members: f.ListMembers, enrolments: f.Enrolments, enrolCalls: f.EnrolmentCalls, fail: f.FailNext,
				requests: f.Requests, seedTask: f.SeedTask,
				taskPath:  func(id string) string { return "/contacts/" + id + "/tasks" },
				supported: []string{crm.ActionAddTag, crm.ActionEnrollWorkflow, crm.ActionCreateTask},
			}, runner(d)
		},
		crm.KindHubSpot: func() (actionFake, crm.ActionRunner) {
			f, d := newHS(t, crmfake.HSOptions{})
			return actionFake{
				add:   func(e string) string { return f.AddContact(map[string]string{"email": e}) },
				tasks: f.Tasks, members: f.ListMembers, enrolments: f.Enrolments, enrolCalls: f.EnrolmentCalls, fail: f.FailNext,
				requests: f.Requests, seedTask: f.SeedTask,
				taskPath:  func(string) string { return "/crm/v3/objects/tasks" },
				supported: []string{crm.ActionAddToList, crm.ActionCreateTask},
			}, runner(d)
		},
	}
}

var allActions = []string{crm.ActionAddTag, crm.ActionAddToList, crm.ActionStartAutomation, crm.ActionEnrollWorkflow, crm.ActionCreateTask}

// Each supported action has its effect once, even when run twice under the same stable id (a retry after a
// lost answer); an unsupported action or a missing param is an Invalid error that sends nothing.
func TestRunActionContract(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	params := map[string]map[string]string{
		crm.ActionAddTag:          {"tag": "vip"},
		crm.ActionAddToList:       {"list": "7"},
		crm.ActionStartAutomation: {"automation": "12"},
		crm.ActionEnrollWorkflow:  {"workflow": "wf-3"},
		crm.ActionCreateTask:      {"title": "Call the lead", "body": "Entered SQL", "due_in_days": "2"},
	}
	for kind, build := range actionFakes(t) {
		for _, action := range allActions {
			t.Run(kind+"/"+action, func(t *testing.T) {
				f, r := build()
				id := f.add("a@example.com")
				act := crm.Action{StableID: "stable-" + action, Name: action, Params: params[action]}
				if !slices.Contains(f.supported, action) {
					if r.SupportsAction(action) {
						t.Fatalf("SupportsAction(%s) = true, want false", action)
					}
					err := r.RunAction(ctx, id, act)
					if crm.ClassOf(err) != crm.Invalid || !strings.Contains(err.Error(), "cannot run action") {
						t.Fatalf("unsupported action: err = %v, want an Invalid 'cannot run action' error", err)
					}
					return
				}
				if !r.SupportsAction(action) {
					t.Fatalf("SupportsAction(%s) = false, want true", action)
				}
				for range 2 {
					if err := r.RunAction(ctx, id, act); err != nil {
						t.Fatalf("RunAction: %v", err)
					}
				}
				switch action {
				case crm.ActionAddTag:
					if tags := f.tags(id); len(tags) != 1 || tags[0] != "vip" {
						t.Errorf("tags = %v, want [vip]", tags)
					}
				case crm.ActionAddToList:
					if m := f.members("7"); len(m) != 1 || m[0] != id {
						t.Errorf("list members = %v, want [%s]", m, id)
					}
				case crm.ActionStartAutomation, crm.ActionEnrollWorkflow:
					want := cmpOr(params[action]["automation"], params[action]["workflow"])
					if e := f.enrolments(id); len(e) != 1 || e[0] != want {
						t.Errorf("enrolments = %v, want [%s]", e, want)
					}
					if kind == crm.KindActiveCampaign && f.enrolCalls() != 1 {
						t.Errorf("enrolment requests = %d, want 1 (the second run finds the contact enrolled)", f.enrolCalls())
					}
				case crm.ActionCreateTask:
					tasks := f.tasks()
					if len(tasks) != 1 {
						t.Fatalf("tasks = %+v, want exactly one", tasks)
					}
					if tk := tasks[0]; tk.ContactID != id || tk.Title != "Call the lead" || !strings.Contains(tk.Body, "Entered SQL") ||
						!strings.Contains(tk.Body, crm.TaskMarker(act.StableID)) {
						t.Errorf("task = %+v, want on %s with the title, body and marker", tk, id)
					}
				}
				missing := crm.Action{StableID: "s2", Name: action}
				if err := r.RunAction(ctx, id, missing); crm.ClassOf(err) != crm.Invalid || !strings.Contains(err.Error(), "needs the param") {
					t.Errorf("no params: err = %v, want an Invalid 'needs the param' error", err)
				}
			})
		}
	}
}

// A task whose create answered 503 was not created: the retry creates exactly one. A second stable id is a
// second task.
func TestRunActionCreateTaskAfter503(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	for kind, build := range actionFakes(t) {
		t.Run(kind, func(t *testing.T) {
			f, r := build()
			id := f.add("b@example.com")
			act := crm.Action{StableID: "s1", Name: crm.ActionCreateTask, Params: map[string]string{"title": "Call"}}
			f.fail(crmfake.Response{Method: "POST", Path: f.taskPath(id), Status: 503, Body: `{"message":"unavailable"}`})
			if err := r.RunAction(ctx, id, act); crm.ClassOf(err) != crm.Transient {
				t.Fatalf("first run: err = %v, want Transient", err)
			}
			if err := r.RunAction(ctx, id, act); err != nil {
				t.Fatalf("retry: %v", err)
			}
			if n := len(f.tasks()); n != 1 {
				t.Fatalf("tasks after 503 and retry = %d, want 1", n)
			}
			act.StableID = "s2"
			if err := r.RunAction(ctx, id, act); err != nil {
				t.Fatalf("second stable id: %v", err)
			}
			if n := len(f.tasks()); n != 2 {
				t.Errorf("tasks after a second stable id = %d, want 2", n)
			}
		})
	}
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// writes counts the requests with method to exactly path.
func writes(reqs []crmfake.Request, method, path string) int {
	n := 0
	for _, r := range reqs {
		if r.Method == method && r.Path == path {
			n++
		}
	}
	return n
}

// lastBody decodes the body of the last request with method to path ("" when there is none).
func lastBody(t *testing.T, reqs []crmfake.Request, method, path string) any {
	t.Helper()
	for i := len(reqs) - 1; i >= 0; i-- {
		if reqs[i].Method == method && reqs[i].Path == path {
			var v any
			if err := json.Unmarshal(reqs[i].Body, &v); err != nil {
				t.Fatalf("%s %s body %q: %v", method, path, reqs[i].Body, err)
			}
			return v
		}
	}
	t.Fatalf("no %s %s request", method, path)
	return nil
}

// at walks a decoded JSON value along keys (object keys, or "0" for an array's first element).
func at(v any, keys ...string) any {
	for _, k := range keys {
		switch x := v.(type) {
		case map[string]any:
			v = x[k]
		case []any:
			if k != "0" || len(x) == 0 {
				return nil
			}
			v = x[0]
		default:
			return nil
		}
	}
	return v
}

// Each request leadgate sends for a native action carries what the provider's reference requires, in the
// documented shape (ActiveCampaign v3 contacts/deals references, HubSpot lists v3 / tasks v3, GoHighLevel
// contacts v2). The fakes reject what the references reject; this pins the fields themselves.
func TestRunActionRequestsMatchSpec(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	type want struct {
		method, path string                        // path "{id}" is replaced by the contact's id
		check        func(id string, b any) string // "" when the body is right
	}
	str := func(v any) string { s, _ := v.(string); return s }
	cases := []struct {
		kind, action string
		params       map[string]string
		want         []want
	}{
		{crm.KindActiveCampaign, crm.ActionAddTag, map[string]string{"tag": "vip"}, []want{
			{"POST", "/api/3/contactTags", func(id string, b any) string {
				if fmt.Sprint(at(b, "contactTag", "contact")) != id || at(b, "contactTag", "tag") == nil {
					return "want contactTag.contact and contactTag.tag"
				}
				return ""
			}}}},
		{crm.KindActiveCampaign, crm.ActionAddToList, map[string]string{"list": "7"}, []want{
			{"POST", "/api/3/contactLists", func(id string, b any) string {
				if fmt.Sprint(at(b, "contactList", "list")) != "7" || fmt.Sprint(at(b, "contactList", "contact")) != id ||
					fmt.Sprint(at(b, "contactList", "status")) != "1" {
					return "want contactList {list 7, contact, status 1}"
				}
				return ""
			}}}},
		{crm.KindActiveCampaign, crm.ActionStartAutomation, map[string]string{"automation": "12"}, []want{
			{"POST", "/api/3/contactAutomations", func(id string, b any) string {
				if fmt.Sprint(at(b, "contactAutomation", "contact")) != id || fmt.Sprint(at(b, "contactAutomation", "automation")) != "12" {
					return "want contactAutomation {contact, automation 12}"
				}
				return ""
			}}}},
		{crm.KindActiveCampaign, crm.ActionCreateTask, map[string]string{"title": "Call", "task_type": "3"}, []want{
			{"POST", "/api/3/dealTasks", func(id string, b any) string {
				due, err := time.Parse(time.RFC3339, str(at(b, "dealTask", "duedate")))
				switch {
				case fmt.Sprint(at(b, "dealTask", "relid")) != id:
					return "relid is not the contact"
				case str(at(b, "dealTask", "ownerType")) != "contact":
					return `ownerType must be "contact" (the reference's default is "deal")`
				case err != nil || due.IsZero():
					return "duedate missing or not a timestamp"
				case fmt.Sprint(at(b, "dealTask", "dealTasktype")) != "3":
					return "dealTasktype is not the task_type param"
				}
				return ""
			}}}},
		{crm.KindHubSpot, crm.ActionAddToList, map[string]string{"list": "55"}, []want{
			{"PUT", "/crm/v3/lists/55/memberships/add", func(id string, b any) string {
				if arr, ok := b.([]any); !ok || len(arr) != 1 || arr[0] != id {
					return "want a JSON array of record id strings"
				}
				return ""
			}}}},
		{crm.KindHubSpot, crm.ActionCreateTask, map[string]string{"title": "Call", "body": "Entered SQL"}, []want{
			{"POST", "/crm/v3/objects/tasks", func(id string, b any) string {
				switch {
				case str(at(b, "properties", "hs_timestamp")) == "" || str(at(b, "properties", "hs_task_subject")) != "Call":
					return "properties need hs_timestamp and hs_task_subject"
				case str(at(b, "properties", "hs_task_status")) != "NOT_STARTED":
					return "hs_task_status must be NOT_STARTED"
				case fmt.Sprint(at(b, "associations", "0", "to", "id")) != id:
					return "the association is not to the contact"
				case str(at(b, "associations", "0", "types", "0", "associationCategory")) != "HUBSPOT_DEFINED" ||
					fmt.Sprint(at(b, "associations", "0", "types", "0", "associationTypeId")) != "204":
					return "want association type HUBSPOT_DEFINED 204 (task to contact)"
				}
				return ""
			}},
			{"GET", "/crm/v4/objects/contacts/{id}/associations/tasks", nil},
		}},
		{crm.KindGoHighLevel, crm.ActionAddTag, map[string]string{"tag": "vip"}, []want{
			{"POST", "/contacts/{id}/tags", func(_ string, b any) string {
				if tags, ok := at(b, "tags").([]any); !ok || len(tags) != 1 || tags[0] != "vip" {
					return `want {"tags":["vip"]}`
				}
				return ""
			}}}},
		{crm.KindGoHighLevel, crm.ActionEnrollWorkflow, map[string]string{"workflow": "wf-3"}, []want{
			{"POST", "/contacts/{id}/workflow/wf-3", func(_ string, b any) string {
				if _, err := time.Parse(time.RFC3339, str(at(b, "eventStartTime"))); err != nil {
					return "eventStartTime must be an ISO timestamp"
				}
				return ""
			}},
			{"POST", "/contacts/{id}/notes", func(_ string, b any) string {
				if !strings.Contains(str(at(b, "body")), crm.TaskMarker("stable-1")) {
					return "the note must carry the stable id's marker"
				}
				return ""
			}},
		}},
		{crm.KindGoHighLevel, crm.ActionCreateTask, map[string]string{"title": "Call"}, []want{
			{"POST", "/contacts/{id}/tasks", func(_ string, b any) string {
				if str(at(b, "title")) != "Call" || at(b, "completed") != false || str(at(b, "dueDate")) == "" {
					return "CreateTaskParams needs title, dueDate and completed"
				}
				return ""
			}}}},
	}
	fakes := actionFakes(t)
	for _, tc := range cases {
		t.Run(tc.kind+"/"+tc.action, func(t *testing.T) {
			f, r := fakes[tc.kind]()
			id := f.add("spec@example.com")
			if err := r.RunAction(ctx, id, crm.Action{StableID: "stable-1", Name: tc.action, Params: tc.params}); err != nil {
				t.Fatalf("RunAction: %v", err)
			}
			reqs := f.requests()
			for _, w := range tc.want {
				path := strings.ReplaceAll(w.path, "{id}", id)
				if w.check == nil {
					if writes(reqs, w.method, path) == 0 {
						t.Errorf("no %s %s request", w.method, path)
					}
					continue
				}
				if msg := w.check(id, lastBody(t, reqs, w.method, path)); msg != "" {
					t.Errorf("%s %s: %s", w.method, path, msg)
				}
			}
			if tc.kind == crm.KindHubSpot && tc.action == crm.ActionCreateTask {
				// The marker lookup's batch read: BatchReadInputSimplePublicObjectId requires all three.
				if err := r.RunAction(ctx, id, crm.Action{StableID: "stable-1", Name: tc.action, Params: tc.params}); err != nil {
					t.Fatalf("second RunAction: %v", err)
				}
				b := lastBody(t, f.requests(), "POST", "/crm/v3/objects/tasks/batch/read")
				for _, k := range []string{"inputs", "properties", "propertiesWithHistory"} {
					if _, ok := at(b, k).([]any); !ok {
						t.Errorf("batch/read body %v lacks %q", b, k)
					}
				}
			}
		})
	}
}

// Running an action twice under one stable id sends its write once: the second run reads the CRM and finds
// the tag, the subscription, the enrolment or the marker already there. (HubSpot's list add is documented
// to ignore members already in the list, so it has no read and may be sent again.)
func TestRunActionSecondRunSendsNoWrite(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	cases := []struct {
		kind, action string
		params       map[string]string
		method, path string // the write; "{id}" is the contact's id
	}{
		{crm.KindActiveCampaign, crm.ActionAddTag, map[string]string{"tag": "vip"}, "POST", "/api/3/contactTags"},
		{crm.KindActiveCampaign, crm.ActionAddToList, map[string]string{"list": "7"}, "POST", "/api/3/contactLists"},
		{crm.KindActiveCampaign, crm.ActionStartAutomation, map[string]string{"automation": "12"}, "POST", "/api/3/contactAutomations"},
		{crm.KindActiveCampaign, crm.ActionCreateTask, map[string]string{"title": "Call"}, "POST", "/api/3/dealTasks"},
		{crm.KindHubSpot, crm.ActionCreateTask, map[string]string{"title": "Call"}, "POST", "/crm/v3/objects/tasks"},
		{crm.KindGoHighLevel, crm.ActionAddTag, map[string]string{"tag": "vip"}, "POST", "/contacts/{id}/tags"},
		{crm.KindGoHighLevel, crm.ActionEnrollWorkflow, map[string]string{"workflow": "wf-3"}, "POST", "/contacts/{id}/workflow/wf-3"},
		{crm.KindGoHighLevel, crm.ActionCreateTask, map[string]string{"title": "Call"}, "POST", "/contacts/{id}/tasks"},
	}
	fakes := actionFakes(t)
	for _, tc := range cases {
		t.Run(tc.kind+"/"+tc.action, func(t *testing.T) {
			f, r := fakes[tc.kind]()
			id := f.add("twice@example.com")
			act := crm.Action{StableID: "stable-2", Name: tc.action, Params: tc.params}
			for range 2 {
				if err := r.RunAction(ctx, id, act); err != nil {
					t.Fatalf("RunAction: %v", err)
				}
			}
			if n := writes(f.requests(), tc.method, strings.ReplaceAll(tc.path, "{id}", id)); n != 1 {
				t.Errorf("%s %s sent %d times, want 1", tc.method, tc.path, n)
			}
			if tc.action == crm.ActionEnrollWorkflow {
				if e := f.enrolments(id); len(e) != 1 {
					t.Errorf("GoHighLevel enrolments = %v, want one", e)
				}
			}
		})
	}
}

// ActiveCampaign warns that posting status 1 re-subscribes a contact who unsubscribed. add_to_list
// therefore leaves any existing status other than active alone (an Invalid error naming it, no write) and
// sends nothing for a contact already subscribed.
func TestRunActionActiveCampaignKeepsListStatus(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	for _, tc := range []struct {
		status  string
		wantErr bool
	}{
		{"1", false}, // active: nothing to do
		{"2", true},  // unsubscribed
		{"3", true},  // bounced
		{"0", true},  // unconfirmed (double opt-in pending)
	} {
		t.Run("status "+tc.status, func(t *testing.T) {
			f, d := newAC(t, crmfake.ACOptions{})
			id := f.AddContact(crmfake.ACContact{Email: "opted-out@example.com"})
			f.SetListStatus("7", id, tc.status)
			err := d.(crm.ActionRunner).RunAction(ctx, id, crm.Action{StableID: "s1", Name: crm.ActionAddToList, Params: map[string]string{"list": "7"}})
			switch {
			case tc.wantErr && (crm.ClassOf(err) != crm.Invalid || !strings.Contains(err.Error(), "status "+tc.status)):
				t.Errorf("err = %v, want an Invalid error naming status %s", err, tc.status)
			case !tc.wantErr && err != nil:
				t.Errorf("err = %v, want nil", err)
			}
			if n := writes(f.Requests(), "POST", "/api/3/contactLists"); n != 0 {
				t.Errorf("POST /contactLists sent %d times, want 0 (the subscription status is the contact's)", n)
			}
			if m := f.ListMembers("7"); (tc.status == "1") != slices.Contains(m, id) {
				t.Errorf("list members %v after status %s: the status must be unchanged", m, tc.status)
			}
		})
	}
}

// HubSpot answers a list add for a record it does not know with 200 and the id in recordIdsMissing; that is
// a NotFound error, not a success.
func TestRunActionHubSpotListAddMissingRecord(t *testing.T) {
	t.Parallel()
	_, d := newHS(t, crmfake.HSOptions{})
	err := d.(crm.ActionRunner).RunAction(context.Background(), "999999", crm.Action{StableID: "s1", Name: crm.ActionAddToList,
		Params: map[string]string{"list": "55"}})
	if crm.ClassOf(err) != crm.NotFound || !strings.Contains(err.Error(), "recordIdsMissing") {
		t.Fatalf("err = %v, want NotFound naming recordIdsMissing", err)
	}
}

// The create_task marker is found however many tasks the contact has (AC pages dealTasks 100 at a time,
// HubSpot pages associations 500 at a time), and the marker of one stable id does not match inside
// another's ("s1" is a prefix of "s10").
func TestRunActionTaskMarker(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	for _, tc := range []struct {
		name      string
		others    int    // tasks seeded before the one with a marker
		marked    string // the stable id whose marker the seeded task carries; "" = none
		wantTasks int    // tasks created by RunAction(stable id "s1")
	}{
		{"marker on a later page", 650, "s1", 0},
		{"marker of a longer id", 0, "s10", 1},
		{"marker of the same id", 0, "s1", 0},
	} {
		for kind, build := range actionFakes(t) {
			t.Run(tc.name+"/"+kind, func(t *testing.T) {
				f, r := build()
				id := f.add("marker@example.com")
				for i := range tc.others {
					f.seedTask(id, fmt.Sprintf("Older %d", i), "an older task")
				}
				if tc.marked != "" {
					f.seedTask(id, "Earlier", "Entered SQL\n\n"+crm.TaskMarker(tc.marked))
				}
				before := len(f.tasks())
				if err := r.RunAction(ctx, id, crm.Action{StableID: "s1", Name: crm.ActionCreateTask, Params: map[string]string{"title": "Call"}}); err != nil {
					t.Fatalf("RunAction: %v", err)
				}
				if n := len(f.tasks()) - before; n != tc.wantTasks {
					t.Errorf("tasks created = %d, want %d", n, tc.wantTasks)
				}
			})
		}
	}
}

// GoHighLevel enrolments are guarded by a note carrying the stable id's marker: a note for this stable id
// means the contact was enrolled already, a note for another id does not.
func TestRunActionGoHighLevelEnrolmentMarker(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	for _, tc := range []struct {
		note      string
		wantEnrol int
	}{
		{"", 1},
		{"Enrolled in workflow wf-3 by leadgate.\n\n" + crm.TaskMarker("s1"), 0},
		{"Enrolled in workflow wf-3 by leadgate.\n\n" + crm.TaskMarker("s10"), 1},
	} {
		t.Run(fmt.Sprintf("note %q", tc.note), func(t *testing.T) {
			f, d := newGHL(t, crmfake.GHLOptions{})
			c := crmfake.GHLContact{Email: "wf@example.com"}
			if tc.note != "" {
				c.Notes = []string{tc.note}
			}
			id := f.AddContact(c)
			err := d.(crm.ActionRunner).RunAction(ctx, id, crm.Action{StableID: "s1", Name: crm.ActionEnrollWorkflow,
				Params: map[string]string{"workflow": "wf-3"}})
			if err != nil {
				t.Fatalf("RunAction: %v", err)
			}
			if n := len(f.Enrolments(id)); n != tc.wantEnrol {
				t.Errorf("enrolments = %d, want %d", n, tc.wantEnrol)
			}
		})
	}
}

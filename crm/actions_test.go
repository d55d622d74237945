package crm_test

import (
	"context"
	"slices"
	"strings"
	"testing"

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
				taskPath:  func(id string) string { return "/contacts/" + id + "/tasks" },
				supported: []string{crm.ActionAddTag, crm.ActionEnrollWorkflow, crm.ActionCreateTask},
			}, runner(d)
		},
		crm.KindHubSpot: func() (actionFake, crm.ActionRunner) {
			f, d := newHS(t, crmfake.HSOptions{})
			return actionFake{
				add:   func(e string) string { return f.AddContact(map[string]string{"email": e}) },
				tasks: f.Tasks, members: f.ListMembers, enrolments: f.Enrolments, enrolCalls: f.EnrolmentCalls, fail: f.FailNext,
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

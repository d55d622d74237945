package syncer_test

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/leadgate/leadgate/crm"
	"github.com/leadgate/leadgate/crm/crmfake"
	"github.com/leadgate/leadgate/lifecycle"
	"github.com/leadgate/leadgate/models"
)

// nativeFake is a CRM fake as the native side-effect tests read it.
type nativeFake interface {
	Tasks() []crmfake.Task
	ListMembers(list string) []string
	Enrolments(contact string) []string
	FailNext(crmfake.Response)
	Requests() []crmfake.Request
}

// nativeCase is one CRM kind: its fake, a destination pointing at it, the path of its task create and its
// contact tags (nil where the CRM has none).
type nativeCase struct {
	dest     models.Destination
	fake     nativeFake
	taskPath func(remoteID string) string
	tags     func(remoteID string) []string
}

func (e *syncEnv) nativeCases() map[string]func() nativeCase {
	return map[string]func() nativeCase{
		crm.KindActiveCampaign: func() nativeCase {
			f := crmfake.NewActiveCampaign(crmfake.ACOptions{Options: crmfake.Options{Token: "ac-token"}, Fields: acFields})
			e.t.Cleanup(f.Close)
			return nativeCase{dest: e.acDestination(f, 50), fake: f, taskPath: func(string) string { return "/api/3/dealTasks" },
				tags: func(id string) []string {
					cs := f.Contacts()
					return cs[slices.IndexFunc(cs, func(c crmfake.ACContact) bool { return c.ID == id })].Tags
				}}
		},
		crm.KindGoHighLevel: func() nativeCase {
			f := crmfake.NewGoHighLevel(crmfake.GHLOptions{Options: crmfake.Options{Token: "ghl-token"}, LocationID: "loc-1",
				Fields: []crmfake.GHLField{{ID: "cfLoop", Name: "last_automation_source"}, {ID: "cfSync", Name: "sync_timestamp"}, {ID: "cfStage", Name: "stage"}}})
			e.t.Cleanup(f.Close)
			d := e.addDestination(models.Destination{Kind: crm.KindGoHighLevel, BaseURL: f.URL, RateLimitRPS: 50,
				Config: models.DestinationConfig{LocationID: "loc-1", StageField: "cfStage"}}, "ghl-token")
			return nativeCase{dest: d, fake: f, taskPath: func(id string) string { return "/contacts/" + id + "/tasks" },
				tags: func(id string) []string {
					cs := f.Contacts()
					return cs[slices.IndexFunc(cs, func(c crmfake.GHLContact) bool { return c.ID == id })].Tags
				}}
		},
		crm.KindHubSpot: func() nativeCase {
			f := crmfake.NewHubSpot(crmfake.HSOptions{Options: crmfake.Options{Token: "hs-token"}, Properties: hsTestProps})
			e.t.Cleanup(f.Close)
			d := e.addDestination(models.Destination{Kind: crm.KindHubSpot, BaseURL: f.URL, RateLimitRPS: 50,
				Config: models.DestinationConfig{StageMap: map[string]string{"Discovered": "lead", "Engaged": "marketingqualifiedlead", "SQL": "salesqualifiedlead"}}}, "hs-token")
			return nativeCase{dest: d, fake: f, taskPath: func(string) string { return "/crm/v3/objects/tasks" }}
		},
	}
}

// ruleSideEffect writes the side effect a stage rule emits when the contact enters SQL, as apply does (the
// rules engine's stable id, "se:" prefix, payload shape), and returns its outbox row.
func (e *syncEnv) ruleSideEffect(c models.Contact, action string, params map[string]string) models.OutboxRow {
	e.t.Helper()
	rules := lifecycle.DefaultRules()
	rules.SideEffects = []lifecycle.SideEffectRule{{On: "enter:SQL", Action: action, Params: params}}
	ses := rules.SideEffectsFor(c.ID, false, "SQL")
	if len(ses) != 1 {
		e.t.Fatalf("rules emitted %d side effects, want 1", len(ses))
	}
	se := ses[0]
	body, _ := json.Marshal(map[string]any{"contact_id": c.ID, "cause": se.Cause, "action": se.Action, "params": se.Params, "event_id": "ev-1"})
	cid := c.ID
	if _, err := e.store.OutboxAdd(e.ctx, models.OutboxRow{WorkspaceID: e.ws.ID, ContactID: &cid, Kind: models.OutboxSideEffect,
		StableID: "se:" + se.ID, Action: se.Action, Payload: body}); err != nil {
		e.t.Fatal(err)
	}
	var row models.OutboxRow
	e.store.DB().Raw(`SELECT * FROM outbox WHERE workspace_id = ? AND stable_id = ?`, e.ws.ID, "se:"+se.ID).Scan(&row)
	return row
}

func (e *syncEnv) outboxRow(id int64) models.OutboxRow {
	var row models.OutboxRow
	e.store.DB().Raw(`SELECT * FROM outbox WHERE id = ?`, id).Scan(&row)
	return row
}

// A rule-emitted create_task reaches each CRM exactly once: the first create answers 503 and is retried
// with backoff (one counted attempt); a crash-like redelivery of the same stable id (the row back to
// pending with its original payload, as if leadgate died between the CRM's answer and its bookkeeping)
// finds the task by its stable-id marker and creates no second one.
func TestNativeSideEffectCreatesOneTaskPerCRM(t *testing.T) {
	t.Parallel()
	for _, kind := range []string{crm.KindActiveCampaign, crm.KindHubSpot, crm.KindGoHighLevel} {
		t.Run(kind, func(t *testing.T) {
			e := newSyncEnv(t)
			nc := e.nativeCases()[kind]()
			c := e.contact("task@example.com", "SQL")
			e.drainAll(nc.dest, 20*time.Second)
			remote := e.remoteID(nc.dest, c.ID)
			row := e.ruleSideEffect(c, crm.ActionCreateTask, map[string]string{"title": "Call the new SQL", "body": "Entered SQL"})
			nc.fake.FailNext(crmfake.Response{Method: "POST", Path: nc.taskPath(remote), Status: 503, Body: `{"message":"unavailable"}`})
			relay := e.sideEffectRelay()
			got := e.deliverUntil(relay, row.ID, func(r models.OutboxRow) bool { return r.Status != models.OutboxPending })
			if got.Status != models.OutboxSent || got.Attempts != 2 {
				t.Fatalf("row %s after %d attempts (%q), want sent at the second", got.Status, got.Attempts, got.LastError)
			}
			e.store.DB().Exec(`UPDATE outbox SET status = 'pending', attempts = 0, next_attempt_at = now(), payload = ? WHERE id = ?`,
				row.Payload, row.ID) // the crash: progress never recorded
			got = e.deliverUntil(relay, row.ID, func(r models.OutboxRow) bool { return r.Status != models.OutboxPending })
			tasks := nc.fake.Tasks()
			if got.Status != models.OutboxSent || len(tasks) != 1 {
				t.Fatalf("after redelivery: row %s, tasks %+v; want sent and exactly one task", got.Status, tasks)
			}
			if tk := tasks[0]; tk.ContactID != remote || tk.Title != "Call the new SQL" || !strings.Contains(tk.Body, crm.TaskMarker(row.StableID)) {
				t.Errorf("task %+v, want on record %s with the rule's title and the stable-id marker", tk, remote)
			}
			if n := countExact(nc.fake.Requests(), "POST", nc.taskPath(remote)); n != 2 {
				t.Errorf("task creates sent = %d, want 2 (the 503 and the success; none on redelivery)", n)
			}
		})
	}
}

// Each CRM's other native actions reach it once, with the rule's params, even when delivered twice.
func TestNativeSideEffectActionsPerCRM(t *testing.T) {
	t.Parallel()
	cases := []struct {
		kind, action string
		params       map[string]string
		check        func(nc nativeCase, remote string) string // "" when the effect is there once
	}{
		{crm.KindActiveCampaign, crm.ActionAddTag, map[string]string{"tag": "sql"}, tagOnce("sql")},
		{crm.KindActiveCampaign, crm.ActionAddToList, map[string]string{"list": "7"}, listOnce("7")},
		{crm.KindActiveCampaign, crm.ActionStartAutomation, map[string]string{"automation": "12"}, enrolledOnce("12", "/api/3/contactAutomations")},
		{crm.KindHubSpot, crm.ActionAddToList, map[string]string{"list": "55"}, listOnce("55")},
		{crm.KindGoHighLevel, crm.ActionAddTag, map[string]string{"tag": "sql"}, tagOnce("sql")},
		{crm.KindGoHighLevel, crm.ActionEnrollWorkflow, map[string]string{"workflow": "wf-9"}, enrolledOnce("wf-9", "")},
	}
	for _, tc := range cases {
		t.Run(tc.kind+"/"+tc.action, func(t *testing.T) {
			e := newSyncEnv(t)
			nc := e.nativeCases()[tc.kind]()
			c := e.contact("act@example.com", "SQL")
			e.drainAll(nc.dest, 20*time.Second)
			remote := e.remoteID(nc.dest, c.ID)
			row := e.ruleSideEffect(c, tc.action, tc.params)
			relay := e.sideEffectRelay()
			for range 2 {
				got := e.deliverUntil(relay, row.ID, func(r models.OutboxRow) bool { return r.Status != models.OutboxPending })
				if got.Status != models.OutboxSent || !strings.Contains(got.LastError, "ran "+tc.action+" on "+remote) {
					t.Fatalf("row %s (%q), want sent with an outcome naming %s on %s", got.Status, got.LastError, tc.action, remote)
				}
				e.store.DB().Exec(`UPDATE outbox SET status = 'pending', next_attempt_at = now(), payload = ? WHERE id = ?`, row.Payload, row.ID)
			}
			if msg := tc.check(nc, remote); msg != "" {
				t.Error(msg)
			}
		})
	}
}

func tagOnce(tag string) func(nativeCase, string) string {
	return func(nc nativeCase, remote string) string {
		if tags := nc.tags(remote); len(slices.DeleteFunc(slices.Clone(tags), func(t string) bool { return t != tag })) != 1 {
			return "tags " + strings.Join(tags, ",") + ", want " + tag + " once"
		}
		return ""
	}
}

func listOnce(list string) func(nativeCase, string) string {
	return func(nc nativeCase, remote string) string {
		if m := nc.fake.ListMembers(list); !slices.Equal(m, []string{remote}) {
			return "list " + list + " members " + strings.Join(m, ",") + ", want " + remote
		}
		return ""
	}
}

// enrolledOnce checks the enrolment and, when path is set, that the second delivery sent no second one.
func enrolledOnce(id, path string) func(nativeCase, string) string {
	return func(nc nativeCase, remote string) string {
		if got := nc.fake.Enrolments(remote); !slices.Equal(got, []string{id}) {
			return "enrolments " + strings.Join(got, ",") + ", want " + id
		}
		if path != "" && countRequests(nc.fake.Requests(), "POST", path) != 1 {
			return "enrolment requests != 1: the second delivery must find the contact enrolled"
		}
		return ""
	}
}

// An action the only CRM cannot run is dead-lettered at once (one attempt) with a reason naming it, and
// nothing is sent to the CRM.
func TestNativeSideEffectUnsupportedIsDeadLettered(t *testing.T) {
	t.Parallel()
	e := newSyncEnv(t)
	nc := e.nativeCases()[crm.KindHubSpot]()
	c := e.contact("tag@example.com", "SQL")
	e.drainAll(nc.dest, 20*time.Second)
	before := len(nc.fake.Requests())
	row := e.ruleSideEffect(c, crm.ActionAddTag, map[string]string{"tag": "vip"})
	got := e.deliverUntil(e.sideEffectRelay(), row.ID, func(r models.OutboxRow) bool { return r.Status != models.OutboxPending })
	if got.Status != models.OutboxDead || got.Attempts != 1 {
		t.Fatalf("row %s after %d attempts, want dead at the first", got.Status, got.Attempts)
	}
	if n := e.count(`SELECT count(*) FROM dead_letters WHERE outbox_id = ? AND kind = 'side_effect_failed' AND reason LIKE '%hubspot cannot run action "add_tag"%'`, row.ID); n != 1 {
		t.Errorf("dead letters naming the unsupported action = %d, want 1 (reason %q)", n, got.LastError)
	}
	if after := len(nc.fake.Requests()); after != before {
		t.Errorf("requests to HubSpot for an unsupported action = %d, want 0", after-before)
	}
}

// A contact without a record at the destination yet (its sync pending) holds the side effect without
// spending attempts; once the contact is synced the action runs on the new record.
func TestNativeSideEffectWaitsForTheContactsSync(t *testing.T) {
	t.Parallel()
	e := newSyncEnv(t)
	nc := e.nativeCases()[crm.KindGoHighLevel]()
	c := e.contact("early@example.com", "SQL") // intent written, not synced yet
	row := e.ruleSideEffect(c, crm.ActionAddTag, map[string]string{"tag": "sql"})
	relay := e.sideEffectRelay()
	for range 3 {
		if _, err := relay.Deliver(e.ctx); err != nil {
			t.Fatal(err)
		}
		e.store.DB().Exec(`UPDATE outbox SET next_attempt_at = now() WHERE id = ?`, row.ID) // the wait passes
	}
	got := e.outboxRow(row.ID)
	if got.Status != models.OutboxPending || got.Attempts != 0 || !strings.Contains(got.LastError, "sync is pending") {
		t.Fatalf("before the sync: row %s attempts %d (%q), want pending, 0 attempts, sync pending", got.Status, got.Attempts, got.LastError)
	}
	if n := countRequests(nc.fake.Requests(), "POST", "/contacts/"); n != 0 {
		t.Errorf("requests before the contact was synced = %d, want 0", n)
	}
	e.drainAll(nc.dest, 20*time.Second)
	remote := e.remoteID(nc.dest, c.ID)
	got = e.deliverUntil(relay, row.ID, func(r models.OutboxRow) bool { return r.Status != models.OutboxPending })
	if got.Status != models.OutboxSent || got.Attempts != 1 || !slices.Contains(nc.tags(remote), "sql") {
		t.Errorf("after the sync: row %s attempts %d, tags %v; want sent at the first counted attempt with tag sql", got.Status, got.Attempts, nc.tags(remote))
	}
}

// With two CRMs, a destination done is never repeated: ActiveCampaign creates its task, GoHighLevel answers
// 503, and the retry goes to GoHighLevel only.
func TestNativeSideEffectProgressIsKeptPerDestination(t *testing.T) {
	t.Parallel()
	e := newSyncEnv(t)
	ac := e.nativeCases()[crm.KindActiveCampaign]()
	ghl := e.nativeCases()[crm.KindGoHighLevel]()
	c := e.contact("both@example.com", "SQL")
	e.drainAll(ac.dest, 20*time.Second)
	e.drainAll(ghl.dest, 20*time.Second)
	ghlRemote := e.remoteID(ghl.dest, c.ID)
	row := e.ruleSideEffect(c, crm.ActionCreateTask, map[string]string{"title": "Call"})
	ghl.fake.FailNext(crmfake.Response{Method: "POST", Path: ghl.taskPath(ghlRemote), Status: 503, Body: `{"message":"unavailable"}`})
	got := e.deliverUntil(e.sideEffectRelay(), row.ID, func(r models.OutboxRow) bool { return r.Status != models.OutboxPending })
	if got.Status != models.OutboxSent || got.Attempts != 2 {
		t.Fatalf("row %s after %d attempts, want sent at the second", got.Status, got.Attempts)
	}
	if n := countRequests(ac.fake.Requests(), "GET", "/api/3/dealTasks") + countRequests(ac.fake.Requests(), "POST", "/api/3/dealTasks"); n != 2 {
		t.Errorf("ActiveCampaign task requests = %d, want 2 (one check, one create; none on the retry)", n)
	}
	if len(ac.fake.Tasks()) != 1 || len(ghl.fake.Tasks()) != 1 {
		t.Errorf("tasks: AC %d, GHL %d; want one each", len(ac.fake.Tasks()), len(ghl.fake.Tasks()))
	}
}

// countExact counts the requests to exactly path.
func countExact(reqs []crmfake.Request, method, path string) int {
	n := 0
	for _, r := range reqs {
		if r.Method == method && r.Path == path {
			n++
		}
	}
	return n
}

// A 429 from the CRM pauses the destination's limiter and holds the side effect for Retry-After without
// spending an attempt; the action then runs once.
func TestNativeSideEffectHeldOnA429(t *testing.T) {
	t.Parallel()
	e := newSyncEnv(t)
	nc := e.nativeCases()[crm.KindGoHighLevel]()
	c := e.contact("busy@example.com", "SQL")
	e.drainAll(nc.dest, 20*time.Second)
	remote := e.remoteID(nc.dest, c.ID)
	row := e.ruleSideEffect(c, crm.ActionEnrollWorkflow, map[string]string{"workflow": "wf-1"})
	nc.fake.FailNext(crmfake.Response{Method: "POST", Path: "/contacts/" + remote + "/workflow/wf-1", Status: 429,
		Header: map[string][]string{"Retry-After": {"1"}}, Body: `{"statusCode":429,"message":"Too many requests"}`})
	relay := e.sideEffectRelay()
	if _, err := relay.Deliver(e.ctx); err != nil {
		t.Fatal(err)
	}
	got := e.outboxRow(row.ID)
	if got.Status != models.OutboxPending || got.Attempts != 0 || !got.NextAttemptAt.After(time.Now()) {
		t.Fatalf("after a 429: row %s attempts %d next %s, want pending, uncounted, due after Retry-After", got.Status, got.Attempts, got.NextAttemptAt)
	}
	got = e.deliverUntil(relay, row.ID, func(r models.OutboxRow) bool { return r.Status != models.OutboxPending })
	if got.Status != models.OutboxSent || got.Attempts != 1 || !slices.Equal(nc.fake.Enrolments(remote), []string{"wf-1"}) {
		t.Errorf("row %s attempts %d, enrolments %v; want sent at the first counted attempt, [wf-1]", got.Status, got.Attempts, nc.fake.Enrolments(remote))
	}
}

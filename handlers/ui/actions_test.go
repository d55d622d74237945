package ui_test

import (
	"bytes"
	"context"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/leadgate/leadgate/handlers/handlerstest"
	"github.com/leadgate/leadgate/ingest/signature"
	"github.com/leadgate/leadgate/models"
)

// uiMutation is one state-changing request of the web app and the least role it needs.
type uiMutation struct {
	method, path string
	form         url.Values
	need         string
}

// uiMutations lists every UI action; {src}, {tok} and {user} are filled in.
func uiMutations(src, tok, user int64) []uiMutation {
	s := "/w/default/sources/" + strconv.FormatInt(src, 10)
	return []uiMutation{
		{"POST", "/w/default/sources", url.Values{"name": {"X"}, "kind": {"standard-webhooks"}}, models.RoleEditor},
		{"GET", "/w/default/sources/new", nil, models.RoleEditor},
		{"GET", "/w/default/sources/stage-row", nil, models.RoleEditor},
		{"POST", s, url.Values{"name": {"Renamed"}}, models.RoleEditor},
		{"POST", s + "/enabled", url.Values{"enabled": {"false"}}, models.RoleEditor},
		{"POST", s + "/rotate", nil, models.RoleEditor},
		{"POST", s + "/delete", nil, models.RoleEditor},
		{"POST", "/workspaces", url.Values{"slug": {"rbac"}, "name": {"RBAC"}}, models.RoleAdmin},
		{"POST", "/workspaces/default/rename", url.Values{"name": {"Hijacked"}}, models.RoleAdmin},
		{"POST", "/workspaces/default/archive", url.Values{"archived": {"true"}}, models.RoleAdmin},
		{"GET", "/tokens", nil, models.RoleAdmin},
		{"POST", "/tokens", url.Values{"name": {"t"}, "role": {"admin"}}, models.RoleAdmin},
		{"POST", "/tokens/" + strconv.FormatInt(tok, 10) + "/revoke", nil, models.RoleAdmin},
		{"GET", "/users", nil, models.RoleAdmin},
		{"POST", "/users", url.Values{"email": {"new@example.com"}, "role": {"admin"}}, models.RoleAdmin},
		{"POST", "/users/" + strconv.FormatInt(user, 10) + "/disabled", url.Values{"disabled": {"true"}}, models.RoleAdmin},
	}
}

func TestUIRolesAreEnforcedOnEveryAction(t *testing.T) {
	t.Parallel()
	e := handlerstest.NewEnv(t)
	ctx := context.Background()
	src := models.Source{WorkspaceID: e.WS.ID, Name: "Seed", Kind: "standard-webhooks", SecretEnc: handlerstest.Seal(t, e, "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw")}
	if err := e.Store.SourceCreate(ctx, &src); err != nil {
		t.Fatal(err)
	}
	tok, _, err := e.Store.TokenCreate(ctx, "seed", models.RoleViewer)
	if err != nil {
		t.Fatal(err)
	}
	victim := e.User("victim@example.com", models.RoleViewer)
	before := len(e.AuditActions())

	for _, role := range []string{models.RoleViewer, models.RoleEditor} {
		c := e.SignedIn(role)
		c.Get("/w/default/")
		for _, m := range uiMutations(src.ID, tok.ID, victim.ID) {
			if models.RoleAtLeast(role, m.need) {
				continue
			}
			var res handlerstest.Response
			if m.method == "GET" {
				res = c.Get(m.path)
			} else {
				res = c.Post(m.path, m.form)
			}
			handlerstest.ExpectStatus(t, role+" "+m.method+" "+m.path, res, http.StatusForbidden)
			handlerstest.ExpectBody(t, role+" "+m.method+" "+m.path, res, "Your role does not allow this action")
		}
	}
	if after := len(e.AuditActions()); after != before {
		t.Fatalf("forbidden requests changed something: audit grew from %d to %d entries", before, after)
	}
	if got, _ := e.Store.SourceGet(ctx, e.WS.ID, src.ID); got.Name != "Seed" || !got.Enabled || got.DeletedAt != nil {
		t.Fatalf("source changed by forbidden requests: %+v", got)
	}
}

// TestUIEveryActionIsAudited walks through every UI action as an admin and
// checks each one lands in the audit history, in the page as well as the table.
func TestUIEveryActionIsAudited(t *testing.T) {
	t.Parallel()
	e := handlerstest.NewEnv(t)
	ctx := context.Background()
	c := e.SignedIn(models.RoleAdmin)
	c.Get("/w/default/")

	// Sources.
	res := c.Post("/w/default/sources", url.Values{"name": {"Web form"}, "kind": {"standard-webhooks"}, "channel": {"web_form"},
		"default_region": {"us"}, "stage_event": {"form_submitted", ""}, "stage_name": {"Discovered", ""}})
	handlerstest.ExpectStatus(t, "create source", res, http.StatusCreated)
	handlerstest.ExpectBody(t, "create source", res, "http://localhost:8080/hooks/src_", "whsec_")
	secret := regexp.MustCompile(`data-testid="secret">(whsec_[^<]+)<`).FindStringSubmatch(res.Body)
	if secret == nil {
		t.Fatalf("secret not shown after creation: %.500s", res.Body)
	}
	list, _ := e.Store.SourceList(ctx, e.WS.ID)
	if len(list) != 1 || list[0].Config.EventStages["form_submitted"] != "Discovered" || list[0].Config.DefaultRegion != "US" {
		t.Fatalf("stored source %+v", list)
	}
	src := list[0]
	sp := "/w/default/sources/" + strconv.FormatInt(src.ID, 10)
	for _, page := range []string{"/w/default/sources", sp} {
		res := c.Get(page)
		handlerstest.ExpectBody(t, page, res, "/hooks/"+src.Token)
		if strings.Contains(res.Body, secret[1]) {
			t.Fatalf("%s shows the secret again", page)
		}
	}
	steps := []struct {
		action string
		res    func() handlerstest.Response
		status int
	}{
		{"source.update", func() handlerstest.Response {
			return c.Post(sp, url.Values{"name": {"Website form"}, "channel": {"web"}, "default_region": {"DE"},
				"stage_event": {"form_submitted", "call_booked"}, "stage_name": {"Engaged", "SQL"}})
		}, http.StatusSeeOther},
		{"source.disable", func() handlerstest.Response { return c.Post(sp+"/enabled", url.Values{"enabled": {"false"}}) }, http.StatusSeeOther},
		{"source.enable", func() handlerstest.Response { return c.Post(sp+"/enabled", url.Values{"enabled": {"true"}}) }, http.StatusSeeOther},
		{"source.rotate_secret", func() handlerstest.Response { return c.Post(sp+"/rotate", nil) }, http.StatusOK},
		{"workspace.create", func() handlerstest.Response {
			return c.Post("/workspaces", url.Values{"slug": {"acme"}, "name": {"Acme"}})
		}, http.StatusSeeOther},
		{"workspace.rename", func() handlerstest.Response {
			return c.Post("/workspaces/acme/rename", url.Values{"name": {"Acme Corp"}})
		}, http.StatusSeeOther},
		{"workspace.archive", func() handlerstest.Response {
			return c.Post("/workspaces/acme/archive", url.Values{"archived": {"true"}})
		}, http.StatusSeeOther},
		{"workspace.restore", func() handlerstest.Response {
			return c.Post("/workspaces/acme/archive", url.Values{"archived": {"false"}})
		}, http.StatusSeeOther},
		{"token.create", func() handlerstest.Response { return c.Post("/tokens", url.Values{"name": {"ci"}, "role": {"editor"}}) }, http.StatusCreated},
		{"token.revoke", func() handlerstest.Response {
			toks, _ := e.Store.TokenList(ctx)
			return c.Post("/tokens/"+strconv.FormatInt(toks[0].ID, 10)+"/revoke", nil)
		}, http.StatusSeeOther},
		{"user.create", func() handlerstest.Response {
			return c.Post("/users", url.Values{"email": {"newbie@example.com"}, "role": {"editor"}})
		}, http.StatusCreated},
		{"user.disable", func() handlerstest.Response {
			return c.Post("/users/"+uiUserID(t, e, "newbie@example.com")+"/disabled", url.Values{"disabled": {"true"}})
		}, http.StatusSeeOther},
		{"user.enable", func() handlerstest.Response {
			return c.Post("/users/"+uiUserID(t, e, "newbie@example.com")+"/disabled", url.Values{"disabled": {"false"}})
		}, http.StatusSeeOther},
		{"source.delete", func() handlerstest.Response { return c.Post(sp+"/delete", nil) }, http.StatusSeeOther},
	}
	for _, s := range steps {
		res := s.res()
		handlerstest.ExpectStatus(t, s.action, res, s.status)
		if got := e.AuditActions(); len(got) == 0 || got[0] != s.action {
			t.Fatalf("%s: newest audit entry is %v", s.action, got[:min(len(got), 1)])
		}
	}

	got, _ := e.Store.SourceGet(ctx, e.WS.ID, src.ID)
	if got.DeletedAt == nil || got.Config.EventStages["call_booked"] != "SQL" || got.Name != "Website form" || got.PreviousSecretUntil == nil {
		t.Fatalf("source after the walk-through: %+v", got)
	}

	page := c.Get("/w/default/audit")
	handlerstest.ExpectStatus(t, "audit page", page, http.StatusOK)
	for _, a := range []string{"source.create", "source.update", "source.disable", "source.enable", "source.rotate_secret", "source.delete",
		"token.create", "token.revoke", "user.create", "user.disable", "user.enable"} {
		handlerstest.ExpectBody(t, "audit page", page, `data-action="`+a+`"`)
	}
	// The update's diff names the changed mapping and the old and new values.
	handlerstest.ExpectBody(t, "audit diff", page, "config.event_stages.call_booked", "config.event_stages.form_submitted", "&#34;Discovered&#34;", "&#34;Engaged&#34;")
	acme := c.Get("/w/acme/audit")
	for _, a := range []string{"workspace.create", "workspace.rename", "workspace.archive", "workspace.restore"} {
		handlerstest.ExpectBody(t, "acme audit page", acme, `data-action="`+a+`"`)
	}
	// Actors are the signed-in user.
	entries, _ := e.Store.AuditList(ctx, 0, models.Page{Limit: 1})
	if !strings.HasPrefix(entries[0].Actor, "user:admin-") {
		t.Fatalf("actor %q, want the signed-in user", entries[0].Actor)
	}
}

func uiUserID(t *testing.T, e *handlerstest.Env, email string) string {
	t.Helper()
	users, err := e.Store.UserList(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for _, u := range users {
		if u.Email == email {
			return strconv.FormatInt(u.ID, 10)
		}
	}
	t.Fatalf("no user %s", email)
	return ""
}

func TestUIFormsShowErrorsInline(t *testing.T) {
	t.Parallel()
	e := handlerstest.NewEnv(t)
	c := e.SignedIn(models.RoleAdmin)
	c.Get("/w/default/sources/new")
	cases := []struct {
		name  string
		path  string
		form  url.Values
		field string
	}{
		{"source without a name", "/w/default/sources", url.Values{"kind": {"standard-webhooks"}}, "name"},
		{"unknown kind", "/w/default/sources", url.Values{"name": {"A"}, "kind": {"carrier-pigeon"}}, "kind"},
		{"provider kind without its secret", "/w/default/sources", url.Values{"name": {"A"}, "kind": {"stripe"}}, "secret"},
		{"bad phone region", "/w/default/sources", url.Values{"name": {"A"}, "kind": {"hmac"}, "default_region": {"XX"}}, "default_region"},
		{"half a mapping row", "/w/default/sources", url.Values{"name": {"A"}, "kind": {"hmac"}, "stage_event": {"x"}, "stage_name": {""}}, "event_stages"},
		{"bad workspace slug", "/workspaces", url.Values{"slug": {"Bad Slug"}, "name": {"B"}}, "slug"},
		{"taken workspace slug", "/workspaces", url.Values{"slug": {"default"}, "name": {"B"}}, "slug"},
		{"token without a name", "/tokens", url.Values{"role": {"viewer"}}, "name"},
		{"user with a bad email", "/users", url.Values{"email": {"nope"}, "role": {"viewer"}}, "email"},
	}
	for _, tc := range cases {
		res := c.Post(tc.path, tc.form)
		handlerstest.ExpectStatus(t, tc.name, res, http.StatusUnprocessableEntity)
		handlerstest.ExpectBody(t, tc.name, res, `id="err-`+tc.field+`"`, `role="alert"`)
	}
	if list, _ := e.Store.SourceList(context.Background(), e.WS.ID); len(list) != 0 {
		t.Fatalf("invalid forms created %d sources", len(list))
	}
}

// TestUIPipelinePages drives a signed webhook into a source created in the UI
// and follows it through the dashboard, its htmx fragment and the explorer.
func TestUIPipelinePages(t *testing.T) {
	t.Parallel()
	e := handlerstest.NewEnv(t)
	ctx := context.Background()
	c := e.SignedIn(models.RoleEditor)

	empty := c.Get("/w/default/")
	handlerstest.ExpectBody(t, "empty dashboard", empty, `data-testid="empty-state"`, "Create your first source")
	handlerstest.ExpectBody(t, "empty events", c.Get("/w/default/events"), `data-testid="empty-state"`, "Create a source first")

	res := c.Post("/w/default/sources", url.Values{"name": {"Landing page"}, "kind": {"standard-webhooks"}})
	handlerstest.ExpectStatus(t, "create source", res, http.StatusCreated)
	secret := regexp.MustCompile(`data-testid="secret">(whsec_[^<]+)<`).FindStringSubmatch(res.Body)[1]
	list, _ := e.Store.SourceList(ctx, e.WS.ID)
	src := list[0]

	body := []byte(`{"event_type":"form_submitted","email":"Jane.Doe@Example.com","first_name":"jane"}`)
	for range 2 { // the second delivery is a retry: a duplicate
		req := signature.Request{Method: "POST", URL: "http://localhost:8080/hooks/" + src.Token, Header: http.Header{}, Body: body}
		if err := signature.Sign(src.Kind, signature.SignConfig{Secret: secret, DeliveryID: "msg_1"}, &req, time.Now()); err != nil {
			t.Fatal(err)
		}
		hreq, _ := http.NewRequest(http.MethodPost, e.Srv.URL+"/hooks/"+src.Token, bytes.NewReader(body))
		hreq.Header = req.Header
		hreq.Header.Set("Content-Type", "application/json")
		hres, err := http.DefaultClient.Do(hreq)
		if err != nil || hres.StatusCode != http.StatusOK {
			t.Fatalf("webhook: %v %v", err, hres)
		}
		hres.Body.Close()
	}

	dash := c.Get("/w/default/")
	handlerstest.ExpectStatus(t, "dashboard", dash, http.StatusOK)
	handlerstest.ExpectBody(t, "dashboard", dash, `<html`, `data-testid="kpi-received">2<`, `data-testid="kpi-duplicate-rate">50.0%<`,
		`data-testid="rate-chart"`, "<polyline", "Landing page", `hx-get="/w/default/health"`, `hx-trigger="every 10s"`)

	frag := c.Get("/w/default/health", "HX-Request", "true")
	handlerstest.ExpectStatus(t, "health fragment", frag, http.StatusOK)
	if strings.Contains(frag.Body, "<html") || !strings.HasPrefix(strings.TrimSpace(frag.Body), `<section id="health"`) {
		t.Fatalf("health fragment is not a fragment: %.200s", frag.Body)
	}
	handlerstest.ExpectBody(t, "health fragment", frag, `data-testid="counter-accepted"`, `hx-trigger="every 10s"`)

	// Events explorer: filters, keyset pages, payload view.
	events, _ := e.Store.EventList(ctx, models.EventFilter{WorkspaceID: e.WS.ID}, models.Page{Limit: 10})
	if len(events) != 1 {
		t.Fatalf("want 1 stored event, got %d", len(events))
	}
	first := events[0].ID
	for range 52 {
		e.Event(src, "call_booked", models.EventApplied, `{"n":1}`)
	}
	page1 := c.Get("/w/default/events")
	handlerstest.ExpectBody(t, "events page 1", page1, `data-testid="next-page"`, "call_booked")
	next := regexp.MustCompile(`href="(/w/default/events\?cursor=[^"]+)" data-testid="next-page"`).FindStringSubmatch(page1.Body)
	if next == nil {
		t.Fatalf("no next-page link: %.300s", page1.Body)
	}
	page2 := c.Get(strings.ReplaceAll(next[1], "&amp;", "&"))
	handlerstest.ExpectBody(t, "events page 2", page2, first, "← Newest")
	if strings.Contains(page2.Body, `data-testid="next-page"`) {
		t.Fatal("page 2 of 53 events offers a third page")
	}
	filtered := c.Get("/w/default/events?status=applied&source=" + strconv.FormatInt(src.ID, 10))
	if strings.Contains(filtered.Body, first) {
		t.Fatal("status=applied shows the pending event")
	}
	detail := c.Get("/w/default/events/"+first, "HX-Request", "true")
	handlerstest.ExpectStatus(t, "event fragment", detail, http.StatusOK)
	if strings.Contains(detail.Body, "<html") {
		t.Fatal("event fragment rendered the whole page")
	}
	handlerstest.ExpectBody(t, "event fragment", detail, `data-testid="payload"`, "&#34;event_type&#34;: &#34;form_submitted&#34;", "jane.doe@example.com")
	handlerstest.ExpectBody(t, "event page", c.Get("/w/default/events/"+first), "<html", `data-testid="event-detail"`)
	handlerstest.ExpectStatus(t, "unknown event", c.Get("/w/default/events/not-a-uuid"), http.StatusNotFound)

	frag = c.Get("/w/default/stage-row-does-not-exist")
	handlerstest.ExpectStatus(t, "unknown page", frag, http.StatusNotFound)
	row := c.Get("/w/default/sources/stage-row", "HX-Request", "true")
	handlerstest.ExpectBody(t, "stage row fragment", row, `name="stage_event"`)
	if strings.Contains(row.Body, "<html") {
		t.Fatal("stage row is not a fragment")
	}
}

func TestUIWorkspaces(t *testing.T) {
	t.Parallel()
	e := handlerstest.NewEnv(t)
	admin := e.SignedIn(models.RoleAdmin)
	admin.Get("/workspaces")
	handlerstest.ExpectRedirect(t, "create", admin.Post("/workspaces", url.Values{"slug": {"client-a"}, "name": {"Client A"}}), "/w/client-a/")
	res := admin.Get("/w/client-a/")
	handlerstest.ExpectBody(t, "new workspace dashboard", res, "Client A", `href="/w/default/"`, "Workspace Client A created")

	viewer := e.SignedIn(models.RoleViewer)
	list := viewer.Get("/workspaces")
	handlerstest.ExpectBody(t, "viewer list", list, "Client A")
	if strings.Contains(list.Body, `data-testid="workspace-form"`) {
		t.Fatal("viewer sees the create form")
	}
	handlerstest.ExpectStatus(t, "default cannot be archived", admin.Post("/workspaces/default/archive", url.Values{"archived": {"true"}}), http.StatusSeeOther)
	if ws, _ := e.Store.WorkspaceBySlug(context.Background(), "default"); ws.ArchivedAt != nil {
		t.Fatal("default workspace was archived")
	}
	admin.Post("/workspaces/client-a/archive", url.Values{"archived": {"true"}})
	handlerstest.ExpectStatus(t, "archived workspace pages", admin.Get("/w/client-a/"), http.StatusNotFound)
	handlerstest.ExpectRedirect(t, "home after archive", admin.Get("/"), "/w/default/")
}

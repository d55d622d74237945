package handlers_test

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
	e := newUIEnv(t)
	ctx := context.Background()
	src := models.Source{WorkspaceID: e.ws.ID, Name: "Seed", Kind: "standard-webhooks", SecretEnc: uiSeal(t, e, "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw")}
	if err := e.store.SourceCreate(ctx, &src); err != nil {
		t.Fatal(err)
	}
	tok, _, err := e.store.TokenCreate(ctx, "seed", models.RoleViewer)
	if err != nil {
		t.Fatal(err)
	}
	victim := e.user("victim@example.com", models.RoleViewer)
	before := len(e.auditActions())

	for _, role := range []string{models.RoleViewer, models.RoleEditor} {
		c := e.signedIn(role)
		c.get("/w/default/")
		for _, m := range uiMutations(src.ID, tok.ID, victim.ID) {
			if models.RoleAtLeast(role, m.need) {
				continue
			}
			var res uiResponse
			if m.method == "GET" {
				res = c.get(m.path)
			} else {
				res = c.post(m.path, m.form)
			}
			expectStatus(t, role+" "+m.method+" "+m.path, res, http.StatusForbidden)
			expectBody(t, role+" "+m.method+" "+m.path, res, "Your role does not allow this action")
		}
	}
	if after := len(e.auditActions()); after != before {
		t.Fatalf("forbidden requests changed something: audit grew from %d to %d entries", before, after)
	}
	if got, _ := e.store.SourceGet(ctx, e.ws.ID, src.ID); got.Name != "Seed" || !got.Enabled || got.DeletedAt != nil {
		t.Fatalf("source changed by forbidden requests: %+v", got)
	}
}

// TestUIEveryActionIsAudited walks through every UI action as an admin and
// checks each one lands in the audit history, in the page as well as the table.
func TestUIEveryActionIsAudited(t *testing.T) {
	t.Parallel()
	e := newUIEnv(t)
	ctx := context.Background()
	c := e.signedIn(models.RoleAdmin)
	c.get("/w/default/")

	// Sources.
	res := c.post("/w/default/sources", url.Values{"name": {"Web form"}, "kind": {"standard-webhooks"}, "channel": {"web_form"},
		"default_region": {"us"}, "stage_event": {"form_submitted", ""}, "stage_name": {"Discovered", ""}})
	expectStatus(t, "create source", res, http.StatusCreated)
	expectBody(t, "create source", res, "http://localhost:8080/hooks/src_", "whsec_")
	secret := regexp.MustCompile(`data-testid="secret">(whsec_[^<]+)<`).FindStringSubmatch(res.body)
	if secret == nil {
		t.Fatalf("secret not shown after creation: %.500s", res.body)
	}
	list, _ := e.store.SourceList(ctx, e.ws.ID)
	if len(list) != 1 || list[0].Config.EventStages["form_submitted"] != "Discovered" || list[0].Config.DefaultRegion != "US" {
		t.Fatalf("stored source %+v", list)
	}
	src := list[0]
	sp := "/w/default/sources/" + strconv.FormatInt(src.ID, 10)
	for _, page := range []string{"/w/default/sources", sp} {
		res := c.get(page)
		expectBody(t, page, res, "/hooks/"+src.Token)
		if strings.Contains(res.body, secret[1]) {
			t.Fatalf("%s shows the secret again", page)
		}
	}
	steps := []struct {
		action string
		res    func() uiResponse
		status int
	}{
		{"source.update", func() uiResponse {
			return c.post(sp, url.Values{"name": {"Website form"}, "channel": {"web"}, "default_region": {"DE"},
				"stage_event": {"form_submitted", "call_booked"}, "stage_name": {"Engaged", "SQL"}})
		}, http.StatusSeeOther},
		{"source.disable", func() uiResponse { return c.post(sp+"/enabled", url.Values{"enabled": {"false"}}) }, http.StatusSeeOther},
		{"source.enable", func() uiResponse { return c.post(sp+"/enabled", url.Values{"enabled": {"true"}}) }, http.StatusSeeOther},
		{"source.rotate_secret", func() uiResponse { return c.post(sp+"/rotate", nil) }, http.StatusOK},
		{"workspace.create", func() uiResponse {
			return c.post("/workspaces", url.Values{"slug": {"acme"}, "name": {"Acme"}})
		}, http.StatusSeeOther},
		{"workspace.rename", func() uiResponse {
			return c.post("/workspaces/acme/rename", url.Values{"name": {"Acme Corp"}})
		}, http.StatusSeeOther},
		{"workspace.archive", func() uiResponse {
			return c.post("/workspaces/acme/archive", url.Values{"archived": {"true"}})
		}, http.StatusSeeOther},
		{"workspace.restore", func() uiResponse {
			return c.post("/workspaces/acme/archive", url.Values{"archived": {"false"}})
		}, http.StatusSeeOther},
		{"token.create", func() uiResponse { return c.post("/tokens", url.Values{"name": {"ci"}, "role": {"editor"}}) }, http.StatusCreated},
		{"token.revoke", func() uiResponse {
			toks, _ := e.store.TokenList(ctx)
			return c.post("/tokens/"+strconv.FormatInt(toks[0].ID, 10)+"/revoke", nil)
		}, http.StatusSeeOther},
		{"user.create", func() uiResponse {
			return c.post("/users", url.Values{"email": {"newbie@example.com"}, "role": {"editor"}})
		}, http.StatusCreated},
		{"user.disable", func() uiResponse {
			return c.post("/users/"+uiUserID(t, e, "newbie@example.com")+"/disabled", url.Values{"disabled": {"true"}})
		}, http.StatusSeeOther},
		{"user.enable", func() uiResponse {
			return c.post("/users/"+uiUserID(t, e, "newbie@example.com")+"/disabled", url.Values{"disabled": {"false"}})
		}, http.StatusSeeOther},
		{"source.delete", func() uiResponse { return c.post(sp+"/delete", nil) }, http.StatusSeeOther},
	}
	for _, s := range steps {
		res := s.res()
		expectStatus(t, s.action, res, s.status)
		if got := e.auditActions(); len(got) == 0 || got[0] != s.action {
			t.Fatalf("%s: newest audit entry is %v", s.action, got[:min(len(got), 1)])
		}
	}

	got, _ := e.store.SourceGet(ctx, e.ws.ID, src.ID)
	if got.DeletedAt == nil || got.Config.EventStages["call_booked"] != "SQL" || got.Name != "Website form" || got.PreviousSecretUntil == nil {
		t.Fatalf("source after the walk-through: %+v", got)
	}

	page := c.get("/w/default/audit")
	expectStatus(t, "audit page", page, http.StatusOK)
	for _, a := range []string{"source.create", "source.update", "source.disable", "source.enable", "source.rotate_secret", "source.delete",
		"token.create", "token.revoke", "user.create", "user.disable", "user.enable"} {
		expectBody(t, "audit page", page, `data-action="`+a+`"`)
	}
	// The update's diff names the changed mapping and the old and new values.
	expectBody(t, "audit diff", page, "config.event_stages.call_booked", "config.event_stages.form_submitted", "&#34;Discovered&#34;", "&#34;Engaged&#34;")
	acme := c.get("/w/acme/audit")
	for _, a := range []string{"workspace.create", "workspace.rename", "workspace.archive", "workspace.restore"} {
		expectBody(t, "acme audit page", acme, `data-action="`+a+`"`)
	}
	// Actors are the signed-in user.
	entries, _ := e.store.AuditList(ctx, 0, models.Page{Limit: 1})
	if !strings.HasPrefix(entries[0].Actor, "user:admin-") {
		t.Fatalf("actor %q, want the signed-in user", entries[0].Actor)
	}
}

func uiUserID(t *testing.T, e *uiEnv, email string) string {
	t.Helper()
	users, err := e.store.UserList(context.Background())
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
	e := newUIEnv(t)
	c := e.signedIn(models.RoleAdmin)
	c.get("/w/default/sources/new")
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
		res := c.post(tc.path, tc.form)
		expectStatus(t, tc.name, res, http.StatusUnprocessableEntity)
		expectBody(t, tc.name, res, `id="err-`+tc.field+`"`, `role="alert"`)
	}
	if list, _ := e.store.SourceList(context.Background(), e.ws.ID); len(list) != 0 {
		t.Fatalf("invalid forms created %d sources", len(list))
	}
}

// TestUIPipelinePages drives a signed webhook into a source created in the UI
// and follows it through the dashboard, its htmx fragment and the explorer.
func TestUIPipelinePages(t *testing.T) {
	t.Parallel()
	e := newUIEnv(t)
	ctx := context.Background()
	c := e.signedIn(models.RoleEditor)

	empty := c.get("/w/default/")
	expectBody(t, "empty dashboard", empty, `data-testid="empty-state"`, "Create your first source")
	expectBody(t, "empty events", c.get("/w/default/events"), `data-testid="empty-state"`, "Create a source first")

	res := c.post("/w/default/sources", url.Values{"name": {"Landing page"}, "kind": {"standard-webhooks"}})
	expectStatus(t, "create source", res, http.StatusCreated)
	secret := regexp.MustCompile(`data-testid="secret">(whsec_[^<]+)<`).FindStringSubmatch(res.body)[1]
	list, _ := e.store.SourceList(ctx, e.ws.ID)
	src := list[0]

	body := []byte(`{"event_type":"form_submitted","email":"Jane.Doe@Example.com","first_name":"jane"}`)
	for range 2 { // the second delivery is a retry: a duplicate
		req := signature.Request{Method: "POST", URL: "http://localhost:8080/hooks/" + src.Token, Header: http.Header{}, Body: body}
		if err := signature.Sign(src.Kind, signature.SignConfig{Secret: secret, DeliveryID: "msg_1"}, &req, time.Now()); err != nil {
			t.Fatal(err)
		}
		hreq, _ := http.NewRequest(http.MethodPost, e.srv.URL+"/hooks/"+src.Token, bytes.NewReader(body))
		hreq.Header = req.Header
		hreq.Header.Set("Content-Type", "application/json")
		hres, err := http.DefaultClient.Do(hreq)
		if err != nil || hres.StatusCode != http.StatusOK {
			t.Fatalf("webhook: %v %v", err, hres)
		}
		hres.Body.Close()
	}

	dash := c.get("/w/default/")
	expectStatus(t, "dashboard", dash, http.StatusOK)
	expectBody(t, "dashboard", dash, `<html`, `data-testid="kpi-received">2<`, `data-testid="kpi-duplicate-rate">50.0%<`,
		`data-testid="rate-chart"`, "<polyline", "Landing page", `hx-get="/w/default/health"`, `hx-trigger="every 10s"`)

	frag := c.get("/w/default/health", "HX-Request", "true")
	expectStatus(t, "health fragment", frag, http.StatusOK)
	if strings.Contains(frag.body, "<html") || !strings.HasPrefix(strings.TrimSpace(frag.body), `<section id="health"`) {
		t.Fatalf("health fragment is not a fragment: %.200s", frag.body)
	}
	expectBody(t, "health fragment", frag, `data-testid="counter-accepted"`, `hx-trigger="every 10s"`)

	// Events explorer: filters, keyset pages, payload view.
	events, _ := e.store.EventList(ctx, models.EventFilter{WorkspaceID: e.ws.ID}, models.Page{Limit: 10})
	if len(events) != 1 {
		t.Fatalf("want 1 stored event, got %d", len(events))
	}
	first := events[0].ID
	for range 52 {
		e.event(src, "call_booked", models.EventApplied, `{"n":1}`)
	}
	page1 := c.get("/w/default/events")
	expectBody(t, "events page 1", page1, `data-testid="next-page"`, "call_booked")
	next := regexp.MustCompile(`href="(/w/default/events\?cursor=[^"]+)" data-testid="next-page"`).FindStringSubmatch(page1.body)
	if next == nil {
		t.Fatalf("no next-page link: %.300s", page1.body)
	}
	page2 := c.get(strings.ReplaceAll(next[1], "&amp;", "&"))
	expectBody(t, "events page 2", page2, first, "← Newest")
	if strings.Contains(page2.body, `data-testid="next-page"`) {
		t.Fatal("page 2 of 53 events offers a third page")
	}
	filtered := c.get("/w/default/events?status=applied&source=" + strconv.FormatInt(src.ID, 10))
	if strings.Contains(filtered.body, first) {
		t.Fatal("status=applied shows the pending event")
	}
	detail := c.get("/w/default/events/"+first, "HX-Request", "true")
	expectStatus(t, "event fragment", detail, http.StatusOK)
	if strings.Contains(detail.body, "<html") {
		t.Fatal("event fragment rendered the whole page")
	}
	expectBody(t, "event fragment", detail, `data-testid="payload"`, "&#34;event_type&#34;: &#34;form_submitted&#34;", "jane.doe@example.com")
	expectBody(t, "event page", c.get("/w/default/events/"+first), "<html", `data-testid="event-detail"`)
	expectStatus(t, "unknown event", c.get("/w/default/events/not-a-uuid"), http.StatusNotFound)

	frag = c.get("/w/default/stage-row-does-not-exist")
	expectStatus(t, "unknown page", frag, http.StatusNotFound)
	row := c.get("/w/default/sources/stage-row", "HX-Request", "true")
	expectBody(t, "stage row fragment", row, `name="stage_event"`)
	if strings.Contains(row.body, "<html") {
		t.Fatal("stage row is not a fragment")
	}
}

func TestUIWorkspaces(t *testing.T) {
	t.Parallel()
	e := newUIEnv(t)
	admin := e.signedIn(models.RoleAdmin)
	admin.get("/workspaces")
	expectRedirect(t, "create", admin.post("/workspaces", url.Values{"slug": {"client-a"}, "name": {"Client A"}}), "/w/client-a/")
	res := admin.get("/w/client-a/")
	expectBody(t, "new workspace dashboard", res, "Client A", `href="/w/default/"`, "Workspace Client A created")

	viewer := e.signedIn(models.RoleViewer)
	list := viewer.get("/workspaces")
	expectBody(t, "viewer list", list, "Client A")
	if strings.Contains(list.body, `data-testid="workspace-form"`) {
		t.Fatal("viewer sees the create form")
	}
	expectStatus(t, "default cannot be archived", admin.post("/workspaces/default/archive", url.Values{"archived": {"true"}}), http.StatusSeeOther)
	if ws, _ := e.store.WorkspaceBySlug(context.Background(), "default"); ws.ArchivedAt != nil {
		t.Fatal("default workspace was archived")
	}
	admin.post("/workspaces/client-a/archive", url.Values{"archived": {"true"}})
	expectStatus(t, "archived workspace pages", admin.get("/w/client-a/"), http.StatusNotFound)
	expectRedirect(t, "home after archive", admin.get("/"), "/w/default/")
}

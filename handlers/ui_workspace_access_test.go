package handlers_test

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"testing"

	"github.com/go-chi/chi/v5"

	"github.com/leadgate/leadgate/handlers"
	"github.com/leadgate/leadgate/internal/principal"
	"github.com/leadgate/leadgate/models"
)

// restrictedEnv has workspaces acme and beta besides default, an admin, and
// client@example.com (a global editor) restricted by the admin through the
// users page to acme as editor and beta as viewer.
type restrictedEnv struct {
	*uiEnv
	admin, client *uiClient
	member        models.User
	acme, beta    models.Workspace
}

func newRestrictedEnv(t *testing.T) restrictedEnv {
	t.Helper()
	e := newUIEnv(t)
	ctx := context.Background()
	acme, err := e.store.WorkspaceCreate(ctx, "acme", "Acme")
	if err != nil {
		t.Fatal(err)
	}
	beta, err := e.store.WorkspaceCreate(ctx, "beta", "Beta")
	if err != nil {
		t.Fatal(err)
	}
	user := e.user("client@example.com", models.RoleEditor)
	admin := e.signedIn(models.RoleAdmin)
	admin.get("/users")
	for _, g := range []struct{ ws, role string }{{"acme", models.RoleEditor}, {"beta", models.RoleViewer}} {
		res := admin.post(userPath(user, "/workspaces"), url.Values{"workspace": {g.ws}, "role": {g.role}})
		expectRedirect(t, "grant "+g.ws, res, "/users#workspace-access")
	}
	client := e.client()
	if res := client.login(user.Email, uiPassword); res.status != http.StatusSeeOther {
		t.Fatalf("client login: %d", res.status)
	}
	return restrictedEnv{uiEnv: e, admin: admin, client: client, member: user, acme: acme, beta: beta}
}

func userPath(u models.User, rest string) string {
	return "/users/" + strconv.FormatInt(u.ID, 10) + rest
}

func TestRestrictedUserOpensOnlyTheirWorkspaces(t *testing.T) {
	t.Parallel()
	e := newRestrictedEnv(t)
	c := e.client

	// The home page and the workspace list lead only to their workspaces.
	expectRedirect(t, "home", c.get("/"), "/w/acme/")
	list := c.get("/workspaces")
	expectStatus(t, "workspaces", list, http.StatusOK)
	expectBody(t, "workspaces", list, `href="/w/acme/"`, `href="/w/beta/"`)
	if strings.Contains(list.body, `href="/w/default/"`) {
		t.Fatalf("the workspace list offers default to a user restricted to acme and beta")
	}

	// The switcher lists acme and beta, never default.
	page := c.get("/w/acme/")
	expectStatus(t, "acme dashboard", page, http.StatusOK)
	expectBody(t, "switcher", page, `class="switcher-menu"`, `href="/w/acme/"`, `href="/w/beta/"`)
	if strings.Contains(page.body, `href="/w/default/"`) {
		t.Fatalf("the switcher offers default to a user restricted to acme and beta")
	}
	if strings.Contains(page.body, `href="/users"`) || strings.Contains(page.body, "Manage workspaces") {
		t.Fatalf("a non-admin sees instance admin links")
	}

	// Every page of another workspace is a 403 with a clear page.
	for _, p := range []string{"/w/default/", "/w/default/events", "/w/default/sources", "/w/default/dead-letters",
		"/w/default/audit", "/w/default/guards", "/w/default/contacts", "/w/default/sales", "/w/default/health"} {
		res := c.get(p)
		expectStatus(t, "restricted GET "+p, res, http.StatusForbidden)
		expectBody(t, "restricted GET "+p, res, "No access to this workspace")
	}
	// A slug that does not exist looks the same, so workspaces cannot be probed.
	res := c.get("/w/nowhere/")
	expectStatus(t, "restricted GET of an unknown slug", res, http.StatusForbidden)
	expectBody(t, "restricted GET of an unknown slug", res, "No access to this workspace")
}

func TestRestrictedUserCannotChangeOtherWorkspaces(t *testing.T) {
	t.Parallel()
	e := newRestrictedEnv(t)
	c := e.client
	c.get("/w/acme/")
	before := len(e.auditActions())
	muts := []struct {
		path string
		form url.Values
	}{
		{"/w/default/sources", url.Values{"name": {"X"}, "kind": {"standard-webhooks"}}},
		{"/w/default/guards/loop", url.Values{"breaker_max": {"3"}}},
		{"/w/default/guards/silence", url.Values{"metric": {"apply"}}},
		{"/w/default/stages", defaultRulesForm()},
		{"/w/default/destinations", url.Values{"name": {"S"}, "kind": {"sandbox"}}},
		{"/w/default/dead-letters/bulk", url.Values{"action": {"discard"}, "id": {"1"}}},
	}
	for _, m := range muts {
		res := c.post(m.path, m.form)
		expectStatus(t, "restricted POST "+m.path, res, http.StatusForbidden)
		expectBody(t, "restricted POST "+m.path, res, "No access to this workspace")
	}
	// Viewer where the membership says viewer, although the global role is editor.
	for _, m := range []struct {
		path string
		form url.Values
	}{
		{"/w/beta/sources", url.Values{"name": {"X"}, "kind": {"standard-webhooks"}}},
		{"/w/beta/guards/loop", url.Values{"breaker_max": {"3"}}},
		{"/w/beta/destinations", url.Values{"name": {"S"}, "kind": {"sandbox"}}},
	} {
		res := c.post(m.path, m.form)
		expectStatus(t, "beta viewer POST "+m.path, res, http.StatusForbidden)
		expectBody(t, "beta viewer POST "+m.path, res, "Your role does not allow this action")
	}
	expectStatus(t, "beta viewer reads guards", c.get("/w/beta/guards"), http.StatusOK)
	if after := len(e.auditActions()); after != before {
		t.Fatalf("forbidden requests changed something: audit grew by %d", after-before)
	}
	// Another workspace's records cannot be reached through an allowed one either.
	d := e.conflict(e.seedSource("Web form"), "ann@example.com")
	before = len(e.auditActions())
	dl := "/w/acme/dead-letters/" + strconv.FormatInt(d.ID, 10)
	expectStatus(t, "default's dead letter via acme", c.get(dl), http.StatusNotFound)
	expectStatus(t, "discard default's dead letter via acme", c.post(dl+"/discard", nil), http.StatusNotFound)
	if got, _ := e.store.DeadLetterGet(context.Background(), e.ws.ID, d.ID); got.Status != models.DeadLetterOpen || len(e.auditActions()) != before {
		t.Fatalf("a restricted user resolved another workspace's dead letter: %+v", got)
	}

	// Editor where the membership says editor.
	res := c.post("/w/acme/guards/loop", url.Values{"breaker_max": {"3"}})
	expectRedirect(t, "acme editor saves loop settings", res, "/w/acme/guards")
	if got := e.auditActions()[0]; got != "guards.loop.update" {
		t.Fatalf("acme save audited as %q", got)
	}
}

func TestWorkspaceMembershipActionsAreAudited(t *testing.T) {
	t.Parallel()
	e := newRestrictedEnv(t)
	a := e.admin
	// The grants made by newRestrictedEnv are in the history.
	if got := e.auditActions(); len(got) < 2 || got[0] != "user.workspace.grant" || got[1] != "user.workspace.grant" {
		t.Fatalf("grants audited as %v", got)
	}
	users := a.get("/users")
	expectBody(t, "users page", users, "Workspace access", "2 workspaces", `action="/users/`+strconv.FormatInt(e.member.ID, 10)+`/workspaces/beta/remove"`)

	// Changing the role is an update with before and after, shown in beta's audit history.
	res := a.post(userPath(e.member, "/workspaces"), url.Values{"workspace": {"beta"}, "role": {models.RoleEditor}})
	expectRedirect(t, "update beta", res, "/users#workspace-access")
	list, err := e.store.AuditList(context.Background(), e.beta.ID, models.Page{Limit: 1})
	if err != nil {
		t.Fatal(err)
	}
	if list[0].Action != "user.workspace.update" || !strings.Contains(string(list[0].Before), `"role": "viewer"`) ||
		!strings.Contains(string(list[0].After), `"role": "editor"`) {
		t.Fatalf("update audited as %s %s -> %s", list[0].Action, list[0].Before, list[0].After)
	}
	history := a.get("/w/beta/audit")
	expectBody(t, "beta audit", history, "user.workspace.update", "viewer", "editor")

	// Removing it is audited, and beta is closed to the client at once.
	res = a.post(userPath(e.member, "/workspaces/beta/remove"), nil)
	expectRedirect(t, "remove beta", res, "/users#workspace-access")
	if got := e.auditActions()[0]; got != "user.workspace.revoke" {
		t.Fatalf("remove audited as %q", got)
	}
	expectStatus(t, "client opens beta after removal", e.client.get("/w/beta/"), http.StatusForbidden)
	// Removing it again is a 404, not a second audit entry.
	expectStatus(t, "remove twice", a.post(userPath(e.member, "/workspaces/beta/remove"), nil), http.StatusNotFound)

	// Bad input is refused inline and changes nothing.
	before := len(e.auditActions())
	bad := []struct {
		form url.Values
		user models.User
		msg  string
	}{
		{url.Values{"workspace": {"nope"}, "role": {"viewer"}}, e.member, "Choose an active workspace."},
		{url.Values{"workspace": {"acme"}, "role": {"owner"}}, e.member, "Choose viewer, editor or admin."},
		{url.Values{"workspace": {"acme"}, "role": {"viewer"}}, e.user("boss@example.com", models.RoleAdmin), "Admins reach every workspace"},
	}
	for _, b := range bad {
		res := a.post(userPath(b.user, "/workspaces"), b.form)
		expectStatus(t, "bad membership "+b.msg, res, http.StatusUnprocessableEntity)
		expectBody(t, "bad membership "+b.msg, res, b.msg)
	}
	if after := len(e.auditActions()); after != before {
		t.Fatalf("refused membership forms were audited")
	}

	// Removing the last membership lifts the restriction (and says so).
	res = a.post(userPath(e.member, "/workspaces/acme/remove"), nil)
	expectRedirect(t, "remove acme", res, "/users#workspace-access")
	expectBody(t, "lifted", a.get("/users"), "act in every workspace as editor")
	expectStatus(t, "unrestricted client opens default", e.client.get("/w/default/"), http.StatusOK)
}

func TestWorkspaceMembershipNeedsAdminAndCSRF(t *testing.T) {
	t.Parallel()
	e := newRestrictedEnv(t)
	before := len(e.auditActions())
	editor := e.signedIn(models.RoleEditor)
	editor.get("/w/default/")
	for _, p := range []string{userPath(e.member, "/workspaces"), userPath(e.member, "/workspaces/acme/remove")} {
		res := editor.post(p, url.Values{"workspace": {"default"}, "role": {"admin"}})
		expectStatus(t, "editor "+p, res, http.StatusForbidden)
		res = e.admin.postRaw(p, url.Values{"workspace": {"default"}, "role": {"admin"}})
		expectStatus(t, "no csrf "+p, res, http.StatusForbidden)
		expectBody(t, "no csrf "+p, res, "This form has expired")
	}
	if after := len(e.auditActions()); after != before {
		t.Fatalf("refused requests were audited")
	}
}

func TestRestrictedUserSeesNoInstanceHistory(t *testing.T) {
	t.Parallel()
	e := newRestrictedEnv(t)
	e.admin.get("/tokens")
	expectStatus(t, "create token", e.admin.post("/tokens", url.Values{"name": {"other-client-script"}, "role": {"viewer"}}), http.StatusCreated)
	expectBody(t, "admin sees instance history", e.admin.get("/w/acme/audit"), "token.create")
	res := e.client.get("/w/acme/audit")
	expectStatus(t, "client audit", res, http.StatusOK)
	expectBody(t, "client audit", res, "user.workspace.grant")
	if strings.Contains(res.body, "token.create") {
		t.Fatalf("a restricted user sees instance-wide history")
	}
}

// The JSON API's workspace routes refuse a signed-in user restricted to other
// workspaces, and list only theirs; a token without a workspace scope is not
// restricted (scoped tokens: api_token_scope_test.go).
func TestAPIWorkspaceAccessForUsers(t *testing.T) {
	t.Parallel()
	e := newRestrictedEnv(t)
	api := &handlers.API{Store: e.store, Log: slog.New(slog.NewTextHandler(io.Discard, nil))}
	as := func(p principal.Principal) http.Handler {
		r := chi.NewRouter()
		r.Use(func(next http.Handler) http.Handler {
			return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
				next.ServeHTTP(w, req.WithContext(principal.With(req.Context(), p)))
			})
		})
		r.Get("/workspaces", api.ListWorkspaces)
		r.With(api.LoadWorkspace).Get("/workspaces/{ws}/role", func(w http.ResponseWriter, req *http.Request) {
			got, _ := principal.From(req.Context())
			_, _ = w.Write([]byte(got.Role))
		})
		return r
	}
	user := principal.Principal{Kind: "user", ID: e.member.ID, Name: e.member.Email, Role: models.RoleEditor}
	token := principal.Principal{Kind: "token", ID: 1, Name: "ci", Role: models.RoleViewer}
	cases := []struct {
		who    principal.Principal
		path   string
		status int
		body   string
	}{
		{user, "/workspaces/default/role", http.StatusForbidden, `"error":"no access to workspace default"`},
		{user, "/workspaces/acme/role", http.StatusOK, models.RoleEditor},
		{user, "/workspaces/beta/role", http.StatusOK, models.RoleViewer},
		{token, "/workspaces/default/role", http.StatusOK, models.RoleViewer},
	}
	for _, c := range cases {
		rec := httptest.NewRecorder()
		as(c.who).ServeHTTP(rec, httptest.NewRequest(http.MethodGet, c.path, nil))
		if rec.Code != c.status || !strings.Contains(rec.Body.String(), c.body) {
			t.Fatalf("%s %s: %d %s, want %d %s", c.who.Kind, c.path, rec.Code, rec.Body, c.status, c.body)
		}
	}
	for who, want := range map[principal.Principal][]string{user: {"acme", "beta"}, token: {"default", "acme", "beta"}} {
		rec := httptest.NewRecorder()
		as(who).ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/workspaces", nil))
		var out struct {
			Workspaces []struct{ Slug string } `json:"workspaces"`
		}
		if err := json.Unmarshal(rec.Body.Bytes(), &out); err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, w := range out.Workspaces {
			got = append(got, w.Slug)
		}
		if strings.Join(got, ",") != strings.Join(want, ",") {
			t.Fatalf("%s lists %v, want %v", who.Kind, got, want)
		}
	}
}

package ui_test

import (
	"context"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"

	"github.com/leadgate/leadgate/handlers/handlerstest"
	"github.com/leadgate/leadgate/models"
)

func TestRestrictedUserOpensOnlyTheirWorkspaces(t *testing.T) {
	t.Parallel()
	e := handlerstest.NewRestrictedEnv(t)
	c := e.MemberClient

	// The home page and the workspace list lead only to their workspaces.
	handlerstest.ExpectRedirect(t, "home", c.Get("/"), "/w/acme/")
	list := c.Get("/workspaces")
	handlerstest.ExpectStatus(t, "workspaces", list, http.StatusOK)
	handlerstest.ExpectBody(t, "workspaces", list, `href="/w/acme/"`, `href="/w/beta/"`)
	if strings.Contains(list.Body, `href="/w/default/"`) {
		t.Fatalf("the workspace list offers default to a user restricted to acme and beta")
	}

	// The switcher lists acme and beta, never default.
	page := c.Get("/w/acme/")
	handlerstest.ExpectStatus(t, "acme dashboard", page, http.StatusOK)
	handlerstest.ExpectBody(t, "switcher", page, `class="switcher-menu"`, `href="/w/acme/"`, `href="/w/beta/"`)
	if strings.Contains(page.Body, `href="/w/default/"`) {
		t.Fatalf("the switcher offers default to a user restricted to acme and beta")
	}
	if strings.Contains(page.Body, `href="/users"`) || strings.Contains(page.Body, "Manage workspaces") {
		t.Fatalf("a non-admin sees instance admin links")
	}

	// Every page of another workspace is a 403 with a clear page.
	for _, p := range []string{"/w/default/", "/w/default/events", "/w/default/sources", "/w/default/dead-letters",
		"/w/default/audit", "/w/default/guards", "/w/default/contacts", "/w/default/sales", "/w/default/health"} {
		res := c.Get(p)
		handlerstest.ExpectStatus(t, "restricted GET "+p, res, http.StatusForbidden)
		handlerstest.ExpectBody(t, "restricted GET "+p, res, "No access to this workspace")
	}
	// A slug that does not exist looks the same, so workspaces cannot be probed.
	res := c.Get("/w/nowhere/")
	handlerstest.ExpectStatus(t, "restricted GET of an unknown slug", res, http.StatusForbidden)
	handlerstest.ExpectBody(t, "restricted GET of an unknown slug", res, "No access to this workspace")
}

func TestRestrictedUserCannotChangeOtherWorkspaces(t *testing.T) {
	t.Parallel()
	e := handlerstest.NewRestrictedEnv(t)
	c := e.MemberClient
	c.Get("/w/acme/")
	before := len(e.AuditActions())
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
		res := c.Post(m.path, m.form)
		handlerstest.ExpectStatus(t, "restricted POST "+m.path, res, http.StatusForbidden)
		handlerstest.ExpectBody(t, "restricted POST "+m.path, res, "No access to this workspace")
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
		res := c.Post(m.path, m.form)
		handlerstest.ExpectStatus(t, "beta viewer POST "+m.path, res, http.StatusForbidden)
		handlerstest.ExpectBody(t, "beta viewer POST "+m.path, res, "Your role does not allow this action")
	}
	handlerstest.ExpectStatus(t, "beta viewer reads guards", c.Get("/w/beta/guards"), http.StatusOK)
	if after := len(e.AuditActions()); after != before {
		t.Fatalf("forbidden requests changed something: audit grew by %d", after-before)
	}
	// Another workspace's records cannot be reached through an allowed one either.
	d := e.Conflict(e.SeedSource("Web form"), "ann@example.com")
	before = len(e.AuditActions())
	dl := "/w/acme/dead-letters/" + strconv.FormatInt(d.ID, 10)
	handlerstest.ExpectStatus(t, "default's dead letter via acme", c.Get(dl), http.StatusNotFound)
	handlerstest.ExpectStatus(t, "discard default's dead letter via acme", c.Post(dl+"/discard", nil), http.StatusNotFound)
	if got, _ := e.Store.DeadLetterGet(context.Background(), e.WS.ID, d.ID); got.Status != models.DeadLetterOpen || len(e.AuditActions()) != before {
		t.Fatalf("a restricted user resolved another workspace's dead letter: %+v", got)
	}

	// Editor where the membership says editor.
	res := c.Post("/w/acme/guards/loop", url.Values{"breaker_max": {"3"}})
	handlerstest.ExpectRedirect(t, "acme editor saves loop settings", res, "/w/acme/guards")
	if got := e.AuditActions()[0]; got != "guards.loop.update" {
		t.Fatalf("acme save audited as %q", got)
	}
}

func TestWorkspaceMembershipActionsAreAudited(t *testing.T) {
	t.Parallel()
	e := handlerstest.NewRestrictedEnv(t)
	a := e.AdminClient
	// The grants made by newRestrictedEnv are in the history.
	if got := e.AuditActions(); len(got) < 2 || got[0] != "user.workspace.grant" || got[1] != "user.workspace.grant" {
		t.Fatalf("grants audited as %v", got)
	}
	users := a.Get("/users")
	handlerstest.ExpectBody(t, "users page", users, "Workspace access", "2 workspaces", `action="/users/`+strconv.FormatInt(e.Member.ID, 10)+`/workspaces/beta/remove"`)

	// Changing the role is an update with before and after, shown in beta's audit history.
	res := a.Post(handlerstest.UserPath(e.Member, "/workspaces"), url.Values{"workspace": {"beta"}, "role": {models.RoleEditor}})
	handlerstest.ExpectRedirect(t, "update beta", res, "/users#workspace-access")
	list, err := e.Store.AuditList(context.Background(), e.Beta.ID, models.Page{Limit: 1})
	if err != nil {
		t.Fatal(err)
	}
	if list[0].Action != "user.workspace.update" || !strings.Contains(string(list[0].Before), `"role": "viewer"`) ||
		!strings.Contains(string(list[0].After), `"role": "editor"`) {
		t.Fatalf("update audited as %s %s -> %s", list[0].Action, list[0].Before, list[0].After)
	}
	history := a.Get("/w/beta/audit")
	handlerstest.ExpectBody(t, "beta audit", history, "user.workspace.update", "viewer", "editor")

	// Removing it is audited, and beta is closed to the client at once.
	res = a.Post(handlerstest.UserPath(e.Member, "/workspaces/beta/remove"), nil)
	handlerstest.ExpectRedirect(t, "remove beta", res, "/users#workspace-access")
	if got := e.AuditActions()[0]; got != "user.workspace.revoke" {
		t.Fatalf("remove audited as %q", got)
	}
	handlerstest.ExpectStatus(t, "client opens beta after removal", e.MemberClient.Get("/w/beta/"), http.StatusForbidden)
	// Removing it again is a 404, not a second audit entry.
	handlerstest.ExpectStatus(t, "remove twice", a.Post(handlerstest.UserPath(e.Member, "/workspaces/beta/remove"), nil), http.StatusNotFound)

	// Bad input is refused inline and changes nothing.
	before := len(e.AuditActions())
	bad := []struct {
		form url.Values
		user models.User
		msg  string
	}{
		{url.Values{"workspace": {"nope"}, "role": {"viewer"}}, e.Member, "Choose an active workspace."},
		{url.Values{"workspace": {"acme"}, "role": {"owner"}}, e.Member, "Choose viewer, editor or admin."},
		{url.Values{"workspace": {"acme"}, "role": {"viewer"}}, e.User("boss@example.com", models.RoleAdmin), "Admins reach every workspace"},
	}
	for _, b := range bad {
		res := a.Post(handlerstest.UserPath(b.user, "/workspaces"), b.form)
		handlerstest.ExpectStatus(t, "bad membership "+b.msg, res, http.StatusUnprocessableEntity)
		handlerstest.ExpectBody(t, "bad membership "+b.msg, res, b.msg)
	}
	if after := len(e.AuditActions()); after != before {
		t.Fatalf("refused membership forms were audited")
	}

	// Removing the last membership lifts the restriction (and says so).
	res = a.Post(handlerstest.UserPath(e.Member, "/workspaces/acme/remove"), nil)
	handlerstest.ExpectRedirect(t, "remove acme", res, "/users#workspace-access")
	handlerstest.ExpectBody(t, "lifted", a.Get("/users"), "act in every workspace as editor")
	handlerstest.ExpectStatus(t, "unrestricted client opens default", e.MemberClient.Get("/w/default/"), http.StatusOK)
}

func TestWorkspaceMembershipNeedsAdminAndCSRF(t *testing.T) {
	t.Parallel()
	e := handlerstest.NewRestrictedEnv(t)
	before := len(e.AuditActions())
	editor := e.SignedIn(models.RoleEditor)
	editor.Get("/w/default/")
	for _, p := range []string{handlerstest.UserPath(e.Member, "/workspaces"), handlerstest.UserPath(e.Member, "/workspaces/acme/remove")} {
		res := editor.Post(p, url.Values{"workspace": {"default"}, "role": {"admin"}})
		handlerstest.ExpectStatus(t, "editor "+p, res, http.StatusForbidden)
		res = e.AdminClient.PostRaw(p, url.Values{"workspace": {"default"}, "role": {"admin"}})
		handlerstest.ExpectStatus(t, "no csrf "+p, res, http.StatusForbidden)
		handlerstest.ExpectBody(t, "no csrf "+p, res, "This form has expired")
	}
	if after := len(e.AuditActions()); after != before {
		t.Fatalf("refused requests were audited")
	}
}

func TestRestrictedUserSeesNoInstanceHistory(t *testing.T) {
	t.Parallel()
	e := handlerstest.NewRestrictedEnv(t)
	e.AdminClient.Get("/tokens")
	handlerstest.ExpectStatus(t, "create token", e.AdminClient.Post("/tokens", url.Values{"name": {"other-client-script"}, "role": {"viewer"}}), http.StatusCreated)
	handlerstest.ExpectBody(t, "admin sees instance history", e.AdminClient.Get("/w/acme/audit"), "token.create")
	res := e.MemberClient.Get("/w/acme/audit")
	handlerstest.ExpectStatus(t, "client audit", res, http.StatusOK)
	handlerstest.ExpectBody(t, "client audit", res, "user.workspace.grant")
	if strings.Contains(res.Body, "token.create") {
		t.Fatalf("a restricted user sees instance-wide history")
	}
}

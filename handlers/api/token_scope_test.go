package api_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/leadgate/leadgate/handlers/handlerstest"
	"github.com/leadgate/leadgate/models"
)

// apiAnswer is one admin API answer, fully read.
type apiAnswer struct {
	status int
	ctype  string
	body   []byte
}

// apiAs calls the admin API of e's server with a bearer token.
func apiAs(t *testing.T, e *handlerstest.Env, token, method, path, body string) apiAnswer {
	t.Helper()
	var rd io.Reader
	if body != "" {
		rd = bytes.NewBufferString(body)
	}
	req, err := http.NewRequest(method, e.Srv.URL+path, rd)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Content-Type", "application/json")
	resp, err := e.Srv.Client().Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	return apiAnswer{status: resp.StatusCode, ctype: resp.Header.Get("Content-Type"), body: raw}
}

// listedSlugs is GET /api/v1/workspaces as a token sees it.
func listedSlugs(t *testing.T, e *handlerstest.Env, token string) string {
	t.Helper()
	res := apiAs(t, e, token, http.MethodGet, "/api/v1/workspaces", "")
	var out struct {
		Workspaces []struct{ Slug string } `json:"workspaces"`
	}
	if res.status != http.StatusOK || json.Unmarshal(res.body, &out) != nil {
		t.Fatalf("list workspaces: %d %s", res.status, res.body)
	}
	slugs := make([]string, len(out.Workspaces))
	for i, w := range out.Workspaces {
		slugs[i] = w.Slug
	}
	return strings.Join(slugs, ",")
}

// tokenScopeEnv has workspaces acme and beta besides default, and tokens
// limited to acme (admin), to acme and beta (viewer), and one unscoped (admin).
type tokenScopeEnv struct {
	*handlerstest.Env
	acme, beta                          models.Workspace
	acmeAdmin, acmeBetaViewer, unscoped string
}

func newTokenScopeEnv(t *testing.T) tokenScopeEnv {
	t.Helper()
	e := handlerstest.NewEnv(t)
	ctx := context.Background()
	acme, err := e.Store.WorkspaceCreate(ctx, "acme", "Acme")
	if err != nil {
		t.Fatal(err)
	}
	beta, err := e.Store.WorkspaceCreate(ctx, "beta", "Beta")
	if err != nil {
		t.Fatal(err)
	}
	mint := func(name, role string, ws ...models.Workspace) string {
		ids := make([]int64, len(ws))
		for i, w := range ws {
			ids[i] = w.ID
		}
		_, plain, err := e.Store.TokenCreate(ctx, name, role, ids...)
		if err != nil {
			t.Fatalf("token %s: %v", name, err)
		}
		return plain
	}
	return tokenScopeEnv{Env: e, acme: acme, beta: beta,
		acmeAdmin:      mint("acme-script", models.RoleAdmin, acme),
		acmeBetaViewer: mint("acme-beta-report", models.RoleViewer, acme, beta),
		unscoped:       mint("ops", models.RoleAdmin)}
}

// A token limited to some workspaces reaches only those, with its own role,
// gets a JSON 403 everywhere else and on instance-wide actions; an unscoped
// token reaches every workspace as before.
func TestAPITokenWorkspaceScope(t *testing.T) {
	t.Parallel()
	e := newTokenScopeEnv(t)
	ctx := context.Background()
	const newSource = `{"name":"Web form","kind":"standard-webhooks","channel":"web_form"}`
	cases := []struct {
		name, token, method, path, body string
		status                          int
		field, msg                      string // a 403's JSON error
	}{
		{"ScopedReadsItsWorkspace", e.acmeAdmin, http.MethodGet, "/api/v1/workspaces/acme/sources", "", http.StatusOK, "", ""},
		{"ScopedWritesItsWorkspaceWithItsRole", e.acmeAdmin, http.MethodPost, "/api/v1/workspaces/acme/sources", newSource, http.StatusCreated, "", ""},
		{"ScopedAdminActsAsAdminThere", e.acmeAdmin, http.MethodGet, "/api/v1/workspaces/acme/guards/alerting", "", http.StatusOK, "", ""},
		{"ScopedReadsDefault", e.acmeAdmin, http.MethodGet, "/api/v1/workspaces/default/stats", "", http.StatusForbidden, "ws", "no access to workspace default"},
		{"ScopedReadsBeta", e.acmeAdmin, http.MethodGet, "/api/v1/workspaces/beta/contacts", "", http.StatusForbidden, "ws", "no access to workspace beta"},
		{"ScopedWritesBeta", e.acmeAdmin, http.MethodPost, "/api/v1/workspaces/beta/sources", newSource, http.StatusForbidden, "ws", "no access to workspace beta"},
		{"ScopedAdminCreatesWorkspace", e.acmeAdmin, http.MethodPost, "/api/v1/workspaces", `{"slug":"gamma","name":"Gamma"}`, http.StatusForbidden, "", "instance-wide actions need a token without a workspace scope"},
		{"ScopedViewerCreatesWorkspace", e.acmeBetaViewer, http.MethodPost, "/api/v1/workspaces", `{"slug":"gamma","name":"Gamma"}`, http.StatusForbidden, "", "instance-wide actions need a token without a workspace scope"},
		{"TwoWorkspaceTokenReadsBeta", e.acmeBetaViewer, http.MethodGet, "/api/v1/workspaces/beta/stats", "", http.StatusOK, "", ""},
		{"TwoWorkspaceTokenKeepsItsRole", e.acmeBetaViewer, http.MethodPost, "/api/v1/workspaces/beta/sources", newSource, http.StatusForbidden, "", "this action needs the editor role"},
		{"TwoWorkspaceTokenReadsDefault", e.acmeBetaViewer, http.MethodGet, "/api/v1/workspaces/default/dead-letters", "", http.StatusForbidden, "ws", "no access to workspace default"},
		{"ScopedProbesAnUnknownSlug", e.acmeAdmin, http.MethodGet, "/api/v1/workspaces/nowhere/stats", "", http.StatusForbidden, "ws", "no access to workspace nowhere"},
		{"UnscopedProbesAnUnknownSlug", e.unscoped, http.MethodGet, "/api/v1/workspaces/nowhere/stats", "", http.StatusNotFound, "", ""},
		{"UnscopedReadsDefault", e.unscoped, http.MethodGet, "/api/v1/workspaces/default/stats", "", http.StatusOK, "", ""},
		{"UnscopedWritesBeta", e.unscoped, http.MethodPost, "/api/v1/workspaces/beta/sources", newSource, http.StatusCreated, "", ""},
		{"UnscopedCreatesWorkspace", e.unscoped, http.MethodPost, "/api/v1/workspaces", `{"slug":"delta","name":"Delta"}`, http.StatusCreated, "", ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			res := apiAs(t, e.Env, c.token, c.method, c.path, c.body)
			if res.status != c.status {
				t.Fatalf("%s %s: %d %s, want %d", c.method, c.path, res.status, res.body, c.status)
			}
			if c.status != http.StatusForbidden {
				return
			}
			var got struct{ Error, Field string }
			if !strings.HasPrefix(res.ctype, "application/json") || json.Unmarshal(res.body, &got) != nil {
				t.Fatalf("403 is not JSON: %q %s", res.ctype, res.body)
			}
			if got.Field != c.field || !strings.Contains(got.Error, c.msg) {
				t.Fatalf("403 = field %q error %q, want field %q error containing %q", got.Field, got.Error, c.field, c.msg)
			}
		})
	}

	t.Run("RefusalsChangedNothing", func(t *testing.T) {
		if _, err := e.Store.WorkspaceBySlug(ctx, "gamma"); !errors.Is(err, models.ErrNotFound) {
			t.Fatalf("a scoped token created workspace gamma (err %v)", err)
		}
		for ws, want := range map[int64]int64{e.WS.ID: 0, e.acme.ID: 1, e.beta.ID: 1} {
			var n int64
			if err := e.Store.DB().Raw(`SELECT count(*) FROM sources WHERE workspace_id = ?`, ws).Scan(&n).Error; err != nil {
				t.Fatal(err)
			}
			if n != want {
				t.Fatalf("workspace %d has %d sources, want %d", ws, n, want)
			}
		}
	})

	t.Run("ListsOnlyItsWorkspaces", func(t *testing.T) {
		for _, c := range []struct{ who, token, want string }{
			{"acme admin", e.acmeAdmin, "acme"},
			{"acme+beta viewer", e.acmeBetaViewer, "acme,beta"},
			{"unscoped", e.unscoped, "default,acme,beta,delta"},
		} {
			if got := listedSlugs(t, e.Env, c.token); got != c.want {
				t.Fatalf("%s lists %q, want %q", c.who, got, c.want)
			}
		}
	})

	t.Run("AuditOmitsInstanceWideHistory", func(t *testing.T) {
		// An instance-wide entry (no workspace): another client's user.
		if err := e.Store.AuditRecord(ctx, models.Audit{Actor: "cli", Action: "user.create", SubjectType: "user", SubjectID: "9"}); err != nil {
			t.Fatal(err)
		}
		instanceWide := func(token string) (n, total int) {
			res := apiAs(t, e.Env, token, http.MethodGet, "/api/v1/workspaces/acme/audit", "")
			var out struct {
				Audit []struct{ WorkspaceID *int64 }
			}
			if res.status != http.StatusOK || json.Unmarshal(res.body, &out) != nil {
				t.Fatalf("audit: %d %s", res.status, res.body)
			}
			for _, a := range out.Audit {
				if a.WorkspaceID == nil {
					n++
				}
			}
			return n, len(out.Audit)
		}
		if n, total := instanceWide(e.acmeAdmin); n != 0 || total == 0 {
			t.Fatalf("the acme token sees %d instance-wide entries of %d", n, total)
		}
		if n, _ := instanceWide(e.unscoped); n == 0 {
			t.Fatalf("the unscoped token sees no instance-wide entries")
		}
	})
}

// The web app's Tokens page limits a new token to ticked workspaces, shows
// the scope, audits it, and refuses an unknown workspace inline.
func TestUITokenWorkspaceScope(t *testing.T) {
	t.Parallel()
	e := newTokenScopeEnv(t)
	admin := e.SignedIn(models.RoleAdmin)
	page := admin.Get("/tokens")
	handlerstest.ExpectStatus(t, "tokens page", page, http.StatusOK)
	handlerstest.ExpectBody(t, "tokens page", page, `name="workspace" value="acme"`, `name="workspace" value="beta"`, "acme, beta", "every workspace")

	before, err := e.Store.TokenList(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	bad := admin.Post("/tokens", url.Values{"name": {"client-x"}, "role": {"editor"}, "workspace": {"acme", "nope"}})
	handlerstest.ExpectStatus(t, "unknown workspace", bad, http.StatusUnprocessableEntity)
	handlerstest.ExpectBody(t, "unknown workspace", bad, `id="err-workspace"`, `unknown workspace &#34;nope&#34;`, `value="acme" checked`)
	if after, _ := e.Store.TokenList(context.Background()); len(after) != len(before) {
		t.Fatalf("a refused form created a token: %d -> %d", len(before), len(after))
	}

	res := admin.Post("/tokens", url.Values{"name": {"client-acme"}, "role": {"editor"}, "workspace": {"acme"}})
	handlerstest.ExpectStatus(t, "create scoped token", res, http.StatusCreated)
	m := regexp.MustCompile(`data-testid="new-token">(lgt_[A-Za-z0-9_-]+)<`).FindStringSubmatch(res.Body)
	if m == nil {
		t.Fatalf("no token shown: %.400s", res.Body)
	}
	list, err := e.Store.AuditList(context.Background(), 0, models.Page{Limit: 1})
	if err != nil {
		t.Fatal(err)
	}
	if list[0].Action != "token.create" || !strings.Contains(string(list[0].After), `"workspaces": ["acme"]`) {
		t.Fatalf("token creation audited as %s %s", list[0].Action, list[0].After)
	}
	if got := listedSlugs(t, e.Env, m[1]); got != "acme" {
		t.Fatalf("the new token lists %q, want acme", got)
	}
	if res := apiAs(t, e.Env, m[1], http.MethodGet, "/api/v1/workspaces/default/stats", ""); res.status != http.StatusForbidden {
		t.Fatalf("the new acme token reads default: %d", res.status)
	}
}

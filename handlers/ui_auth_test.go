package handlers_test

import (
	"bytes"
	"context"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/leadgate/leadgate/models"
)

// Every page of the web app, as an anonymous visitor reaches it.
var anonymousPages = []string{
	"/", "/w/default/", "/w/default/health", "/w/default/events", "/w/default/events/0190a0b0-0000-7000-8000-000000000000",
	"/w/default/audit", "/w/default/sources", "/w/default/sources/new", "/w/default/sources/1", "/w/default/sources/stage-row",
	"/workspaces", "/tokens", "/users", "/account/password",
}

func TestUIAccessControl(t *testing.T) {
	t.Parallel()
	e := newUIEnv(t)

	t.Run("anonymous visitors are sent to /login", func(t *testing.T) {
		c := e.client()
		for _, p := range anonymousPages {
			expectRedirect(t, "GET "+p, c.get(p), "/login")
		}
	})

	t.Run("anonymous htmx polls get HX-Redirect instead of a fragment", func(t *testing.T) {
		res := e.client().get("/w/default/health", "HX-Request", "true")
		if res.status != http.StatusUnauthorized || res.header.Get("HX-Redirect") != "/login" {
			t.Fatalf("status %d HX-Redirect %q, want 401 /login", res.status, res.header.Get("HX-Redirect"))
		}
	})

	t.Run("anonymous posts with a valid CSRF token are still sent to /login", func(t *testing.T) {
		c := e.client()
		expectRedirect(t, "POST /workspaces", c.post("/workspaces", url.Values{"slug": {"anon"}, "name": {"Anon"}}), "/login")
	})

	t.Run("a POST without the CSRF token is rejected and changes nothing", func(t *testing.T) {
		c := e.signedIn(models.RoleAdmin)
		res := c.postRaw("/workspaces", url.Values{"slug": {"nocsrf"}, "name": {"No CSRF"}})
		expectStatus(t, "POST without token", res, http.StatusForbidden)
		expectBody(t, "POST without token", res, "This form has expired")
		if _, err := e.store.WorkspaceBySlug(context.Background(), "nocsrf"); err != models.ErrNotFound {
			t.Fatalf("workspace was created despite the missing token: %v", err)
		}
		bad := url.Values{"slug": {"nocsrf"}, "name": {"No CSRF"}, "gorilla.csrf.Token": {"forged"}}
		expectStatus(t, "POST with a forged token", c.postRaw("/workspaces", bad), http.StatusForbidden)
	})

	t.Run("a cross-origin POST is rejected even with a token", func(t *testing.T) {
		c := e.signedIn(models.RoleAdmin)
		c.get("/workspaces")
		form := url.Values{"slug": {"evil"}, "name": {"Evil"}, "gorilla.csrf.Token": {c.csrf}}
		req, _ := http.NewRequest(http.MethodPost, c.base+"/workspaces", bytes.NewBufferString(form.Encode()))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		req.Header.Set("Origin", "https://evil.example")
		expectStatus(t, "cross-origin POST", c.do(req), http.StatusForbidden)
	})

	t.Run("UI pages carry a strict Content-Security-Policy", func(t *testing.T) {
		c := e.signedIn(models.RoleViewer)
		for _, p := range []string{"/login", "/w/default/", "/w/default/health", "/workspaces"} {
			res := c.get(p)
			csp := res.header.Get("Content-Security-Policy")
			for _, d := range []string{"default-src 'self'", "script-src 'self'", "style-src 'self'", "frame-ancestors 'none'"} {
				if !strings.Contains(csp, d) {
					t.Fatalf("GET %s: CSP %q lacks %q", p, csp, d)
				}
			}
			if strings.Contains(res.body, "style=") || regexp.MustCompile(`<script>|<script [^>]*>[^<]`).MatchString(res.body) {
				t.Fatalf("GET %s: inline style or script in the page", p)
			}
		}
	})

	t.Run("static files are content-hashed and cached for a year", func(t *testing.T) {
		c := e.client()
		page := c.get("/login")
		m := regexp.MustCompile(`href="(/static/css/app\.[0-9a-f]{12}\.css)"`).FindStringSubmatch(page.body)
		js := regexp.MustCompile(`src="(/static/js/htmx\.min\.[0-9a-f]{12}\.js)"`).FindStringSubmatch(page.body)
		if m == nil || js == nil {
			t.Fatalf("login page does not link hashed assets: %.500s", page.body)
		}
		css := c.get(m[1])
		expectStatus(t, "GET css", css, http.StatusOK)
		if cc := css.header.Get("Cache-Control"); !strings.Contains(cc, "immutable") || !strings.Contains(cc, "max-age=31536000") {
			t.Fatalf("css Cache-Control %q", cc)
		}
		if ct := css.header.Get("Content-Type"); !strings.HasPrefix(ct, "text/css") {
			t.Fatalf("css Content-Type %q", ct)
		}
		expectBody(t, "htmx", c.get(js[1]), "htmx")
		expectStatus(t, "stale hash", c.get("/static/css/app.000000000000.css"), http.StatusNotFound)
	})

	t.Run("the htmx config keeps htmx inside the CSP", func(t *testing.T) {
		res := e.client().get("/login")
		expectBody(t, "login", res, `name="htmx-config"`, `&#34;includeIndicatorStyles&#34;:false`)
	})
}

func TestUILoginLogoutAndSessions(t *testing.T) {
	t.Parallel()
	e := newUIEnv(t)

	t.Run("wrong password is refused without saying which part was wrong", func(t *testing.T) {
		e.user("sam@example.com", models.RoleEditor)
		res := e.client().login("sam@example.com", "not the password")
		expectStatus(t, "bad login", res, http.StatusUnauthorized)
		expectBody(t, "bad login", res, "do not match an active account")
	})

	t.Run("sign in, see the dashboard, sign out", func(t *testing.T) {
		e.user("kim@example.com", models.RoleViewer)
		c := e.client()
		expectRedirect(t, "login", c.login("KIM@example.com ", uiPassword), "/")
		expectRedirect(t, "home", c.get("/"), "/w/default/")
		res := c.get("/w/default/")
		expectStatus(t, "dashboard", res, http.StatusOK)
		expectBody(t, "dashboard", res, "kim@example.com", "Pipeline health")
		expectRedirect(t, "logout", c.post("/logout", nil), "/login?signed_out=1")
		expectRedirect(t, "after logout", c.get("/w/default/"), "/login")
	})

	t.Run("a disabled user's session ends at the next request", func(t *testing.T) {
		u := e.user("gone@example.com", models.RoleEditor)
		c := e.client()
		expectRedirect(t, "login", c.login("gone@example.com", uiPassword), "/")
		if err := e.store.UserSetDisabled(context.Background(), u.ID, true); err != nil {
			t.Fatal(err)
		}
		expectRedirect(t, "after disable", c.get("/w/default/"), "/login")
	})

	t.Run("changing the password ends the account's other sessions", func(t *testing.T) {
		e.user("two@example.com", models.RoleEditor)
		a, b := e.client(), e.client()
		a.login("two@example.com", uiPassword)
		b.login("two@example.com", uiPassword)
		a.get("/account/password")
		res := a.post("/account/password", url.Values{"current": {uiPassword}, "new": {"a brand new secret"}, "confirm": {"a brand new secret"}})
		expectRedirect(t, "change password", res, "/")
		expectStatus(t, "same session still works", a.get("/w/default/"), http.StatusOK)
		expectRedirect(t, "other session", b.get("/w/default/"), "/login")
	})

	t.Run("password form errors are shown inline", func(t *testing.T) {
		c := e.signedIn(models.RoleViewer)
		c.get("/account/password")
		res := c.post("/account/password", url.Values{"current": {uiPassword}, "new": {"short"}, "confirm": {"short"}})
		expectStatus(t, "short password", res, http.StatusUnprocessableEntity)
		expectBody(t, "short password", res, `id="err-new"`, "at least 10 characters")
	})
}

func TestUIFirstStartForcesPasswordChange(t *testing.T) {
	t.Parallel()
	e := newUIEnv(t)
	var out bytes.Buffer
	if err := e.app.FirstStart(context.Background(), &out); err != nil {
		t.Fatalf("first start: %v", err)
	}
	m := regexp.MustCompile(`admin@localhost[\s\S]*?\n\n    (\S+)\n`).FindStringSubmatch(out.String())
	if m == nil {
		t.Fatalf("first start printed no password: %q", out.String())
	}
	c := e.client()
	expectRedirect(t, "login with one-time password", c.login("admin@localhost", m[1]), "/account/password")
	expectRedirect(t, "any page before changing it", c.get("/w/default/sources"), "/account/password")
	res := c.get("/account/password")
	expectBody(t, "forced change", res, `data-testid="forced-change"`)
	res = c.post("/account/password", url.Values{"current": {m[1]}, "new": {"my own long password"}, "confirm": {"my own long password"}})
	expectRedirect(t, "change", res, "/")
	expectStatus(t, "dashboard afterwards", c.get("/w/default/"), http.StatusOK)

	// A second start finds the user and prints no new password.
	out.Reset()
	if err := e.app.FirstStart(context.Background(), &out); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(out.String(), "admin@localhost") {
		t.Fatalf("second start created another admin: %q", out.String())
	}
	if got := e.auditActions(); !uiHas(got, "user.change_password") || !uiHas(got, "user.create") {
		t.Fatalf("audit %v lacks user.create / user.change_password", got)
	}
}

func TestUILoginThrottle(t *testing.T) {
	t.Parallel()
	e := newUIEnv(t)
	e.user("target@example.com", models.RoleAdmin)
	e.user("other@example.com", models.RoleAdmin)
	c := e.client()
	for i := range 5 {
		expectStatus(t, "failed attempt", c.login("target@example.com", "guess-"+string(rune('a'+i))), http.StatusUnauthorized)
	}
	res := c.login("target@example.com", uiPassword)
	expectStatus(t, "right password after 5 failures", res, http.StatusTooManyRequests)
	expectBody(t, "throttled", res, "Too many failed sign-ins")
	if res.header.Get("Retry-After") == "" {
		t.Fatal("throttled answer has no Retry-After")
	}
	// Five guesses at one account block that pair, not the client for every account.
	expectRedirect(t, "other account from the same client", c.login("other@example.com", uiPassword), "/")
}

func uiHas(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

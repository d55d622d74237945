package ui_test

import (
	"bytes"
	"context"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/leadgate/leadgate/handlers/handlerstest"
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
	e := handlerstest.NewEnv(t)

	t.Run("anonymous visitors are sent to /login", func(t *testing.T) {
		c := e.Client()
		for _, p := range anonymousPages {
			handlerstest.ExpectRedirect(t, "GET "+p, c.Get(p), "/login")
		}
	})

	t.Run("anonymous htmx polls get HX-Redirect instead of a fragment", func(t *testing.T) {
		res := e.Client().Get("/w/default/health", "HX-Request", "true")
		if res.Status != http.StatusUnauthorized || res.Header.Get("HX-Redirect") != "/login" {
			t.Fatalf("status %d HX-Redirect %q, want 401 /login", res.Status, res.Header.Get("HX-Redirect"))
		}
	})

	t.Run("anonymous posts with a valid CSRF token are still sent to /login", func(t *testing.T) {
		c := e.Client()
		handlerstest.ExpectRedirect(t, "POST /workspaces", c.Post("/workspaces", url.Values{"slug": {"anon"}, "name": {"Anon"}}), "/login")
	})

	t.Run("a POST without the CSRF token is rejected and changes nothing", func(t *testing.T) {
		c := e.SignedIn(models.RoleAdmin)
		res := c.PostRaw("/workspaces", url.Values{"slug": {"nocsrf"}, "name": {"No CSRF"}})
		handlerstest.ExpectStatus(t, "POST without token", res, http.StatusForbidden)
		handlerstest.ExpectBody(t, "POST without token", res, "This form has expired")
		if _, err := e.Store.WorkspaceBySlug(context.Background(), "nocsrf"); err != models.ErrNotFound {
			t.Fatalf("workspace was created despite the missing token: %v", err)
		}
		bad := url.Values{"slug": {"nocsrf"}, "name": {"No CSRF"}, "gorilla.csrf.Token": {"forged"}}
		handlerstest.ExpectStatus(t, "POST with a forged token", c.PostRaw("/workspaces", bad), http.StatusForbidden)
	})

	t.Run("a cross-origin POST is rejected even with a token", func(t *testing.T) {
		c := e.SignedIn(models.RoleAdmin)
		c.Get("/workspaces")
		form := url.Values{"slug": {"evil"}, "name": {"Evil"}, "gorilla.csrf.Token": {c.CSRF}}
		req, _ := http.NewRequest(http.MethodPost, c.Base+"/workspaces", bytes.NewBufferString(form.Encode()))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		req.Header.Set("Origin", "https://evil.example")
		handlerstest.ExpectStatus(t, "cross-origin POST", c.Do(req), http.StatusForbidden)
	})

	t.Run("UI pages carry a strict Content-Security-Policy", func(t *testing.T) {
		c := e.SignedIn(models.RoleViewer)
		for _, p := range []string{"/login", "/w/default/", "/w/default/health", "/workspaces"} {
			res := c.Get(p)
			csp := res.Header.Get("Content-Security-Policy")
			for _, d := range []string{"default-src 'self'", "script-src 'self'", "style-src 'self'", "frame-ancestors 'none'"} {
				if !strings.Contains(csp, d) {
					t.Fatalf("GET %s: CSP %q lacks %q", p, csp, d)
				}
			}
			if strings.Contains(res.Body, "style=") || regexp.MustCompile(`<script>|<script [^>]*>[^<]`).MatchString(res.Body) {
				t.Fatalf("GET %s: inline style or script in the page", p)
			}
		}
	})

	t.Run("static files are content-hashed and cached for a year", func(t *testing.T) {
		c := e.Client()
		page := c.Get("/login")
		m := regexp.MustCompile(`href="(/static/css/app\.[0-9a-f]{12}\.css)"`).FindStringSubmatch(page.Body)
		js := regexp.MustCompile(`src="(/static/js/htmx\.min\.[0-9a-f]{12}\.js)"`).FindStringSubmatch(page.Body)
		if m == nil || js == nil {
			t.Fatalf("login page does not link hashed assets: %.500s", page.Body)
		}
		css := c.Get(m[1])
		handlerstest.ExpectStatus(t, "GET css", css, http.StatusOK)
		if cc := css.Header.Get("Cache-Control"); !strings.Contains(cc, "immutable") || !strings.Contains(cc, "max-age=31536000") {
			t.Fatalf("css Cache-Control %q", cc)
		}
		if ct := css.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/css") {
			t.Fatalf("css Content-Type %q", ct)
		}
		handlerstest.ExpectBody(t, "htmx", c.Get(js[1]), "htmx")
		handlerstest.ExpectStatus(t, "stale hash", c.Get("/static/css/app.000000000000.css"), http.StatusNotFound)
	})

	t.Run("the htmx config keeps htmx inside the CSP", func(t *testing.T) {
		res := e.Client().Get("/login")
		handlerstest.ExpectBody(t, "login", res, `name="htmx-config"`, `&#34;includeIndicatorStyles&#34;:false`)
	})
}

func TestUILoginLogoutAndSessions(t *testing.T) {
	t.Parallel()
	e := handlerstest.NewEnv(t)

	t.Run("wrong password is refused without saying which part was wrong", func(t *testing.T) {
		e.User("sam@example.com", models.RoleEditor)
		res := e.Client().Login("sam@example.com", "not the password")
		handlerstest.ExpectStatus(t, "bad login", res, http.StatusUnauthorized)
		handlerstest.ExpectBody(t, "bad login", res, "do not match an active account")
	})

	t.Run("sign in, see the dashboard, sign out", func(t *testing.T) {
		e.User("kim@example.com", models.RoleViewer)
		c := e.Client()
		handlerstest.ExpectRedirect(t, "login", c.Login("KIM@example.com ", handlerstest.Password), "/")
		handlerstest.ExpectRedirect(t, "home", c.Get("/"), "/w/default/")
		res := c.Get("/w/default/")
		handlerstest.ExpectStatus(t, "dashboard", res, http.StatusOK)
		handlerstest.ExpectBody(t, "dashboard", res, "kim@example.com", "Pipeline health")
		handlerstest.ExpectRedirect(t, "logout", c.Post("/logout", nil), "/login?signed_out=1")
		handlerstest.ExpectRedirect(t, "after logout", c.Get("/w/default/"), "/login")
	})

	t.Run("a disabled user's session ends at the next request", func(t *testing.T) {
		u := e.User("gone@example.com", models.RoleEditor)
		c := e.Client()
		handlerstest.ExpectRedirect(t, "login", c.Login("gone@example.com", handlerstest.Password), "/")
		if err := e.Store.UserSetDisabled(context.Background(), u.ID, true); err != nil {
			t.Fatal(err)
		}
		handlerstest.ExpectRedirect(t, "after disable", c.Get("/w/default/"), "/login")
	})

	t.Run("changing the password ends the account's other sessions", func(t *testing.T) {
		e.User("two@example.com", models.RoleEditor)
		a, b := e.Client(), e.Client()
		a.Login("two@example.com", handlerstest.Password)
		b.Login("two@example.com", handlerstest.Password)
		a.Get("/account/password")
		res := a.Post("/account/password", url.Values{"current": {handlerstest.Password}, "new": {"a brand new secret"}, "confirm": {"a brand new secret"}})
		handlerstest.ExpectRedirect(t, "change password", res, "/")
		handlerstest.ExpectStatus(t, "same session still works", a.Get("/w/default/"), http.StatusOK)
		handlerstest.ExpectRedirect(t, "other session", b.Get("/w/default/"), "/login")
	})

	t.Run("password form errors are shown inline", func(t *testing.T) {
		c := e.SignedIn(models.RoleViewer)
		c.Get("/account/password")
		res := c.Post("/account/password", url.Values{"current": {handlerstest.Password}, "new": {"short"}, "confirm": {"short"}})
		handlerstest.ExpectStatus(t, "short password", res, http.StatusUnprocessableEntity)
		handlerstest.ExpectBody(t, "short password", res, `id="err-new"`, "at least 10 characters")
	})
}

func TestUIFirstStartForcesPasswordChange(t *testing.T) {
	t.Parallel()
	e := handlerstest.NewEnv(t)
	var out bytes.Buffer
	if err := e.App.FirstStart(context.Background(), &out); err != nil {
		t.Fatalf("first start: %v", err)
	}
	m := regexp.MustCompile(`admin@localhost[\s\S]*?\n\n    (\S+)\n`).FindStringSubmatch(out.String())
	if m == nil {
		t.Fatalf("first start printed no password: %q", out.String())
	}
	c := e.Client()
	handlerstest.ExpectRedirect(t, "login with one-time password", c.Login("admin@localhost", m[1]), "/account/password")
	handlerstest.ExpectRedirect(t, "any page before changing it", c.Get("/w/default/sources"), "/account/password")
	res := c.Get("/account/password")
	handlerstest.ExpectBody(t, "forced change", res, `data-testid="forced-change"`)
	res = c.Post("/account/password", url.Values{"current": {m[1]}, "new": {"my own long password"}, "confirm": {"my own long password"}})
	handlerstest.ExpectRedirect(t, "change", res, "/")
	handlerstest.ExpectStatus(t, "dashboard afterwards", c.Get("/w/default/"), http.StatusOK)

	// A second start finds the user and prints no new password.
	out.Reset()
	if err := e.App.FirstStart(context.Background(), &out); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(out.String(), "admin@localhost") {
		t.Fatalf("second start created another admin: %q", out.String())
	}
	if got := e.AuditActions(); !uiHas(got, "user.change_password") || !uiHas(got, "user.create") {
		t.Fatalf("audit %v lacks user.create / user.change_password", got)
	}
}

func TestUILoginThrottle(t *testing.T) {
	t.Parallel()
	e := handlerstest.NewEnv(t)
	e.User("target@example.com", models.RoleAdmin)
	e.User("other@example.com", models.RoleAdmin)
	c := e.Client()
	for i := range 5 {
		handlerstest.ExpectStatus(t, "failed attempt", c.Login("target@example.com", "guess-"+string(rune('a'+i))), http.StatusUnauthorized)
	}
	res := c.Login("target@example.com", handlerstest.Password)
	handlerstest.ExpectStatus(t, "right password after 5 failures", res, http.StatusTooManyRequests)
	handlerstest.ExpectBody(t, "throttled", res, "Too many failed sign-ins")
	if res.Header.Get("Retry-After") == "" {
		t.Fatal("throttled answer has no Retry-After")
	}
	// Five guesses at one account block that pair, not the client for every account.
	handlerstest.ExpectRedirect(t, "other account from the same client", c.Login("other@example.com", handlerstest.Password), "/")
}

func uiHas(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

package handlers_test

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/leadgate/leadgate/handlers"
	"github.com/leadgate/leadgate/models"
)

func TestUISessionsEndOnTheServer(t *testing.T) {
	t.Parallel()
	e := newUIEnv(t)

	t.Run("a cookie copied before sign-out is refused after it", func(t *testing.T) {
		e.user("copy@example.com", models.RoleEditor)
		c := e.client()
		expectRedirect(t, "login", c.login("copy@example.com", uiPassword), "/")
		stolen := e.copyCookies(c)
		expectStatus(t, "copy works while signed in", stolen.get("/w/default/"), http.StatusOK)
		expectRedirect(t, "logout", c.post("/logout", nil), "/login?signed_out=1")
		expectRedirect(t, "copied cookie after sign-out", stolen.get("/w/default/"), "/login")
		res := stolen.get("/w/default/health", "HX-Request", "true")
		if res.status != http.StatusUnauthorized {
			t.Fatalf("htmx poll with the copied cookie: status %d, want 401", res.status)
		}
	})

	t.Run("sign out everywhere ends every session of the account, and only of that account", func(t *testing.T) {
		e.user("many@example.com", models.RoleViewer)
		e.user("bystander@example.com", models.RoleViewer)
		a, b, other := e.client(), e.client(), e.client()
		a.login("many@example.com", uiPassword)
		b.login("many@example.com", uiPassword)
		other.login("bystander@example.com", uiPassword)
		page := a.get("/account/password")
		expectBody(t, "account page", page, `data-testid="sign-out-everywhere"`, "signed in 2 time(s)")
		expectRedirect(t, "sign out everywhere", a.post("/account/sessions/end-all", nil), "/login?signed_out=1")
		expectRedirect(t, "this browser", a.get("/w/default/"), "/login")
		expectRedirect(t, "the other browser", b.get("/w/default/"), "/login")
		expectStatus(t, "another account", other.get("/w/default/"), http.StatusOK)
	})

	t.Run("a password change ends the other sessions and the cookie it replaced", func(t *testing.T) {
		e.user("rotate@example.com", models.RoleEditor)
		a, b := e.client(), e.client()
		a.login("rotate@example.com", uiPassword)
		b.login("rotate@example.com", uiPassword)
		before := e.copyCookies(a)
		a.get("/account/password")
		res := a.post("/account/password", url.Values{"current": {uiPassword}, "new": {"another long secret"}, "confirm": {"another long secret"}})
		expectRedirect(t, "change password", res, "/")
		expectStatus(t, "the changing browser stays signed in", a.get("/w/default/"), http.StatusOK)
		expectRedirect(t, "other session", b.get("/w/default/"), "/login")
		expectRedirect(t, "cookie from before the change", before.get("/w/default/"), "/login")
	})
}

func TestUISignInLandsWhereYouWereGoing(t *testing.T) {
	t.Parallel()
	e := newUIEnv(t)
	e.user("land@example.com", models.RoleEditor)

	t.Run("an anonymous page view remembers the page and sign-in returns to it", func(t *testing.T) {
		c := e.client()
		res := c.get("/w/default/sources?q=x")
		if loc := res.header.Get("Location"); loc != "/login?next="+url.QueryEscape("/w/default/sources?q=x") {
			t.Fatalf("anonymous GET: Location %q", loc)
		}
		expectBody(t, "login form", c.get(res.header.Get("Location")), `name="next" value="/w/default/sources?q=x"`)
		res = c.post("/login", url.Values{"email": {"land@example.com"}, "password": {uiPassword}, "next": {"/w/default/sources?q=x"}})
		expectRedirect(t, "login with next", res, "/w/default/sources?q=x")
	})

	t.Run("a next that leaves the site is ignored", func(t *testing.T) {
		for _, next := range []string{"//evil.example/", "https://evil.example/", "/\\evil.example", "javascript:alert(1)", "/login", "w/default/"} {
			if got := handlers.SafeNext(next); got != "" {
				t.Errorf("SafeNext(%q) = %q, want refused", next, got)
			}
			c := e.client()
			res := c.post("/login", url.Values{"email": {"land@example.com"}, "password": {uiPassword}, "next": {next}})
			expectRedirect(t, "login with next "+next, res, "/")
		}
	})

	t.Run("without next, sign-in lands in the workspace opened last, in any browser", func(t *testing.T) {
		if _, err := e.store.WorkspaceCreate(context.Background(), "second", "Second"); err != nil {
			t.Fatal(err)
		}
		a := e.client()
		a.login("land@example.com", uiPassword)
		expectStatus(t, "open second", a.get("/w/second/"), http.StatusOK)
		a.post("/logout", nil)
		b := e.client()
		expectRedirect(t, "login elsewhere", b.login("land@example.com", uiPassword), "/")
		expectRedirect(t, "home", b.get("/"), "/w/second/")
	})
}

func TestUISignInThrottleCountsPerClientAndAccount(t *testing.T) {
	t.Parallel()
	t.Run("a guesser behind a trusted proxy locks out only itself", func(t *testing.T) {
		e := newUIEnvWith(t, map[string]string{"LEADGATE_TRUSTED_PROXIES": "127.0.0.1, ::1"})
		e.user("victim@example.com", models.RoleAdmin)
		e.user("colleague@example.com", models.RoleAdmin)
		guesser := http.Header{"X-Forwarded-For": {"198.51.100.7"}}
		c := e.client()
		for i := range handlers.SignInPairBudget {
			expectStatus(t, "guess", c.loginVia(guesser, "victim@example.com", "guess-"+string(rune('a'+i))), http.StatusUnauthorized)
		}
		expectStatus(t, "guesser, right password", c.loginVia(guesser, "victim@example.com", uiPassword), http.StatusTooManyRequests)
		owner := http.Header{"X-Forwarded-For": {"203.0.113.20"}}
		expectRedirect(t, "the owner from another client", e.client().loginVia(owner, "victim@example.com", uiPassword), "/")
		expectRedirect(t, "a colleague from another client", e.client().loginVia(owner, "colleague@example.com", uiPassword), "/")
	})

	t.Run("X-Forwarded-For from an untrusted peer is ignored", func(t *testing.T) {
		e := newUIEnv(t)
		e.user("spoofed@example.com", models.RoleAdmin)
		c := e.client()
		for i := range handlers.SignInPairBudget {
			fake := http.Header{"X-Forwarded-For": {"192.0.2." + string(rune('1'+i))}}
			expectStatus(t, "guess", c.loginVia(fake, "spoofed@example.com", "guess-"+string(rune('a'+i))), http.StatusUnauthorized)
		}
		fresh := http.Header{"X-Forwarded-For": {"192.0.2.99"}}
		expectStatus(t, "a new forged address", c.loginVia(fresh, "spoofed@example.com", uiPassword), http.StatusTooManyRequests)
	})

	t.Run("one client spraying many accounts is blocked for all of them", func(t *testing.T) {
		e := newUIEnv(t)
		e.user("last@example.com", models.RoleViewer)
		c := e.client()
		for i := range handlers.SignInClientBudget {
			email := "nobody" + string(rune('a'+i)) + "@example.com"
			expectStatus(t, "spray", c.login(email, "wrong password"), http.StatusUnauthorized)
		}
		expectStatus(t, "a real account from the spraying client", c.login("last@example.com", uiPassword), http.StatusTooManyRequests)
	})
}

func TestUITransportHeaders(t *testing.T) {
	t.Parallel()
	t.Run("API answers carry nosniff; no HSTS on an http public URL", func(t *testing.T) {
		e := newUIEnv(t)
		for _, p := range []string{"/api/v1/workspaces", "/healthz"} {
			res := e.client().get(p)
			if res.header.Get("X-Content-Type-Options") != "nosniff" {
				t.Fatalf("GET %s: X-Content-Type-Options %q", p, res.header.Get("X-Content-Type-Options"))
			}
			if h := res.header.Get("Strict-Transport-Security"); h != "" {
				t.Fatalf("GET %s: HSTS %q on an http deployment", p, h)
			}
		}
	})
	t.Run("HSTS when the public URL is https", func(t *testing.T) {
		e := newUIEnvWith(t, map[string]string{"LEADGATE_PUBLIC_URL": "https://leadgate.example"})
		for _, p := range []string{"/api/v1/workspaces", "/login"} {
			if h := e.client().get(p).header.Get("Strict-Transport-Security"); !strings.Contains(h, "max-age=31536000") {
				t.Fatalf("GET %s: HSTS %q", p, h)
			}
		}
	})
}

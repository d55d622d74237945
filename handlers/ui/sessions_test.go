package ui_test

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/leadgate/leadgate/handlers/handlerstest"
	"github.com/leadgate/leadgate/handlers/ui"
	"github.com/leadgate/leadgate/models"
)

func TestUISessionsEndOnTheServer(t *testing.T) {
	t.Parallel()
	e := handlerstest.NewEnv(t)

	t.Run("a cookie copied before sign-out is refused after it", func(t *testing.T) {
		e.User("copy@example.com", models.RoleEditor)
		c := e.Client()
		handlerstest.ExpectRedirect(t, "login", c.Login("copy@example.com", handlerstest.Password), "/")
		stolen := e.CopyCookies(c)
		handlerstest.ExpectStatus(t, "copy works while signed in", stolen.Get("/w/default/"), http.StatusOK)
		handlerstest.ExpectRedirect(t, "logout", c.Post("/logout", nil), "/login?signed_out=1")
		handlerstest.ExpectRedirect(t, "copied cookie after sign-out", stolen.Get("/w/default/"), "/login")
		res := stolen.Get("/w/default/health", "HX-Request", "true")
		if res.Status != http.StatusUnauthorized {
			t.Fatalf("htmx poll with the copied cookie: status %d, want 401", res.Status)
		}
	})

	t.Run("sign out everywhere ends every session of the account, and only of that account", func(t *testing.T) {
		e.User("many@example.com", models.RoleViewer)
		e.User("bystander@example.com", models.RoleViewer)
		a, b, other := e.Client(), e.Client(), e.Client()
		a.Login("many@example.com", handlerstest.Password)
		b.Login("many@example.com", handlerstest.Password)
		other.Login("bystander@example.com", handlerstest.Password)
		page := a.Get("/account/password")
		handlerstest.ExpectBody(t, "account page", page, `data-testid="sign-out-everywhere"`, "signed in 2 time(s)")
		handlerstest.ExpectRedirect(t, "sign out everywhere", a.Post("/account/sessions/end-all", nil), "/login?signed_out=1")
		handlerstest.ExpectRedirect(t, "this browser", a.Get("/w/default/"), "/login")
		handlerstest.ExpectRedirect(t, "the other browser", b.Get("/w/default/"), "/login")
		handlerstest.ExpectStatus(t, "another account", other.Get("/w/default/"), http.StatusOK)
	})

	t.Run("a password change ends the other sessions and the cookie it replaced", func(t *testing.T) {
		e.User("rotate@example.com", models.RoleEditor)
		a, b := e.Client(), e.Client()
		a.Login("rotate@example.com", handlerstest.Password)
		b.Login("rotate@example.com", handlerstest.Password)
		before := e.CopyCookies(a)
		a.Get("/account/password")
		res := a.Post("/account/password", url.Values{"current": {handlerstest.Password}, "new": {"another long secret"}, "confirm": {"another long secret"}})
		handlerstest.ExpectRedirect(t, "change password", res, "/")
		handlerstest.ExpectStatus(t, "the changing browser stays signed in", a.Get("/w/default/"), http.StatusOK)
		handlerstest.ExpectRedirect(t, "other session", b.Get("/w/default/"), "/login")
		handlerstest.ExpectRedirect(t, "cookie from before the change", before.Get("/w/default/"), "/login")
	})
}

func TestUISignInLandsWhereYouWereGoing(t *testing.T) {
	t.Parallel()
	e := handlerstest.NewEnv(t)
	e.User("land@example.com", models.RoleEditor)

	t.Run("an anonymous page view remembers the page and sign-in returns to it", func(t *testing.T) {
		c := e.Client()
		res := c.Get("/w/default/sources?q=x")
		if loc := res.Header.Get("Location"); loc != "/login?next="+url.QueryEscape("/w/default/sources?q=x") {
			t.Fatalf("anonymous GET: Location %q", loc)
		}
		handlerstest.ExpectBody(t, "login form", c.Get(res.Header.Get("Location")), `name="next" value="/w/default/sources?q=x"`)
		res = c.Post("/login", url.Values{"email": {"land@example.com"}, "password": {handlerstest.Password}, "next": {"/w/default/sources?q=x"}})
		handlerstest.ExpectRedirect(t, "login with next", res, "/w/default/sources?q=x")
	})

	t.Run("a next that leaves the site is ignored", func(t *testing.T) {
		for _, next := range []string{"//evil.example/", "https://evil.example/", "/\\evil.example", "javascript:alert(1)", "/login", "w/default/"} {
			if got := ui.SafeNext(next); got != "" {
				t.Errorf("SafeNext(%q) = %q, want refused", next, got)
			}
			c := e.Client()
			res := c.Post("/login", url.Values{"email": {"land@example.com"}, "password": {handlerstest.Password}, "next": {next}})
			handlerstest.ExpectRedirect(t, "login with next "+next, res, "/")
		}
	})

	t.Run("without next, sign-in lands in the workspace opened last, in any browser", func(t *testing.T) {
		if _, err := e.Store.WorkspaceCreate(context.Background(), "second", "Second"); err != nil {
			t.Fatal(err)
		}
		a := e.Client()
		a.Login("land@example.com", handlerstest.Password)
		handlerstest.ExpectStatus(t, "open second", a.Get("/w/second/"), http.StatusOK)
		a.Post("/logout", nil)
		b := e.Client()
		handlerstest.ExpectRedirect(t, "login elsewhere", b.Login("land@example.com", handlerstest.Password), "/")
		handlerstest.ExpectRedirect(t, "home", b.Get("/"), "/w/second/")
	})
}

func TestUISignInThrottleCountsPerClientAndAccount(t *testing.T) {
	t.Parallel()
	t.Run("a guesser behind a trusted proxy locks out only itself", func(t *testing.T) {
		e := handlerstest.NewEnvWith(t, map[string]string{"LEADGATE_TRUSTED_PROXIES": "127.0.0.1, ::1"})
		e.User("victim@example.com", models.RoleAdmin)
		e.User("colleague@example.com", models.RoleAdmin)
		guesser := http.Header{"X-Forwarded-For": {"198.51.100.7"}}
		c := e.Client()
		for i := range ui.SignInPairBudget {
			handlerstest.ExpectStatus(t, "guess", c.LoginVia(guesser, "victim@example.com", "guess-"+string(rune('a'+i))), http.StatusUnauthorized)
		}
		handlerstest.ExpectStatus(t, "guesser, right password", c.LoginVia(guesser, "victim@example.com", handlerstest.Password), http.StatusTooManyRequests)
		owner := http.Header{"X-Forwarded-For": {"203.0.113.20"}}
		handlerstest.ExpectRedirect(t, "the owner from another client", e.Client().LoginVia(owner, "victim@example.com", handlerstest.Password), "/")
		handlerstest.ExpectRedirect(t, "a colleague from another client", e.Client().LoginVia(owner, "colleague@example.com", handlerstest.Password), "/")
	})

	t.Run("X-Forwarded-For from an untrusted peer is ignored", func(t *testing.T) {
		e := handlerstest.NewEnv(t)
		e.User("spoofed@example.com", models.RoleAdmin)
		c := e.Client()
		for i := range ui.SignInPairBudget {
			fake := http.Header{"X-Forwarded-For": {"192.0.2." + string(rune('1'+i))}}
			handlerstest.ExpectStatus(t, "guess", c.LoginVia(fake, "spoofed@example.com", "guess-"+string(rune('a'+i))), http.StatusUnauthorized)
		}
		fresh := http.Header{"X-Forwarded-For": {"192.0.2.99"}}
		handlerstest.ExpectStatus(t, "a new forged address", c.LoginVia(fresh, "spoofed@example.com", handlerstest.Password), http.StatusTooManyRequests)
	})

	t.Run("one client spraying many accounts is blocked for all of them", func(t *testing.T) {
		e := handlerstest.NewEnv(t)
		e.User("last@example.com", models.RoleViewer)
		c := e.Client()
		for i := range ui.SignInClientBudget {
			email := "nobody" + string(rune('a'+i)) + "@example.com"
			handlerstest.ExpectStatus(t, "spray", c.Login(email, "wrong password"), http.StatusUnauthorized)
		}
		handlerstest.ExpectStatus(t, "a real account from the spraying client", c.Login("last@example.com", handlerstest.Password), http.StatusTooManyRequests)
	})
}

func TestUITransportHeaders(t *testing.T) {
	t.Parallel()
	t.Run("API answers carry nosniff; no HSTS on an http public URL", func(t *testing.T) {
		e := handlerstest.NewEnv(t)
		for _, p := range []string{"/api/v1/workspaces", "/healthz"} {
			res := e.Client().Get(p)
			if res.Header.Get("X-Content-Type-Options") != "nosniff" {
				t.Fatalf("GET %s: X-Content-Type-Options %q", p, res.Header.Get("X-Content-Type-Options"))
			}
			if h := res.Header.Get("Strict-Transport-Security"); h != "" {
				t.Fatalf("GET %s: HSTS %q on an http deployment", p, h)
			}
		}
	})
	t.Run("HSTS when the public URL is https", func(t *testing.T) {
		e := handlerstest.NewEnvWith(t, map[string]string{"LEADGATE_PUBLIC_URL": "https://leadgate.example"})
		for _, p := range []string{"/api/v1/workspaces", "/login"} {
			if h := e.Client().Get(p).Header.Get("Strict-Transport-Security"); !strings.Contains(h, "max-age=31536000") {
				t.Fatalf("GET %s: HSTS %q", p, h)
			}
		}
	})
}

package web

import (
	"errors"
	"log/slog"
	"net/http"
	"net/url"

	"github.com/leadgate/leadgate/handlers/ui"
	"github.com/leadgate/leadgate/internal/principal"
	"github.com/leadgate/leadgate/models"
)

// contentSecurityPolicy allows only this origin's scripts and styles: no
// inline scripts, no inline styles, no framing.
const contentSecurityPolicy = "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; " +
	"font-src 'self'; connect-src 'self'; object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"

// SecurityHeaders sets the CSP and its companions on every web app response.
func SecurityHeaders(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("Content-Security-Policy", contentSecurityPolicy)
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("X-Frame-Options", "DENY")
		h.Set("Referrer-Policy", "same-origin")
		next.ServeHTTP(w, r)
	})
}

// passwordPath is the one page (with sign-out) a user with a one-time password may open.
const passwordPath = "/account/password"

// RequireUser lets signed-in users through with their principal in the
// context. Anonymous users (and expired, signed-out, disabled or
// password-changed sessions) go to /login, remembering a page they asked for; a user holding a one-time password goes to the
// change-password page first.
func RequireUser(store *models.Store, sess *Sessions, log *slog.Logger, fail http.HandlerFunc) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			cur, ok := sess.User(r)
			if !ok {
				toLogin(w, r)
				return
			}
			u, err := store.UserByID(r.Context(), cur.UserID)
			live := false
			if err == nil {
				live, err = sess.Live(r.Context(), cur)
			}
			if errors.Is(err, models.ErrNotFound) || (err == nil && (!live || PasswordVersion(u) != cur.PasswordVersion)) {
				if err := sess.Logout(w, r); err != nil {
					log.Warn("end stale session", "err", err)
				}
				toLogin(w, r)
				return
			}
			if err != nil {
				log.Error("load session user", "err", err)
				fail(w, r)
				return
			}
			p := principal.Principal{Kind: "user", ID: u.ID, Name: u.Email, Role: u.Role}
			r = r.WithContext(principal.With(r.Context(), p))
			if u.MustChangePassword && r.URL.Path != passwordPath && r.URL.Path != "/logout" {
				redirectTo(w, r, passwordPath)
				return
			}
			next.ServeHTTP(w, r)
		})
	}
}

// RequireUIRole answers the 403 page unless the signed-in role is at least need.
func RequireUIRole(need string, forbidden http.HandlerFunc) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			p, ok := principal.From(r.Context())
			if !ok || !models.RoleAtLeast(p.Role, need) {
				forbidden(w, r)
				return
			}
			next.ServeHTTP(w, r)
		})
	}
}

// toLogin sends an anonymous request to the sign-in page; htmx polls get
// HX-Redirect so the whole page navigates rather than a fragment swapping in.
// A page asked for by GET rides along as ?next= so sign-in lands there.
func toLogin(w http.ResponseWriter, r *http.Request) {
	if r.Header.Get("HX-Request") == "true" {
		w.Header().Set("HX-Redirect", "/login")
		w.WriteHeader(http.StatusUnauthorized)
		return
	}
	target := "/login"
	if next := r.URL.RequestURI(); r.Method == http.MethodGet && ui.SafeNext(next) != "" && next != "/" {
		target += "?next=" + url.QueryEscape(next)
	}
	http.Redirect(w, r, target, http.StatusSeeOther)
}

func redirectTo(w http.ResponseWriter, r *http.Request, url string) {
	if r.Header.Get("HX-Request") == "true" {
		w.Header().Set("HX-Redirect", url)
		w.WriteHeader(http.StatusNoContent)
		return
	}
	http.Redirect(w, r, url, http.StatusSeeOther)
}

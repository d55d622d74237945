package web

import (
	"net/http"
	"net/url"

	"github.com/gorilla/csrf"
)

// CSRF protects every state-changing request of the web app with
// gorilla/csrf: a masked token in a form field or the X-CSRF-Token header
// (htmx sends it from hx-headers), checked against a signed cookie, plus
// Origin/Referer checks. When the public URL is plain http (a laptop, a test)
// requests are marked plaintext so the TLS-only Referer rule does not reject
// them; the public URL's host is a trusted origin behind a proxy.
func CSRF(key []byte, publicURL string, secure bool, failed http.Handler) func(http.Handler) http.Handler {
	opts := []csrf.Option{
		csrf.Secure(secure),
		csrf.HttpOnly(true),
		csrf.SameSite(csrf.SameSiteLaxMode),
		csrf.Path("/"),
		csrf.CookieName("leadgate_csrf"),
		csrf.MaxAge(int(SessionTTL.Seconds())),
		csrf.ErrorHandler(failed),
	}
	if u, err := url.Parse(publicURL); err == nil && u.Host != "" {
		opts = append(opts, csrf.TrustedOrigins([]string{u.Host}))
	}
	protect := csrf.Protect(key, opts...)
	return func(next http.Handler) http.Handler {
		h := protect(next)
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if !secure && r.TLS == nil {
				r = csrf.PlaintextHTTPRequest(r)
			}
			h.ServeHTTP(w, r)
		})
	}
}

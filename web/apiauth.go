package web

import (
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"strings"

	"github.com/leadgate/leadgate/internal/principal"
	"github.com/leadgate/leadgate/models"
)

// RequireToken authenticates the admin API with `Authorization: Bearer <token>`.
func RequireToken(store *models.Store, log *slog.Logger) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			raw, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
			if !ok || strings.TrimSpace(raw) == "" {
				w.Header().Set("WWW-Authenticate", `Bearer realm="leadgate"`)
				jsonError(w, http.StatusUnauthorized, "missing bearer token")
				return
			}
			tok, err := store.TokenAuthenticate(r.Context(), strings.TrimSpace(raw))
			if errors.Is(err, models.ErrNotFound) {
				w.Header().Set("WWW-Authenticate", `Bearer realm="leadgate", error="invalid_token"`)
				jsonError(w, http.StatusUnauthorized, "invalid or revoked token")
				return
			}
			if err != nil {
				log.Error("api auth", "err", err)
				jsonError(w, http.StatusServiceUnavailable, "authentication unavailable")
				return
			}
			p := principal.Principal{Kind: "token", ID: tok.ID, Name: tok.Name, Role: tok.Role}
			next.ServeHTTP(w, r.WithContext(principal.With(r.Context(), p)))
		})
	}
}

// RequireRole answers 403 unless the caller's role is at least need.
func RequireRole(need string) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			p, ok := principal.From(r.Context())
			if !ok || !models.RoleAtLeast(p.Role, need) {
				jsonError(w, http.StatusForbidden, "this action needs the "+need+" role")
				return
			}
			next.ServeHTTP(w, r)
		})
	}
}

func jsonError(w http.ResponseWriter, status int, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(map[string]string{"error": msg})
}

// Package handlers is the layer leadgate's HTTP surfaces share: JSON answers, the workspace and actor
// of a request, per-workspace access, masking of personal data, and the source checks both the API and
// the pages run. The surfaces live below it: handlers/hooks (the webhook endpoint), handlers/api (the
// JSON admin API) and handlers/ui (the admin web pages); none of them imports another.
package handlers

import (
	"encoding/json"
	"log/slog"
	"net/http"

	"github.com/go-chi/chi/v5/middleware"
)

// apiError is CONTRACT.md's error body.
type apiError struct {
	Error string `json:"error"`
	Field string `json:"field,omitempty"`
}

func WriteJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

func WriteError(w http.ResponseWriter, status int, field, msg string) {
	WriteJSON(w, status, apiError{Error: msg, Field: field})
}

// ServerError logs err once with the request id and answers a generic 500.
func ServerError(log *slog.Logger, w http.ResponseWriter, r *http.Request, err error) {
	log.Error("request failed", "method", r.Method, "path", r.URL.Path, "request_id", middleware.GetReqID(r.Context()), "err", err)
	WriteError(w, http.StatusInternalServerError, "", "internal error (request "+middleware.GetReqID(r.Context())+")")
}

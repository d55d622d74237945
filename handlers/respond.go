// Package handlers holds leadgate's HTTP handlers: webhooks, the admin API and
// the admin web pages. Handlers parse, validate, call the domain and render.
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

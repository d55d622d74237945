// Package web assembles leadgate's HTTP server: the router, middleware,
// sessions and embedded static files.
package web

import (
	"log/slog"
	"net/http"
	"time"

	"github.com/go-chi/chi/v5"
	"github.com/go-chi/chi/v5/middleware"

	"github.com/leadgate/leadgate/handlers/api"
	"github.com/leadgate/leadgate/handlers/hooks"
	"github.com/leadgate/leadgate/models"
)

// Deps are the handlers and services the router needs.
type Deps struct {
	Store  *models.Store
	Log    *slog.Logger
	Hooks  *hooks.Hooks
	API    *api.API
	Guards *api.Guards // nil: guard routes are not mounted
	// Destinations serves the CRM sync's API (nil: not mounted).
	Destinations *api.Destinations
	Health       *api.Health
	Metrics      http.Handler
	// UI mounts the admin web app at / (nil: API only).
	UI func(r chi.Router)
	// TrustedProxies are the IPs and CIDRs of reverse proxies whose X-Forwarded-For names the client
	// (empty: the TCP peer is the client, and the header is ignored).
	TrustedProxies []string
	// HSTS sends Strict-Transport-Security (the public URL is https).
	HSTS bool
}

// Routes is the service's one router: the public routes (webhooks, health, metrics) here, the
// /api/v1 tree in api_routes.go and the admin pages in ui_routes.go.
func Routes(d Deps) http.Handler {
	r := chi.NewRouter()
	r.Use(middleware.RequestID)
	if len(d.TrustedProxies) > 0 {
		r.Use(middleware.ClientIPFromXFF(proxyPrefixes(d.TrustedProxies)...))
	} else {
		r.Use(middleware.ClientIPFromRemoteAddr)
	}
	r.Use(transportHeaders(d.HSTS))
	r.Use(requestLogger(d.Log))
	r.Use(recoverer(d.Log))

	// Public: webhooks, health and metrics.
	r.Get("/healthz", d.Health.Live)
	r.Get("/readyz", d.Health.Ready)
	r.Get("/api/v1/openapi.json", api.OpenAPI) // public: describes the API, holds no data
	r.Handle("/metrics", d.Metrics)
	r.With(middleware.Timeout(10*time.Second)).Post("/hooks/{token}", d.Hooks.ReceiveWebhook)
	r.Get("/hooks/{token}", d.Hooks.ReceiveWebhook) // Meta's hub.challenge handshake

	r.Route("/api/v1", apiRoutes(d))
	if d.UI != nil {
		d.UI(r)
	}
	return r
}

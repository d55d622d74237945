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

// Routes lists every route of the service in one place.
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

	r.Route("/api/v1", func(r chi.Router) {
		r.Use(middleware.Timeout(30 * time.Second))
		r.Use(RequireToken(d.Store, d.Log))
		r.Get("/workspaces", d.API.ListWorkspaces) // lists only what the caller may open
		r.Group(func(r chi.Router) {
			// Instance-wide actions: never for a token limited to some workspaces.
			r.Use(d.API.InstanceWide)
			r.With(RequireRole(models.RoleAdmin)).Post("/workspaces", d.API.CreateWorkspace)
		})
		r.Route("/workspaces/{ws}", func(r chi.Router) {
			r.Use(d.API.LoadWorkspace)
			editor := RequireRole(models.RoleEditor)
			r.Get("/sources", d.API.ListSources)
			r.With(editor).Post("/sources", d.API.CreateSource)
			r.Get("/sources/{id}", d.API.GetSource)
			r.With(editor).Patch("/sources/{id}", d.API.UpdateSource)
			r.With(editor).Delete("/sources/{id}", d.API.DeleteSource)
			r.With(editor).Post("/sources/{id}/rotate-secret", d.API.RotateSourceSecret)
			r.Get("/events", d.API.ListEvents)
			r.Get("/events/{id}", d.API.GetEvent)
			r.Get("/stats", d.API.GetStats)
			r.Get("/alarms/firing", d.API.ListFiringAlarms)
			r.Get("/stages", d.API.GetStageRules)
			r.With(editor).Put("/stages", d.API.PutStageRules)
			r.With(editor).Post("/stages/dry-run", d.API.DryRunStageRules)
			r.Get("/contacts", d.API.ListContacts)
			r.Get("/contacts/{id}", d.API.GetContact)
			r.With(editor).Post("/contacts/{id}/corrections", d.API.CorrectContactField)
			r.With(editor).Post("/contacts/{id}/stage", d.API.SetContactStage)
			r.With(editor).Post("/contacts/{id}/merge", d.API.MergeContact)
			r.With(editor).Get("/contacts/{id}/export", d.API.ExportContact)
			r.With(RequireRole(models.RoleAdmin)).Post("/contacts/{id}/erase", d.API.EraseContact)
			r.Get("/dead-letters", d.API.ListDeadLetters)
			r.Get("/dead-letters/groups", d.API.ListDeadLetterGroups)
			r.With(editor).Post("/dead-letters/act-on-all", d.API.ActOnDeadLetters)
			r.Get("/dead-letters/{id}", d.API.GetDeadLetter)
			r.With(editor).Post("/dead-letters/{id}/replay", d.API.ReplayDeadLetter)
			r.With(editor).Post("/dead-letters/{id}/discard", d.API.DiscardDeadLetter)
			r.Get("/audit", d.API.ListAudit)
			if d.Destinations != nil {
				d.Destinations.RegisterRoutes(r, editor)
			}
			if g := d.Guards; g != nil {
				admin := RequireRole(models.RoleAdmin)
				r.Get("/guards/loop", g.GetLoopSettings)
				r.With(editor).Put("/guards/loop", g.PutLoopSettings)
				r.Get("/guards/alerting", g.GetAlertingSettings)
				r.With(admin).Put("/guards/alerting", g.PutAlertingSettings)
				r.Get("/guards/breakers", g.ListBreakers)
				r.With(editor).Post("/guards/breakers/{contact}/reset", g.ResetBreaker)
				r.Get("/sources/{id}/filters", g.GetSourceFilters)
				r.With(editor).Put("/sources/{id}/filters", g.PutSourceFilters)
				r.With(editor).Delete("/sources/{id}/filters", g.DeleteSourceFilters)
				r.With(editor).Post("/sources/{id}/filters/test", g.TestSourceFilters)
				r.Get("/alarms/silence", g.ListSilenceAlarms)
				r.With(editor).Post("/alarms/silence", g.CreateSilenceAlarm)
				r.With(editor).Put("/alarms/silence/{id}", g.UpdateSilenceAlarm)
				r.With(editor).Delete("/alarms/silence/{id}", g.DeleteSilenceAlarm)
				r.Get("/alarms/health", g.ListHealthAlarms)
				r.With(editor).Put("/alarms/health/{metric}", g.PutHealthAlarm)
				r.Get("/alerts", g.ListAlerts)
				r.Get("/alerts/channels", g.ListAlertChannels)
				r.With(editor).Post("/alerts/channels", g.CreateAlertChannel)
				r.Get("/alerts/channels/{id}", g.GetAlertChannel)
				r.With(editor).Put("/alerts/channels/{id}", g.UpdateAlertChannel)
				r.With(editor).Delete("/alerts/channels/{id}", g.DeleteAlertChannel)
				r.With(editor).Post("/alerts/channels/{id}/test", g.TestAlertChannel)
			}
		})
	})
	if d.UI != nil {
		d.UI(r)
	}
	return r
}

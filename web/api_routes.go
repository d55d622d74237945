package web

import (
	"time"

	"github.com/go-chi/chi/v5"
	"github.com/go-chi/chi/v5/middleware"

	"github.com/leadgate/leadgate/models"
)

// apiRoutes is the whole /api/v1 tree: every route needs a token (the OpenAPI document, public, is
// mounted with the public routes); writes state their minimum role.
func apiRoutes(d Deps) func(r chi.Router) {
	return func(r chi.Router) {
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
			if h := d.Destinations; h != nil {
				r.Get("/destinations", h.ListDestinations)
				r.With(editor).Post("/destinations", h.CreateDestination)
				r.Get("/destinations/{id}", h.GetDestination)
				r.With(editor).Patch("/destinations/{id}", h.UpdateDestination)
				r.With(editor).Delete("/destinations/{id}", h.DeleteDestination)
				r.With(editor).Post("/destinations/{id}/test-connection", h.TestConnection)
				r.With(editor).Get("/destinations/{id}/discover", h.Discover)
				r.With(editor).Post("/destinations/{id}/loop-fields", h.LoopFields)
				r.With(editor).Post("/destinations/{id}/import", h.StartImport)
				r.Get("/destinations/{id}/imports/{import}", h.GetImport)
				r.Get("/destinations/{id}/stats", h.Stats)
				r.Get("/destinations/{id}/conflicts", h.Conflicts)
				r.Get("/destinations/{id}/drift", h.Drift)
				r.Get("/destinations/{id}/sandbox/contacts", h.SandboxContacts)
				r.With(editor).Post("/destinations/{id}/resync", h.Resync)
				r.With(editor).Post("/destinations/{id}/dead-letters/{dl}/replay", h.ReplayDeadLetter)
				r.Get("/side-effect-webhook", h.GetSideEffectWebhook)
				r.With(editor).Put("/side-effect-webhook", h.PutSideEffectWebhook)
				r.Get("/hydration-providers", h.ListHydrationProviders)
				r.With(editor).Put("/hydration-providers/{provider}", h.PutHydrationProvider)
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
	}
}

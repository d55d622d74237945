package web

import (
	"log/slog"
	"net/http"
	"time"

	"github.com/go-chi/chi/v5"
	"github.com/go-chi/chi/v5/middleware"

	"github.com/leadgate/leadgate/handlers/ui"
	"github.com/leadgate/leadgate/models"
)

// UIDeps are what the admin web app's routes need.
type UIDeps struct {
	Pages    *ui.UI
	Sessions *Sessions
	Assets   *Assets
	Store    *models.Store
	Log      *slog.Logger
	// CSRFKey signs the CSRF cookie (DeriveKey(secret, "csrf")).
	CSRFKey   []byte
	PublicURL string
	// Secure marks cookies Secure and keeps the TLS Referer checks (https public URL).
	Secure bool
}

// UIRoutes returns the mount function for Deps.UI: every page of the web app.
// Every route sits behind the CSP headers and CSRF; all but /login and
// /static need a signed-in user; mutations state their minimum role.
func UIRoutes(d UIDeps) func(r chi.Router) {
	ui := d.Pages
	return func(r chi.Router) {
		r.Method(http.MethodGet, "/static/*", d.Assets)
		r.Method(http.MethodHead, "/static/*", d.Assets)
		r.Group(func(r chi.Router) {
			r.Use(middleware.Timeout(30 * time.Second))
			r.Use(SecurityHeaders)
			r.Use(CSRF(d.CSRFKey, d.PublicURL, d.Secure, http.HandlerFunc(ui.CSRFFailed)))
			r.Get("/login", ui.ShowLogin)
			r.Post("/login", ui.Login)

			r.Group(func(r chi.Router) {
				r.Use(RequireUser(d.Store, d.Sessions, d.Log, ui.ServerErrorPage))
				editor := RequireUIRole(models.RoleEditor, ui.Forbidden)
				admin := RequireUIRole(models.RoleAdmin, ui.Forbidden)

				r.Get("/", ui.Home)
				r.Post("/logout", ui.Logout)
				r.Post("/account/sessions/end-all", ui.LogoutEverywhere)
				r.Get("/account/password", ui.ShowPassword)
				r.Post("/account/password", ui.ChangePassword)

				r.Route("/w/{ws}", func(r chi.Router) {
					r.Use(ui.LoadWorkspace)
					r.Get("/", ui.ShowDashboard)
					r.Get("/health", ui.HealthFragment)
					r.Get("/events", ui.ListEvents)
					r.Get("/events/{id}", ui.ShowEvent)
					r.Get("/audit", ui.ListAudit)
					r.Get("/sources", ui.ListSources)
					r.With(editor).Get("/sources/new", ui.NewSource)
					r.With(editor).Get("/sources/stage-row", ui.StageRow)
					r.With(editor).Post("/sources", ui.CreateSource)
					r.Get("/sources/{id}", ui.ShowSource)
					r.With(editor).Post("/sources/{id}", ui.UpdateSource)
					r.With(editor).Post("/sources/{id}/enabled", ui.SetSourceEnabled)
					r.With(editor).Post("/sources/{id}/rotate", ui.RotateSourceSecret)
					r.With(editor).Post("/sources/{id}/delete", ui.DeleteSource)

					r.Get("/sales", ui.ShowSales)
					r.Get("/sales/export.csv", ui.ExportSalesCSV)

					r.Get("/contacts", ui.ListContacts)
					r.Get("/contacts/{id}", ui.ShowContact)
					r.With(editor).Post("/contacts/{id}/correct", ui.CorrectContact)
					r.With(editor).Post("/contacts/{id}/stage", ui.SetContactStageUI)
					r.With(editor).Post("/contacts/{id}/merge", ui.MergeContactUI)
					r.With(editor).Get("/contacts/{id}/export", ui.ExportContactUI)
					r.With(admin).Post("/contacts/{id}/erase", ui.EraseContactUI)

					r.Get("/dead-letters", ui.ListDeadLetters)
					r.With(editor).Post("/dead-letters/bulk", ui.BulkDeadLetters)
					r.With(editor).Post("/dead-letters/act-on-all", ui.ActOnAllDeadLetters)
					r.Get("/dead-letters/{id}", ui.ShowDeadLetter)
					r.With(editor).Post("/dead-letters/{id}/replay", ui.ReplayDeadLetterUI)
					r.With(editor).Post("/dead-letters/{id}/discard", ui.DiscardDeadLetterUI)

					r.Get("/stages", ui.ShowStageRules)
					r.With(editor).Post("/stages", ui.SaveStageRules)
					r.With(editor).Post("/stages/draft", ui.DraftStageRules)
					r.With(editor).Post("/stages/dry-run", ui.DryRunStageRulesUI)
					r.Get("/stages/versions/{version}", ui.ShowStageRulesVersion)
					r.With(editor).Post("/stages/sources/{id}", ui.SaveSourceMapping)

					r.Get("/destinations", ui.ListDestinations)
					r.With(editor).Post("/destinations", ui.CreateDestination)
					r.Get("/destinations/{id}", ui.ShowDestination)
					r.With(editor).Post("/destinations/{id}", ui.UpdateDestinationUI)
					r.With(editor).Post("/destinations/{id}/paused", ui.SetDestinationPaused)
					r.With(editor).Post("/destinations/{id}/test", ui.TestDestination)
					r.With(editor).Post("/destinations/{id}/setup-fields", ui.CreateSetupFields)

					r.Get("/guards", ui.ShowGuards)
					r.With(editor).Post("/guards/loop", ui.SaveLoopSettings)
					r.With(editor).Post("/guards/breakers/{contact}/reset", ui.ResetBreakerUI)
					r.With(editor).Post("/guards/filters/{id}", ui.SaveSourceFilters)
					r.With(editor).Post("/guards/silence", ui.CreateSilenceAlarmUI)
					r.With(editor).Post("/guards/silence/{id}", ui.UpdateSilenceAlarmUI)
					r.With(editor).Post("/guards/silence/{id}/delete", ui.DeleteSilenceAlarmUI)
					r.With(editor).Post("/guards/health/{metric}", ui.SaveHealthAlarmUI)
					r.With(admin).Post("/guards/alerting", ui.SaveAlertingSettingsUI)
					r.With(editor).Post("/guards/channels", ui.CreateAlertChannelUI)
					r.With(editor).Post("/guards/channels/{id}/test", ui.TestAlertChannelUI)
					r.With(editor).Post("/guards/channels/{id}/delete", ui.DeleteAlertChannelUI)
				})

				r.Get("/workspaces", ui.ListWorkspaces)
				r.With(admin).Post("/workspaces", ui.CreateWorkspace)
				r.With(admin).Post("/workspaces/{ws}/rename", ui.RenameWorkspace)
				r.With(admin).Post("/workspaces/{ws}/archive", ui.ArchiveWorkspace)

				r.Group(func(r chi.Router) {
					r.Use(admin)
					r.Get("/tokens", ui.ListTokens)
					r.Post("/tokens", ui.CreateToken)
					r.Post("/tokens/{id}/revoke", ui.RevokeToken)
					r.Get("/users", ui.ListUsers)
					r.Post("/users", ui.CreateUser)
					r.Post("/users/{id}/disabled", ui.SetUserDisabled)
					r.Post("/users/{id}/workspaces", ui.SetUserWorkspace)
					r.Post("/users/{id}/workspaces/{ws}/remove", ui.RemoveUserWorkspace)
					r.Get("/queues", ui.ListQueues)
					r.Post("/queues/{queue}/archived/{id}/{action}", ui.ArchivedTaskAction)
					r.Post("/queues/{queue}/archived/{action}", ui.ArchivedTasksAll)
				})
			})
		})
	}
}

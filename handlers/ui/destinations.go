package ui

import (
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"

	"github.com/a-h/templ"
	"github.com/go-chi/chi/v5"
	"github.com/go-chi/chi/v5/middleware"

	"github.com/leadgate/leadgate/actions"
	"github.com/leadgate/leadgate/crm"
	"github.com/leadgate/leadgate/handlers"
	"github.com/leadgate/leadgate/models"
	"github.com/leadgate/leadgate/views"
)

// destinationKinds are the CRM choices of the create form.
var destinationKinds = []views.Option{
	{Value: crm.KindActiveCampaign, Label: "ActiveCampaign"},
	{Value: crm.KindHubSpot, Label: "HubSpot"},
	{Value: crm.KindGoHighLevel, Label: "GoHighLevel"},
	{Value: crm.KindSandbox, Label: "Sandbox (built-in test CRM)"},
}

// ListDestinations shows the workspace's CRM destinations and the create form.
func (u *UI) ListDestinations(w http.ResponseWriter, r *http.Request) {
	u.destinationsPage(w, r, http.StatusOK, views.DestinationForm{Kind: crm.KindActiveCampaign, BatchSize: "20"}, nil)
}

func (u *UI) destinationsPage(w http.ResponseWriter, r *http.Request, status int, form views.DestinationForm, errs views.FieldErrors) {
	ws := handlers.WorkspaceFrom(r)
	v := views.DestinationsView{Workspace: wsRef(ws), Kinds: destinationKinds, Form: form, Errors: errs, CanEdit: canEdit(r),
		Available: u.Destinations != nil, Now: u.now()}
	list, err := u.Store.DestinationList(r.Context(), ws.ID)
	if err != nil {
		u.serverError(w, r, err)
		return
	}
	for _, d := range list {
		row, err := u.destinationRow(r, d)
		if err != nil {
			u.serverError(w, r, err)
			return
		}
		v.Rows = append(v.Rows, row)
	}
	u.page(w, r, status, views.NavDest, "Destinations", func(m views.PageMeta) templ.Component { return views.DestinationsPage(m, v) })
}

// destinationRow joins a destination with its sync figures (never its token).
func (u *UI) destinationRow(r *http.Request, d models.Destination) (views.DestinationRow, error) {
	st, err := u.Store.DestinationStatsGet(r.Context(), d)
	if err != nil {
		return views.DestinationRow{}, err
	}
	return views.DestinationRow{ID: d.ID, Name: d.Name, Kind: d.Kind, BaseURL: d.BaseURL, HasToken: len(d.APITokenEnc) > 0,
		Enabled: d.Enabled, Paused: d.Paused, PausedReason: d.PausedReason, PauseCause: d.PauseCause, PausedUntil: d.PausedUntil, RateLimitRPS: d.RateLimitRPS, BatchSize: d.BatchSize,
		StageField: d.Config.StageField, LocationID: d.Config.LocationID, Synced: st.Synced, Pending: st.Pending, Failures: st.Failures,
		RateLimited: st.RateLimited, Calls: st.Calls, Conflicts: st.Conflicts, OpenDead: st.OpenDeadLetters, LagSeconds: st.SyncLagSec,
		LastSyncAt: st.LastSyncAt, LastError: st.LastError}, nil
}

// destinationBody turns the form into the destination action's input; an empty token means "keep the
// stored one" and is left out.
func destinationBody(r *http.Request, editing bool) (views.DestinationForm, actions.DestinationInput, views.FieldErrors) {
	f := views.DestinationForm{Name: strings.TrimSpace(r.PostFormValue("name")), Kind: r.PostFormValue("kind"),
		BaseURL: strings.TrimSpace(r.PostFormValue("base_url")), StageField: strings.TrimSpace(r.PostFormValue("stage_field")),
		LocationID: strings.TrimSpace(r.PostFormValue("location_id")), RateLimitRPS: strings.TrimSpace(r.PostFormValue("rate_limit_rps")),
		BatchSize: strings.TrimSpace(r.PostFormValue("batch_size")), Automations: strings.TrimSpace(r.PostFormValue("automations")),
		DailyLimit: strings.TrimSpace(r.PostFormValue("daily_limit"))}
	text := func(v string) *string { return &v }
	in := actions.DestinationInput{Name: text(f.Name), BaseURL: text(f.BaseURL), StageField: text(f.StageField), LocationID: text(f.LocationID)}
	if f.Automations != "" {
		in.Automations = text(f.Automations)
	}
	if !editing {
		in.Kind = text(f.Kind)
	}
	if token := strings.TrimSpace(r.PostFormValue("api_token")); token != "" {
		in.APIToken = text(token)
	}
	errs := views.FieldErrors{}
	in.RateLimitRPS = destinationFormInt(errs, "rate_limit_rps", f.RateLimitRPS)
	in.BatchSize = destinationFormInt(errs, "batch_size", f.BatchSize)
	in.DailyLimit = destinationFormInt(errs, "daily_limit", f.DailyLimit)
	return f, in, errs
}

// destinationFormInt reads a whole-number input; empty leaves the setting as it is (nil), anything else
// not a number is refused in errs under key.
func destinationFormInt(errs views.FieldErrors, key, raw string) *int {
	if raw == "" {
		return nil
	}
	n, err := strconv.Atoi(raw)
	if err != nil {
		errs[key] = "Enter a whole number."
		return nil
	}
	return &n
}

// CreateDestination validates and stores a destination through the destination action (sealed token,
// audit in the same transaction), as the API does.
func (u *UI) CreateDestination(w http.ResponseWriter, r *http.Request) {
	if u.Destinations == nil {
		u.NotFound(w, r)
		return
	}
	form, in, errs := destinationBody(r, false)
	if errs.Any() {
		u.destinationsPage(w, r, http.StatusUnprocessableEntity, form, errs)
		return
	}
	id, err := u.Destinations.CreateDestination(r.Context(), handlers.WorkspaceFrom(r).ID, handlers.Actor(r), in)
	var invalid *actions.FieldError
	if errors.As(err, &invalid) {
		u.destinationsPage(w, r, http.StatusUnprocessableEntity, form, views.FieldErrors{destinationField(invalid.Field): capitalize(invalid.Message)})
		return
	}
	if err != nil {
		u.serverError(w, r, fmt.Errorf("ui: create destination: %w", err))
		return
	}
	u.flashRedirect(w, r, "/w/"+handlers.WorkspaceFrom(r).Slug+"/destinations/"+strconv.FormatInt(id, 10), "ok",
		"Destination "+form.Name+" added. Test the connection to check the token.")
}

// destinationField maps an API field onto the form's inputs.
func destinationField(f string) string {
	switch f {
	case "name", "kind", "base_url", "api_token", "stage_field", "location_id", "rate_limit_rps", "batch_size", "automations", "daily_limit":
		return f
	}
	return "form"
}

func capitalize(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:] + "."
}

// loadDestination reads {id} of the current workspace, answering 404 itself.
func (u *UI) loadDestination(w http.ResponseWriter, r *http.Request) (models.Destination, bool) {
	id, err := strconv.ParseInt(chi.URLParam(r, "id"), 10, 64)
	if err != nil || u.Destinations == nil {
		u.NotFound(w, r)
		return models.Destination{}, false
	}
	d, err := u.Store.DestinationGet(r.Context(), handlers.WorkspaceFrom(r).ID, id)
	if errors.Is(err, models.ErrNotFound) || (err == nil && d.DeletedAt != nil) {
		u.NotFound(w, r)
		return d, false
	}
	if err != nil {
		u.serverError(w, r, err)
		return d, false
	}
	return d, true
}

// ShowDestination renders one destination with its figures and actions.
func (u *UI) ShowDestination(w http.ResponseWriter, r *http.Request) {
	d, ok := u.loadDestination(w, r)
	if !ok {
		return
	}
	u.destinationPage(w, r, http.StatusOK, d, nil, nil)
}

func (u *UI) destinationPage(w http.ResponseWriter, r *http.Request, status int, d models.Destination, form *views.DestinationForm, errs views.FieldErrors) {
	row, err := u.destinationRow(r, d)
	if err != nil {
		u.serverError(w, r, err)
		return
	}
	if form == nil {
		form = &views.DestinationForm{Name: d.Name, Kind: d.Kind, BaseURL: d.BaseURL, StageField: d.Config.StageField, LocationID: d.Config.LocationID,
			RateLimitRPS: strconv.Itoa(d.RateLimitRPS), BatchSize: strconv.Itoa(d.BatchSize), Automations: d.Config.Automations,
			DailyLimit: strconv.Itoa(d.Config.DailyLimit)}
	}
	v := views.DestinationDetailView{Workspace: wsRef(handlers.WorkspaceFrom(r)), Row: row, Form: *form, Errors: errs, CanEdit: canEdit(r), Now: u.now()}
	u.page(w, r, status, views.NavDest, d.Name, func(m views.PageMeta) templ.Component { return views.DestinationPage(m, v) })
}

// UpdateDestinationUI saves settings (and a new token when one is typed).
func (u *UI) UpdateDestinationUI(w http.ResponseWriter, r *http.Request) {
	d, ok := u.loadDestination(w, r)
	if !ok {
		return
	}
	form, in, errs := destinationBody(r, true)
	form.Kind = d.Kind
	if errs.Any() {
		u.destinationPage(w, r, http.StatusUnprocessableEntity, d, &form, errs)
		return
	}
	_, err := u.Destinations.UpdateDestination(r.Context(), d, handlers.Actor(r), in)
	var invalid *actions.FieldError
	if errors.As(err, &invalid) {
		u.destinationPage(w, r, http.StatusUnprocessableEntity, d, &form, views.FieldErrors{destinationField(invalid.Field): capitalize(invalid.Message)})
		return
	}
	if err != nil {
		u.serverError(w, r, fmt.Errorf("ui: update destination: %w", err))
		return
	}
	u.flashRedirect(w, r, destinationPath(r, d.ID), "ok", "Destination saved.")
}

// SetDestinationPaused pauses (work is held) or resumes (work drains) a destination.
func (u *UI) SetDestinationPaused(w http.ResponseWriter, r *http.Request) {
	d, ok := u.loadDestination(w, r)
	if !ok {
		return
	}
	paused := r.PostFormValue("paused") == "true"
	if _, err := u.Destinations.UpdateDestination(r.Context(), d, handlers.Actor(r), actions.DestinationInput{Paused: &paused}); err != nil {
		u.serverError(w, r, fmt.Errorf("ui: pause destination: %w", err))
		return
	}
	msg := "Destination resumed: held work drains now."
	if paused {
		msg = "Destination paused: changes keep queuing until you resume."
	}
	u.flashRedirect(w, r, destinationPath(r, d.ID), "ok", msg)
}

// destinationFailure is how an onboarding action's error reads in a flash, with the HTTP status the API
// answers it with: the typed errors' own message, and for any other error the API's generic 500 text
// (the error itself is logged, never shown).
func (u *UI) destinationFailure(r *http.Request, err error) (status int, msg string) {
	var crmErr *actions.DestinationCRMError
	var fieldsErr *actions.DestinationFieldsError
	var invalid *actions.FieldError
	var missing *actions.NotFoundError
	var conflict *actions.ConflictError
	var upstream *actions.UpstreamError
	switch {
	case errors.As(err, &crmErr):
		return http.StatusBadGateway, crmErr.Error()
	case errors.As(err, &fieldsErr):
		return http.StatusConflict, fieldsErr.Message
	case errors.As(err, &invalid):
		return http.StatusBadRequest, invalid.Message
	case errors.As(err, &missing):
		return http.StatusNotFound, missing.Message
	case errors.As(err, &conflict):
		return http.StatusConflict, conflict.Message
	case errors.As(err, &upstream):
		return http.StatusBadGateway, upstream.Message
	}
	id := middleware.GetReqID(r.Context())
	u.Log.Error("ui destination action failed", "method", r.Method, "path", r.URL.Path, "request_id", id, "err", err)
	return http.StatusInternalServerError, "internal error (request " + id + ")"
}

// TestDestination makes one read call with the stored credentials and lists every piece of the setup
// the account lacks (the test-connection action the API runs too).
func (u *UI) TestDestination(w http.ResponseWriter, r *http.Request) {
	d, ok := u.loadDestination(w, r)
	if !ok {
		return
	}
	rep, err := u.Destinations.TestConnection(r.Context(), d)
	if err != nil {
		status, msg := u.destinationFailure(r, err)
		if msg == "" {
			msg = "no answer (HTTP " + strconv.Itoa(status) + ")"
		}
		u.flashRedirect(w, r, destinationPath(r, d.ID), "error", "Connection failed: "+msg)
		return
	}
	if rep.Complete() || len(rep.Missing) == 0 {
		u.flashRedirect(w, r, destinationPath(r, d.ID), "ok", "Connection works: "+d.Name+" answered with the stored token.")
		return
	}
	var parts []string
	for i, m := range rep.Missing {
		parts = append(parts, strconv.Itoa(i+1)+") "+m.Message)
	}
	msg := "Connection works, but the setup is incomplete: " + strings.Join(parts, " ")
	if rep.CanCreate {
		msg += " Use “Create missing fields” to let leadgate create the loop-breaker and stage fields."
	}
	u.flashRedirect(w, r, destinationPath(r, d.ID), "error", msg)
}

// CreateSetupFields creates the loop-breaker and stage fields the account lacks (the loop-fields action
// with create), which resumes a destination paused for them.
func (u *UI) CreateSetupFields(w http.ResponseWriter, r *http.Request) {
	d, ok := u.loadDestination(w, r)
	if !ok {
		return
	}
	res, err := u.Destinations.LoopFields(r.Context(), d, handlers.Actor(r), true)
	if err != nil {
		status, msg := u.destinationFailure(r, err)
		u.flashRedirect(w, r, destinationPath(r, d.ID), "error", "Fields not created: "+cmpOrStr(msg, "HTTP "+strconv.Itoa(status)))
		return
	}
	msg := "Nothing to create."
	if len(res.Created) > 0 {
		msg = "Created " + strings.Join(res.Created, ", ") + "."
	}
	if res.Resumed {
		msg += " The destination resumed: held work drains now."
	}
	for _, m := range res.Missing {
		msg += " Still missing: " + m.Message + "."
	}
	u.flashRedirect(w, r, destinationPath(r, d.ID), "ok", msg)
}

func cmpOrStr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

func destinationPath(r *http.Request, id int64) string {
	return "/w/" + handlers.WorkspaceFrom(r).Slug + "/destinations/" + strconv.FormatInt(id, 10)
}

package handlers

import (
	"encoding/json"
	"errors"
	"net/http"
	"strconv"
	"strings"

	"github.com/a-h/templ"
	"github.com/go-chi/chi/v5"

	"github.com/leadgate/leadgate/crm"
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
	ws := workspaceFrom(r)
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

// destinationBody turns the form into the API's JSON input; an empty token
// means "keep the stored one" and is left out.
func destinationBody(r *http.Request, editing bool) (views.DestinationForm, map[string]any, views.FieldErrors) {
	f := views.DestinationForm{Name: strings.TrimSpace(r.PostFormValue("name")), Kind: r.PostFormValue("kind"),
		BaseURL: strings.TrimSpace(r.PostFormValue("base_url")), StageField: strings.TrimSpace(r.PostFormValue("stage_field")),
		LocationID: strings.TrimSpace(r.PostFormValue("location_id")), RateLimitRPS: strings.TrimSpace(r.PostFormValue("rate_limit_rps")),
		BatchSize: strings.TrimSpace(r.PostFormValue("batch_size")), Automations: strings.TrimSpace(r.PostFormValue("automations"))}
	body := map[string]any{"name": f.Name, "base_url": f.BaseURL, "stage_field": f.StageField, "location_id": f.LocationID}
	if f.Automations != "" {
		body["automations"] = f.Automations
	}
	if !editing {
		body["kind"] = f.Kind
	}
	if token := strings.TrimSpace(r.PostFormValue("api_token")); token != "" {
		body["api_token"] = token
	}
	errs := views.FieldErrors{}
	for key, raw := range map[string]string{"rate_limit_rps": f.RateLimitRPS, "batch_size": f.BatchSize} {
		if raw == "" {
			continue
		}
		n, err := strconv.Atoi(raw)
		if err != nil {
			errs[key] = "Enter a whole number."
			continue
		}
		body[key] = n
	}
	return f, body, errs
}

// CreateDestination validates and stores a destination through the API's
// handler (sealed token, audit in the same transaction).
func (u *UI) CreateDestination(w http.ResponseWriter, r *http.Request) {
	if u.Destinations == nil {
		u.NotFound(w, r)
		return
	}
	form, body, errs := destinationBody(r, false)
	if errs.Any() {
		u.destinationsPage(w, r, http.StatusUnprocessableEntity, form, errs)
		return
	}
	res := u.viaAPI(r, u.Destinations.CreateDestination, http.MethodPost, body)
	if res.Status == http.StatusBadRequest {
		u.destinationsPage(w, r, http.StatusUnprocessableEntity, form, views.FieldErrors{destinationField(res.Field): capitalize(res.Error)})
		return
	}
	if !res.OK() {
		u.serverError(w, r, errors.New("ui: create destination: "+strconv.Itoa(res.Status)+" "+res.Error))
		return
	}
	var out struct {
		ID int64 `json:"id"`
	}
	_ = json.Unmarshal(res.Body, &out)
	u.flashRedirect(w, r, "/w/"+workspaceFrom(r).Slug+"/destinations/"+strconv.FormatInt(out.ID, 10), "ok",
		"Destination "+form.Name+" added. Test the connection to check the token.")
}

// destinationField maps an API field onto the form's inputs.
func destinationField(f string) string {
	switch f {
	case "name", "kind", "base_url", "api_token", "stage_field", "location_id", "rate_limit_rps", "batch_size", "automations":
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
	d, err := u.Store.DestinationGet(r.Context(), workspaceFrom(r).ID, id)
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
			RateLimitRPS: strconv.Itoa(d.RateLimitRPS), BatchSize: strconv.Itoa(d.BatchSize), Automations: d.Config.Automations}
	}
	v := views.DestinationDetailView{Workspace: wsRef(workspaceFrom(r)), Row: row, Form: *form, Errors: errs, CanEdit: canEdit(r), Now: u.now()}
	u.page(w, r, status, views.NavDest, d.Name, func(m views.PageMeta) templ.Component { return views.DestinationPage(m, v) })
}

// UpdateDestinationUI saves settings (and a new token when one is typed).
func (u *UI) UpdateDestinationUI(w http.ResponseWriter, r *http.Request) {
	d, ok := u.loadDestination(w, r)
	if !ok {
		return
	}
	form, body, errs := destinationBody(r, true)
	form.Kind = d.Kind
	if errs.Any() {
		u.destinationPage(w, r, http.StatusUnprocessableEntity, d, &form, errs)
		return
	}
	res := u.viaAPI(r, u.Destinations.UpdateDestination, http.MethodPatch, body)
	if res.Status == http.StatusBadRequest {
		u.destinationPage(w, r, http.StatusUnprocessableEntity, d, &form, views.FieldErrors{destinationField(res.Field): capitalize(res.Error)})
		return
	}
	if !res.OK() {
		u.serverError(w, r, errors.New("ui: update destination: "+strconv.Itoa(res.Status)+" "+res.Error))
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
	res := u.viaAPI(r, u.Destinations.UpdateDestination, http.MethodPatch, map[string]bool{"paused": paused})
	if !res.OK() {
		u.serverError(w, r, errors.New("ui: pause destination: "+strconv.Itoa(res.Status)+" "+res.Error))
		return
	}
	msg := "Destination resumed: held work drains now."
	if paused {
		msg = "Destination paused: changes keep queuing until you resume."
	}
	u.flashRedirect(w, r, destinationPath(r, d.ID), "ok", msg)
}

// TestDestination makes one read call with the stored credentials and lists every piece of the setup
// the account lacks (the API's test-connection answer).
func (u *UI) TestDestination(w http.ResponseWriter, r *http.Request) {
	d, ok := u.loadDestination(w, r)
	if !ok {
		return
	}
	res := u.viaAPI(r, u.Destinations.TestConnection, http.MethodPost, nil)
	if !res.OK() {
		msg := res.Error
		if msg == "" {
			msg = "no answer (HTTP " + strconv.Itoa(res.Status) + ")"
		}
		u.flashRedirect(w, r, destinationPath(r, d.ID), "error", "Connection failed: "+msg)
		return
	}
	var out struct {
		Complete  bool `json:"setup_complete"`
		CanCreate bool `json:"can_create"`
		Missing   []struct {
			Message string `json:"message"`
		} `json:"missing"`
	}
	_ = json.Unmarshal(res.Body, &out)
	if out.Complete || len(out.Missing) == 0 {
		u.flashRedirect(w, r, destinationPath(r, d.ID), "ok", "Connection works: "+d.Name+" answered with the stored token.")
		return
	}
	var parts []string
	for i, m := range out.Missing {
		parts = append(parts, strconv.Itoa(i+1)+") "+m.Message)
	}
	msg := "Connection works, but the setup is incomplete: " + strings.Join(parts, " ")
	if out.CanCreate {
		msg += " Use “Create missing fields” to let leadgate create the loop-breaker and stage fields."
	}
	u.flashRedirect(w, r, destinationPath(r, d.ID), "error", msg)
}

// CreateSetupFields creates the loop-breaker and stage fields the account lacks (the API's loop-fields
// action with create), which resumes a destination paused for them.
func (u *UI) CreateSetupFields(w http.ResponseWriter, r *http.Request) {
	d, ok := u.loadDestination(w, r)
	if !ok {
		return
	}
	res := u.viaAPI(r, u.Destinations.LoopFields, http.MethodPost, map[string]bool{"create": true})
	if !res.OK() {
		u.flashRedirect(w, r, destinationPath(r, d.ID), "error", "Fields not created: "+cmpOrStr(res.Error, "HTTP "+strconv.Itoa(res.Status)))
		return
	}
	var out struct {
		Created []string `json:"created_fields"`
		Resumed bool     `json:"resumed"`
		Missing []struct {
			Message string `json:"message"`
		} `json:"missing"`
	}
	_ = json.Unmarshal(res.Body, &out)
	msg := "Nothing to create."
	if len(out.Created) > 0 {
		msg = "Created " + strings.Join(out.Created, ", ") + "."
	}
	if out.Resumed {
		msg += " The destination resumed: held work drains now."
	}
	for _, m := range out.Missing {
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
	return "/w/" + workspaceFrom(r).Slug + "/destinations/" + strconv.FormatInt(id, 10)
}

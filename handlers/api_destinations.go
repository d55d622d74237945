package handlers

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/go-chi/chi/v5"

	"github.com/leadgate/leadgate/crm"
	"github.com/leadgate/leadgate/internal/egress"
	"github.com/leadgate/leadgate/internal/secretbox"
	"github.com/leadgate/leadgate/models"
)

// DestinationConnector builds a destination's adapter (credentials opened, requests rate-limited).
type DestinationConnector interface {
	Adapter(ctx context.Context, d models.Destination) (crm.Destination, error)
	Forget(id int64)
}

// SyncControl starts sync work from the API.
type SyncControl interface {
	Kick(ctx context.Context) error
	StartImport(ctx context.Context, destinationID, importID int64, actor string) error
}

// Destinations serves /api/v1/workspaces/{ws}/destinations (CONTRACT.md) and the sync's other settings:
// credentials are sealed with the secret key and never returned.
type Destinations struct {
	Store     *models.Store
	Box       *secretbox.Box
	Connector DestinationConnector
	Sync      SyncControl
	Log       *slog.Logger
	// Egress refuses, at save time, URLs the SSRF guard would refuse when dialing (nil: public only).
	Egress *egress.Guard
}

// destinationInput is the body of POST /destinations; PATCH takes the same fields, all optional.
type destinationInput struct {
	Name         *string           `json:"name"`
	Kind         *string           `json:"kind"`
	BaseURL      *string           `json:"base_url"`
	APIToken     *string           `json:"api_token"`
	RateLimitRPS *int              `json:"rate_limit_rps"`
	BatchSize    *int              `json:"batch_size"`
	StageField   *string           `json:"stage_field"`
	StageMode    *string           `json:"stage_mode"`
	Pipeline     *string           `json:"pipeline"`
	LocationID   *string           `json:"location_id"`
	FieldMap     map[string]string `json:"field_map"`
	StageMap     map[string]string `json:"stage_map"`
	LoopField    *string           `json:"loop_field"`
	SyncField    *string           `json:"sync_field"`
	// ActiveCampaign settings (crm.Config AllowNullEmail, DealOwner, Automations).
	AllowNullEmail *bool   `json:"allow_null_email"`
	DealOwner      *string `json:"deal_owner"`
	Automations    *string `json:"automations"`
	Enabled        *bool   `json:"enabled"`
	Paused         *bool   `json:"paused"` // PATCH: true pauses (work is held), false resumes (work drains)
	// MaxWritesPerHour is the runaway guard's ceiling (0: none).
	MaxWritesPerHour *int `json:"max_writes_per_hour"`
	// Sandbox behaviour.
	SandboxRateLimit *int     `json:"sandbox_rate_limit"`
	Fail429Rate      *float64 `json:"fail_429_rate"`
	Fail503Rate      *float64 `json:"fail_503_rate"`
	LatencyMS        *int     `json:"latency_ms"`
}

// destinationJSON is how a destination is shown: never its credentials.
type destinationJSON struct {
	ID           int64                    `json:"id"`
	Name         string                   `json:"name"`
	Kind         string                   `json:"kind"`
	BaseURL      string                   `json:"base_url"`
	HasAPIToken  bool                     `json:"has_api_token"`
	RateLimitRPS int                      `json:"rate_limit_rps"`
	BatchSize    int                      `json:"batch_size"`
	Enabled      bool                     `json:"enabled"`
	Paused       bool                     `json:"paused"`
	PausedReason string                   `json:"paused_reason,omitempty"`
	PauseCause   string                   `json:"pause_cause,omitempty"`  // operator, auth, blocked, setup, quota, runaway
	PausedUntil  *time.Time               `json:"paused_until,omitempty"` // a spent quota's reset
	Config       models.DestinationConfig `json:"config"`
	CreatedAt    time.Time                `json:"created_at"`
	UpdatedAt    time.Time                `json:"updated_at"`
}

func destinationView(d models.Destination) destinationJSON {
	return destinationJSON{ID: d.ID, Name: d.Name, Kind: d.Kind, BaseURL: d.BaseURL, HasAPIToken: len(d.APITokenEnc) > 0,
		RateLimitRPS: d.RateLimitRPS, BatchSize: d.BatchSize, Enabled: d.Enabled, Paused: d.Paused, PausedReason: d.PausedReason,
		PauseCause: d.PauseCause, PausedUntil: d.PausedUntil,
		Config: d.Config, CreatedAt: d.CreatedAt, UpdatedAt: d.UpdatedAt}
}

// apply copies the given fields onto d; token is the new plaintext token ("" = unchanged).
func (in destinationInput) apply(d *models.Destination) (token string) {
	set := func(dst *string, v *string) {
		if v != nil {
			*dst = strings.TrimSpace(*v)
		}
	}
	set(&d.Name, in.Name)
	set(&d.BaseURL, in.BaseURL)
	set(&d.Config.StageField, in.StageField)
	set(&d.Config.StageMode, in.StageMode)
	set(&d.Config.Pipeline, in.Pipeline)
	set(&d.Config.LocationID, in.LocationID)
	set(&d.Config.LoopField, in.LoopField)
	set(&d.Config.SyncField, in.SyncField)
	set(&d.Config.DealOwner, in.DealOwner)
	set(&d.Config.Automations, in.Automations)
	if in.AllowNullEmail != nil {
		d.Config.AllowNullEmail = *in.AllowNullEmail
	}
	if in.FieldMap != nil {
		d.Config.FieldMap = in.FieldMap
	}
	if in.StageMap != nil {
		d.Config.StageMap = in.StageMap
	}
	if in.RateLimitRPS != nil {
		d.RateLimitRPS = *in.RateLimitRPS
	}
	if in.BatchSize != nil {
		d.BatchSize = *in.BatchSize
	}
	if in.Enabled != nil {
		d.Enabled = *in.Enabled
	}
	if in.MaxWritesPerHour != nil {
		d.Config.MaxWritesPerHour = *in.MaxWritesPerHour
	}
	if in.SandboxRateLimit != nil {
		d.Config.SandboxRateLimit = *in.SandboxRateLimit
	}
	if in.Fail429Rate != nil {
		d.Config.Fail429Rate = *in.Fail429Rate
	}
	if in.Fail503Rate != nil {
		d.Config.Fail503Rate = *in.Fail503Rate
	}
	if in.LatencyMS != nil {
		d.Config.LatencyMS = *in.LatencyMS
	}
	if in.APIToken != nil {
		token = strings.TrimSpace(*in.APIToken)
	}
	return token
}

// validateDestination checks a destination as it would be saved; hasToken says a token is (or will be) stored.
func validateDestination(d models.Destination, hasToken bool) (field, msg string) {
	switch {
	case d.Name == "" || len(d.Name) > 200:
		return "name", "name must be 1-200 characters"
	case d.Kind != crm.KindActiveCampaign && d.Kind != crm.KindHubSpot && d.Kind != crm.KindGoHighLevel && d.Kind != crm.KindSandbox:
		return "kind", "kind must be activecampaign, hubspot, gohighlevel or sandbox"
	case d.RateLimitRPS < 0 || d.RateLimitRPS > 1000:
		return "rate_limit_rps", "rate_limit_rps must be 0 (the CRM's default) to 1000"
	case d.BatchSize < 1 || d.BatchSize > 100:
		return "batch_size", "batch_size must be 1 to 100"
	case d.Config.StageMode != "" && d.Config.StageMode != crm.StageModeField && d.Config.StageMode != crm.StageModeDeal:
		return "stage_mode", "stage_mode must be field or deal"
	case d.Config.Automations != "" && d.Config.Automations != crm.AutomationsLive && d.Config.Automations != crm.AutomationsNever &&
		d.Config.Automations != crm.AutomationsAlways:
		return "automations", "automations must be live, never or always"
	case d.Config.MaxWritesPerHour < 0:
		return "max_writes_per_hour", "max_writes_per_hour must be 0 (no ceiling) or more"
	case d.Config.Fail429Rate < 0 || d.Config.Fail503Rate < 0 || d.Config.Fail429Rate+d.Config.Fail503Rate > 1:
		return "fail_503_rate", "injected failure rates must be between 0 and 1 together"
	case d.Config.SandboxRateLimit < 0 || d.Config.LatencyMS < 0 || d.Config.LatencyMS > 60000:
		return "latency_ms", "sandbox_rate_limit must be ≥ 0 and latency_ms 0 to 60000"
	}
	if d.Kind == crm.KindSandbox {
		return "", ""
	}
	if !hasToken {
		return "api_token", "api_token is required for " + d.Kind
	}
	if d.BaseURL != "" {
		u, err := url.Parse(d.BaseURL)
		if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
			return "base_url", "base_url must be an absolute http(s) URL"
		}
	}
	switch {
	case d.Kind == crm.KindActiveCampaign && d.BaseURL == "":
		return "base_url", "base_url is required for activecampaign (the account's API URL)"
	case d.Kind == crm.KindGoHighLevel && d.Config.LocationID == "":
		return "location_id", "location_id is required for gohighlevel"
	case d.Config.StageMode == crm.StageModeDeal && (d.Config.Pipeline == "" || len(d.Config.StageMap) == 0):
		return "pipeline", "deal mode needs a pipeline and a stage_map to its stage ids"
	}
	return "", ""
}

// CreateDestination answers 201 {"id"}.
func (h *Destinations) CreateDestination(w http.ResponseWriter, r *http.Request) {
	ws := workspaceFrom(r)
	var in destinationInput
	if !decodeJSON(w, r, &in) {
		return
	}
	if in.Paused != nil {
		writeError(w, http.StatusBadRequest, "paused", "a new destination is not paused; PATCH it to pause")
		return
	}
	d := models.Destination{WorkspaceID: ws.ID, BatchSize: 20, Enabled: true}
	if in.Kind != nil {
		d.Kind = strings.ToLower(strings.TrimSpace(*in.Kind))
	}
	token := in.apply(&d)
	if field, msg := validateDestination(d, token != ""); field != "" {
		writeError(w, http.StatusBadRequest, field, msg)
		return
	}
	if msg := h.egressRefusal(d.BaseURL); msg != "" && d.Kind != crm.KindSandbox {
		writeError(w, http.StatusBadRequest, "base_url", msg)
		return
	}
	sealed, err := h.Box.Seal(token)
	if err != nil {
		serverError(h.Log, w, r, err)
		return
	}
	d.APITokenEnc = sealed
	err = h.Store.Tx(r.Context(), func(tx *models.Store) error {
		if err := tx.DestinationCreate(r.Context(), &d); err != nil {
			return err
		}
		return tx.AuditRecord(r.Context(), models.Audit{WorkspaceID: ws.ID, Actor: actor(r), Action: "destination.create",
			SubjectType: "destination", SubjectID: strconv.FormatInt(d.ID, 10), After: destinationView(d)})
	})
	if err != nil {
		serverError(h.Log, w, r, err)
		return
	}
	writeJSON(w, http.StatusCreated, map[string]any{"id": d.ID})
}

// ListDestinations answers {"destinations":[...]} without credentials.
func (h *Destinations) ListDestinations(w http.ResponseWriter, r *http.Request) {
	list, err := h.Store.DestinationList(r.Context(), workspaceFrom(r).ID)
	if err != nil {
		serverError(h.Log, w, r, err)
		return
	}
	out := make([]destinationJSON, len(list))
	for i, d := range list {
		out[i] = destinationView(d)
	}
	writeJSON(w, http.StatusOK, map[string]any{"destinations": out})
}

// GetDestination answers one destination.
func (h *Destinations) GetDestination(w http.ResponseWriter, r *http.Request) {
	if d, ok := h.load(w, r); ok {
		writeJSON(w, http.StatusOK, destinationView(d))
	}
}

// UpdateDestination edits, pauses ("paused":true: work is held) or resumes ("paused":false: work drains).
func (h *Destinations) UpdateDestination(w http.ResponseWriter, r *http.Request) {
	d, ok := h.load(w, r)
	if !ok {
		return
	}
	var in destinationInput
	if !decodeJSON(w, r, &in) {
		return
	}
	if in.Kind != nil && strings.ToLower(strings.TrimSpace(*in.Kind)) != d.Kind {
		writeError(w, http.StatusBadRequest, "kind", "the kind of a destination cannot change; create another one")
		return
	}
	before := destinationView(d)
	token := in.apply(&d)
	if field, msg := validateDestination(d, token != "" || len(d.APITokenEnc) > 0); field != "" {
		writeError(w, http.StatusBadRequest, field, msg)
		return
	}
	if msg := h.egressRefusal(d.BaseURL); msg != "" && d.Kind != crm.KindSandbox && in.BaseURL != nil {
		writeError(w, http.StatusBadRequest, "base_url", msg)
		return
	}
	if token != "" {
		sealed, err := h.Box.Seal(token)
		if err != nil {
			serverError(h.Log, w, r, err)
			return
		}
		d.APITokenEnc = sealed
	}
	err := h.Store.Tx(r.Context(), func(tx *models.Store) error {
		if err := tx.DestinationUpdate(r.Context(), &d); err != nil {
			return err
		}
		if in.Paused != nil && *in.Paused && (!d.Paused || d.PauseCause != models.PauseOperator) {
			// An operator's pause, even over one the system started: the probe never resumes it.
			if err := tx.DestinationPauseByOperator(r.Context(), d.ID, "paused by "+actor(r)); err != nil {
				return err
			}
			d.Paused = true
		} else if in.Paused != nil && !*in.Paused && d.Paused {
			if err := tx.DestinationResume(r.Context(), d.ID); err != nil {
				return err
			}
			d.Paused, d.PausedReason = false, ""
		}
		after := map[string]any{"destination": destinationView(d)}
		if token != "" {
			after["api_token"] = "changed"
		}
		return tx.AuditRecord(r.Context(), models.Audit{WorkspaceID: d.WorkspaceID, Actor: actor(r), Action: "destination.update",
			SubjectType: "destination", SubjectID: strconv.FormatInt(d.ID, 10), Before: before, After: after})
	})
	if err != nil {
		serverError(h.Log, w, r, err)
		return
	}
	h.Connector.Forget(d.ID)
	if in.Paused != nil && !*in.Paused && h.Sync != nil {
		_ = h.Sync.Kick(r.Context()) // drain now; the periodic tick would anyway
	}
	fresh, err := h.Store.DestinationByID(r.Context(), d.ID)
	if err != nil {
		serverError(h.Log, w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, destinationView(fresh))
}

// DeleteDestination removes a destination; its pending work is dropped with it.
func (h *Destinations) DeleteDestination(w http.ResponseWriter, r *http.Request) {
	d, ok := h.load(w, r)
	if !ok {
		return
	}
	now := time.Now().UTC()
	before := destinationView(d)
	d.DeletedAt = &now
	err := h.Store.Tx(r.Context(), func(tx *models.Store) error {
		if err := tx.DestinationUpdate(r.Context(), &d); err != nil {
			return err
		}
		if err := tx.SyncDropDestination(r.Context(), d.ID); err != nil {
			return err
		}
		return tx.AuditRecord(r.Context(), models.Audit{WorkspaceID: d.WorkspaceID, Actor: actor(r), Action: "destination.delete",
			SubjectType: "destination", SubjectID: strconv.FormatInt(d.ID, 10), Before: before})
	})
	if err != nil {
		serverError(h.Log, w, r, err)
		return
	}
	h.Connector.Forget(d.ID)
	w.WriteHeader(http.StatusNoContent)
}

// load reads {id} of the current workspace, answering 404 itself.
func (h *Destinations) load(w http.ResponseWriter, r *http.Request) (models.Destination, bool) {
	id, err := strconv.ParseInt(chi.URLParam(r, "id"), 10, 64)
	if err != nil {
		writeError(w, http.StatusNotFound, "id", "unknown destination")
		return models.Destination{}, false
	}
	d, err := h.Store.DestinationGet(r.Context(), workspaceFrom(r).ID, id)
	if errors.Is(err, models.ErrNotFound) {
		writeError(w, http.StatusNotFound, "id", "unknown destination")
		return d, false
	}
	if err != nil {
		serverError(h.Log, w, r, err)
		return d, false
	}
	return d, true
}

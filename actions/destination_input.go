package actions

import (
	"net/url"
	"strings"

	"github.com/leadgate/leadgate/crm"
	"github.com/leadgate/leadgate/models"
)

// DestinationInput is a destination's settings as an operator gives them: the body of the API's POST
// /destinations, and of its PATCH, where every field is optional (nil: unchanged).
type DestinationInput struct {
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
	// DailyLimit is the account's daily request quota, which backfill is paced to (0: the CRM's
	// documented cap where it has one; -1: none).
	DailyLimit *int `json:"daily_limit"`
	// Sandbox behaviour.
	SandboxRateLimit *int     `json:"sandbox_rate_limit"`
	Fail429Rate      *float64 `json:"fail_429_rate"`
	Fail503Rate      *float64 `json:"fail_503_rate"`
	LatencyMS        *int     `json:"latency_ms"`
}

// apply copies the given fields onto d; token is the new plaintext token ("" = unchanged).
func (in DestinationInput) apply(d *models.Destination) (token string) {
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
	if in.DailyLimit != nil {
		d.Config.DailyLimit = *in.DailyLimit
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

// validateDestination refuses a destination as it would be saved with the first setting that is wrong;
// hasToken says a token is (or will be) stored.
func validateDestination(d models.Destination, hasToken bool) error {
	switch {
	case d.Name == "" || len(d.Name) > 200:
		return Invalid("name", "name must be 1-200 characters")
	case d.Kind != crm.KindActiveCampaign && d.Kind != crm.KindHubSpot && d.Kind != crm.KindGoHighLevel && d.Kind != crm.KindSandbox:
		return Invalid("kind", "kind must be activecampaign, hubspot, gohighlevel or sandbox")
	case d.RateLimitRPS < 0 || d.RateLimitRPS > 1000:
		return Invalid("rate_limit_rps", "rate_limit_rps must be 0 (the CRM's default) to 1000")
	case d.BatchSize < 1 || d.BatchSize > 100:
		return Invalid("batch_size", "batch_size must be 1 to 100")
	case d.Config.StageMode != "" && d.Config.StageMode != crm.StageModeField && d.Config.StageMode != crm.StageModeDeal:
		return Invalid("stage_mode", "stage_mode must be field or deal")
	case d.Config.Automations != "" && d.Config.Automations != crm.AutomationsLive && d.Config.Automations != crm.AutomationsNever &&
		d.Config.Automations != crm.AutomationsAlways:
		return Invalid("automations", "automations must be live, never or always")
	case d.Config.MaxWritesPerHour < 0:
		return Invalid("max_writes_per_hour", "max_writes_per_hour must be 0 (no ceiling) or more")
	case d.Config.DailyLimit < -1 || d.Config.DailyLimit > 100_000_000:
		return Invalid("daily_limit", "daily_limit must be -1 (no daily cap), 0 (the CRM's documented cap) or a number of requests up to 100000000")
	case d.Config.Fail429Rate < 0 || d.Config.Fail503Rate < 0 || d.Config.Fail429Rate+d.Config.Fail503Rate > 1:
		return Invalid("fail_503_rate", "injected failure rates must be between 0 and 1 together")
	case d.Config.SandboxRateLimit < 0 || d.Config.LatencyMS < 0 || d.Config.LatencyMS > 60000:
		return Invalid("latency_ms", "sandbox_rate_limit must be ≥ 0 and latency_ms 0 to 60000")
	}
	if d.Kind == crm.KindSandbox {
		return nil
	}
	if !hasToken {
		return Invalid("api_token", "api_token is required for "+d.Kind)
	}
	if d.BaseURL != "" {
		u, err := url.Parse(d.BaseURL)
		if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
			return Invalid("base_url", "base_url must be an absolute http(s) URL")
		}
	}
	switch {
	case d.Kind == crm.KindActiveCampaign && d.BaseURL == "":
		return Invalid("base_url", "base_url is required for activecampaign (the account's API URL)")
	case d.Kind == crm.KindGoHighLevel && d.Config.LocationID == "":
		return Invalid("location_id", "location_id is required for gohighlevel")
	case d.Config.StageMode == crm.StageModeDeal && (d.Config.Pipeline == "" || len(d.Config.StageMap) == 0):
		return Invalid("pipeline", "deal mode needs a pipeline and a stage_map to its stage ids")
	}
	return nil
}

package actions

import (
	"time"

	"github.com/leadgate/leadgate/models"
)

// DestinationView is how a destination is shown, in the API and in its audit entries: never its
// credentials.
type DestinationView struct {
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

// ViewDestination shows d.
func ViewDestination(d models.Destination) DestinationView {
	return DestinationView{ID: d.ID, Name: d.Name, Kind: d.Kind, BaseURL: d.BaseURL, HasAPIToken: len(d.APITokenEnc) > 0,
		RateLimitRPS: d.RateLimitRPS, BatchSize: d.BatchSize, Enabled: d.Enabled, Paused: d.Paused, PausedReason: d.PausedReason,
		PauseCause: d.PauseCause, PausedUntil: d.PausedUntil,
		Config: d.Config, CreatedAt: d.CreatedAt, UpdatedAt: d.UpdatedAt}
}

package models

import (
	"context"
	"errors"
	"fmt"
	"time"

	"gorm.io/gorm"
)

// DestinationConfig is a destination's mapping and behaviour, stored as JSON (no secrets).
type DestinationConfig struct {
	StageField string            `json:"stage_field,omitempty"`
	StageMode  string            `json:"stage_mode,omitempty"` // field | deal
	Pipeline   string            `json:"pipeline,omitempty"`
	LocationID string            `json:"location_id,omitempty"`
	FieldMap   map[string]string `json:"field_map,omitempty"`
	StageMap   map[string]string `json:"stage_map,omitempty"`
	LoopField  string            `json:"loop_field,omitempty"`
	SyncField  string            `json:"sync_field,omitempty"`
	// ActiveCampaign: the account holds phone-only contacts; the deal owner where the pipeline does not
	// auto-assign; which bulk imports start the account's automations (live | never | always).
	AllowNullEmail bool   `json:"allow_null_email,omitempty"`
	DealOwner      string `json:"deal_owner,omitempty"`
	Automations    string `json:"automations,omitempty"`
	// MaxWritesPerHour pauses the destination when passed (the runaway guard; 0: none).
	MaxWritesPerHour int `json:"max_writes_per_hour,omitempty"`
	// DailyLimit is the CRM's daily request quota for this account (0: the CRM's default where it has one,
	// see jobs.defaultDaily; negative: none); backfill is paced to spread over the rest of the day.
	DailyLimit int `json:"daily_limit,omitempty"`
	// Sandbox behaviour: its own rate limit (requests/s it accepts before answering 429) and injected faults.
	SandboxRateLimit int     `json:"sandbox_rate_limit,omitempty"`
	Fail429Rate      float64 `json:"fail_429_rate,omitempty"`
	Fail503Rate      float64 `json:"fail_503_rate,omitempty"`
	LatencyMS        int     `json:"latency_ms,omitempty"`
}

// Destination is one CRM account a workspace writes to.
type Destination struct {
	ID            int64
	WorkspaceID   int64
	Name          string
	Kind          string
	BaseURL       string
	APITokenEnc   []byte
	Config        DestinationConfig `gorm:"serializer:json;type:jsonb"`
	RateLimitRPS  int               `gorm:"column:rate_limit_rps"`
	BatchSize     int
	Enabled       bool
	Paused        bool
	PausedReason  string
	PausedAt      *time.Time
	PauseEpisode  int
	PauseCause    string     // see destination_pause.go: operator, auth, blocked, setup, quota, runaway; "" when not paused
	PausedUntil   *time.Time // a quota's reset (or a repeated fault's back-off); nil otherwise
	CallsTotal    int64
	RateLimited   int64
	FailuresTotal int64
	SyncedTotal   int64
	LastSyncAt    *time.Time
	LastError     string
	DeletedAt     *time.Time
	CreatedAt     time.Time
	UpdatedAt     time.Time
}

// Active reports whether the relay may send to the destination now.
func (d Destination) Active() bool { return d.Enabled && !d.Paused && d.DeletedAt == nil }

// DestinationCreate inserts d and sets its id.
func (s *Store) DestinationCreate(ctx context.Context, d *Destination) error {
	err := s.db.WithContext(ctx).Select("WorkspaceID", "Name", "Kind", "BaseURL", "APITokenEnc", "Config", "RateLimitRPS",
		"BatchSize", "Enabled").Create(d).Error
	if err != nil {
		return fmt.Errorf("models: create destination: %w", err)
	}
	return nil
}

// DestinationGet returns a live destination of a workspace.
func (s *Store) DestinationGet(ctx context.Context, workspaceID, id int64) (Destination, error) {
	var d Destination
	err := s.db.WithContext(ctx).Where("workspace_id = ? AND id = ? AND deleted_at IS NULL", workspaceID, id).Take(&d).Error
	return d, syncNotFound(err, "destination")
}

// DestinationByID returns a live destination whatever its workspace (the relay).
func (s *Store) DestinationByID(ctx context.Context, id int64) (Destination, error) {
	var d Destination
	err := s.db.WithContext(ctx).Where("id = ? AND deleted_at IS NULL", id).Take(&d).Error
	return d, syncNotFound(err, "destination")
}

// DestinationList returns a workspace's live destinations, oldest first (workspaceID 0: all).
func (s *Store) DestinationList(ctx context.Context, workspaceID int64) ([]Destination, error) {
	var out []Destination
	q := s.db.WithContext(ctx).Where("deleted_at IS NULL").Order("id")
	if workspaceID != 0 {
		q = q.Where("workspace_id = ?", workspaceID)
	}
	if err := q.Find(&out).Error; err != nil {
		return nil, fmt.Errorf("models: list destinations: %w", err)
	}
	return out, nil
}

// DestinationUpdate writes the editable columns of d (not counters, not the pause state).
func (s *Store) DestinationUpdate(ctx context.Context, d *Destination) error {
	d.UpdatedAt = time.Now().UTC()
	err := s.db.WithContext(ctx).Model(d).Select("Name", "BaseURL", "APITokenEnc", "Config", "RateLimitRPS", "BatchSize",
		"Enabled", "DeletedAt", "UpdatedAt").Updates(d).Error
	if err != nil {
		return fmt.Errorf("models: update destination %d: %w", d.ID, err)
	}
	return nil
}

// DestinationPause pauses a destination unless it is paused already. It reports whether this call started
// a new pause episode (and so must alert) and the episode number.
func (s *Store) DestinationPause(ctx context.Context, id int64, reason string) (started bool, episode int, err error) {
	var ep []int
	err = s.db.WithContext(ctx).Raw(`UPDATE destinations SET paused = true, paused_reason = ?, paused_at = now(),
		pause_episode = pause_episode + 1, updated_at = now() WHERE id = ? AND NOT paused RETURNING pause_episode`, reason, id).Scan(&ep).Error
	if err != nil {
		return false, 0, fmt.Errorf("models: pause destination %d: %w", id, err)
	}
	if len(ep) == 0 {
		return false, 0, nil
	}
	return true, ep[0], nil
}

// DestinationResume clears the pause; held work becomes due at once.
func (s *Store) DestinationResume(ctx context.Context, id int64) error {
	db := s.db.WithContext(ctx)
	if err := db.Exec(`UPDATE destinations SET paused = false, paused_reason = '', paused_at = NULL, pause_cause = '', paused_until = NULL,
		updated_at = now() WHERE id = ?`, id).Error; err != nil {
		return fmt.Errorf("models: resume destination %d: %w", id, err)
	}
	if err := db.Exec(`UPDATE sync_queue SET next_attempt_at = now(), lease_until = NULL WHERE destination_id = ? AND status = 'pending'`, id).Error; err != nil {
		return fmt.Errorf("models: resume destination %d: %w", id, err)
	}
	return nil
}

// DestinationCounters are increments of a destination's running counters.
type DestinationCounters struct {
	Calls, RateLimited, Failures, Synced int64
	LastError                            *string // nil: unchanged
}

// DestinationCount adds to a destination's counters.
func (s *Store) DestinationCount(ctx context.Context, id int64, c DestinationCounters) error {
	q := `UPDATE destinations SET calls_total = calls_total + ?, rate_limited = rate_limited + ?, failures_total = failures_total + ?,
		synced_total = synced_total + ?, last_sync_at = CASE WHEN ? > 0 THEN now() ELSE last_sync_at END`
	args := []any{c.Calls, c.RateLimited, c.Failures, c.Synced, c.Synced}
	if c.LastError != nil {
		q += `, last_error = ?`
		args = append(args, *c.LastError)
	}
	if err := s.db.WithContext(ctx).Exec(q+` WHERE id = ?`, append(args, id)...).Error; err != nil {
		return fmt.Errorf("models: count destination %d: %w", id, err)
	}
	return nil
}

func syncNotFound(err error, what string) error {
	if errors.Is(err, gorm.ErrRecordNotFound) {
		return ErrNotFound
	}
	if err != nil {
		return fmt.Errorf("models: %s: %w", what, err)
	}
	return nil
}

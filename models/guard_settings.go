package models

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"gorm.io/gorm"
)

// Loop-guard defaults (issue 5 §1-2).
const (
	DefaultEchoWindow    = 10 * time.Minute
	DefaultLoopField     = "last_automation_source"
	DefaultLoopValue     = "leadgate"
	DefaultSyncField     = "sync_timestamp"
	DefaultBreakerMax    = 20
	DefaultBreakerWindow = 10 * time.Minute
)

// LoopSettings configure echo suppression and the per-contact circuit
// breaker. Zero values mean the defaults above; With Defaults fills them in.
type LoopSettings struct {
	// EchoDisabled turns echo suppression off (every CRM event is applied).
	EchoDisabled bool `json:"echo_disabled"`
	// EchoWindowSeconds is how long after our write a flagged CRM event counts as its echo.
	EchoWindowSeconds int `json:"echo_window_seconds"`
	// LoopField / LoopValue / SyncField name the loop-breaker flag leadgate writes on every CRM mutation.
	LoopField string `json:"loop_field"`
	LoopValue string `json:"loop_value"`
	SyncField string `json:"sync_field"`
	// OwnSourceIDs are HubSpot sourceId / appId values that mark a change as made by leadgate's own app.
	OwnSourceIDs []string `json:"own_source_ids"`
	// BreakerDisabled turns the circuit breaker off.
	BreakerDisabled bool `json:"breaker_disabled"`
	// BreakerMax applied events per contact within BreakerWindowSeconds are allowed; one more trips it.
	BreakerMax           int `json:"breaker_max"`
	BreakerWindowSeconds int `json:"breaker_window_seconds"`
}

// WithDefaults returns s with every unset value replaced by its default.
func (s LoopSettings) WithDefaults() LoopSettings {
	if s.EchoWindowSeconds <= 0 {
		s.EchoWindowSeconds = int(DefaultEchoWindow / time.Second)
	}
	if s.LoopField == "" {
		s.LoopField = DefaultLoopField
	}
	if s.LoopValue == "" {
		s.LoopValue = DefaultLoopValue
	}
	if s.SyncField == "" {
		s.SyncField = DefaultSyncField
	}
	if s.BreakerMax <= 0 {
		s.BreakerMax = DefaultBreakerMax
	}
	if s.BreakerWindowSeconds <= 0 {
		s.BreakerWindowSeconds = int(DefaultBreakerWindow / time.Second)
	}
	if !slices.Contains(s.OwnSourceIDs, DefaultLoopValue) {
		s.OwnSourceIDs = append(slices.Clone(s.OwnSourceIDs), DefaultLoopValue)
	}
	return s
}

// EchoWindow is EchoWindowSeconds as a duration.
func (s LoopSettings) EchoWindow() time.Duration {
	return time.Duration(s.EchoWindowSeconds) * time.Second
}

// BreakerWindow is BreakerWindowSeconds as a duration.
func (s LoopSettings) BreakerWindow() time.Duration {
	return time.Duration(s.BreakerWindowSeconds) * time.Second
}

// Validate returns the field and message of the first problem.
func (s LoopSettings) Validate() (field, msg string) {
	switch {
	case s.EchoWindowSeconds < 0 || s.EchoWindowSeconds > 86400:
		return "echo_window_seconds", "echo_window_seconds must be from 1 to 86400 (0: default 600)"
	case s.BreakerMax < 0 || s.BreakerMax > 100000:
		return "breaker_max", "breaker_max must be from 1 to 100000 (0: default 20)"
	case s.BreakerWindowSeconds < 0 || s.BreakerWindowSeconds > 86400:
		return "breaker_window_seconds", "breaker_window_seconds must be from 1 to 86400 (0: default 600)"
	case len(s.OwnSourceIDs) > 20:
		return "own_source_ids", "at most 20 own source ids"
	}
	for _, f := range []struct{ name, v string }{{"loop_field", s.LoopField}, {"loop_value", s.LoopValue}, {"sync_field", s.SyncField}} {
		if len(f.v) > 100 || strings.ContainsAny(f.v, "\x00\r\n") {
			return f.name, f.name + " must be at most 100 characters on one line"
		}
	}
	return "", ""
}

// AlertingSettings are a workspace's instance-facing alert settings.
type AlertingSettings struct {
	// HeartbeatURL is pinged (GET) by the scheduler every minute; "" disables it.
	HeartbeatURL string `json:"heartbeat_url"`
	// AllowedHosts are hosts an admin allows alert channels to reach even on
	// loopback/private addresses (an internal relay). Only admins change it.
	AllowedHosts []string `json:"allowed_hosts"`
}

// GuardSettings is a workspace's guard_settings row.
type GuardSettings struct {
	WorkspaceID int64
	Loop        LoopSettings     `gorm:"serializer:json;type:jsonb"`
	Alerting    AlertingSettings `gorm:"serializer:json;type:jsonb"`
	UpdatedBy   string
	UpdatedAt   time.Time
}

// TableName maps GuardSettings to guard_settings.
func (GuardSettings) TableName() string { return "guard_settings" }

// GuardSettingsGet returns a workspace's settings, or the empty (all
// defaults) settings when none were saved. Loop is returned as stored; call
// WithDefaults for the values in force.
func (s *Store) GuardSettingsGet(ctx context.Context, workspaceID int64) (GuardSettings, error) {
	g := GuardSettings{WorkspaceID: workspaceID}
	err := s.db.WithContext(ctx).Where("workspace_id = ?", workspaceID).Take(&g).Error
	if errors.Is(err, gorm.ErrRecordNotFound) {
		return GuardSettings{WorkspaceID: workspaceID}, nil
	}
	if err != nil {
		return g, fmt.Errorf("models: guard settings %d: %w", workspaceID, err)
	}
	return g, nil
}

// GuardSettingsSave writes a workspace's settings.
func (s *Store) GuardSettingsSave(ctx context.Context, g GuardSettings) error {
	loop, err := marshalOrNil(g.Loop)
	if err != nil {
		return err
	}
	alerting, err := marshalOrNil(g.Alerting)
	if err != nil {
		return err
	}
	err = s.db.WithContext(ctx).Exec(`INSERT INTO guard_settings (workspace_id, loop, alerting, updated_by, updated_at)
		VALUES (?, ?, ?, ?, now())
		ON CONFLICT (workspace_id) DO UPDATE SET loop = EXCLUDED.loop, alerting = EXCLUDED.alerting,
			updated_by = EXCLUDED.updated_by, updated_at = now()`,
		g.WorkspaceID, loop, alerting, g.UpdatedBy).Error
	if err != nil {
		return fmt.Errorf("models: save guard settings %d: %w", g.WorkspaceID, err)
	}
	return nil
}

// GuardHeartbeatURLs lists every workspace's heartbeat URL that is set.
func (s *Store) GuardHeartbeatURLs(ctx context.Context) (map[int64]string, error) {
	var rows []GuardSettings
	if err := s.db.WithContext(ctx).Where("alerting->>'heartbeat_url' <> ''").Find(&rows).Error; err != nil {
		return nil, fmt.Errorf("models: heartbeat urls: %w", err)
	}
	out := map[int64]string{}
	for _, r := range rows {
		out[r.WorkspaceID] = r.Alerting.HeartbeatURL
	}
	return out, nil
}

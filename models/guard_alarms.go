package models

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"gorm.io/gorm"
)

// Silence-alarm metrics.
const (
	SilenceApply    = "apply"     // last successful apply of an event
	SilenceCRMWrite = "crm_write" // last successful CRM write
)

// Silence rules (silence_alarms.rule).
const (
	SilenceRuleStatic  = "static"  // threshold and business hours
	SilenceRuleLearned = "learned" // the source's own weekly rhythm (static while history is short)
)

// SilenceAlarm is one silence alarm: its configuration and the state of its
// current episode. SourceID nil watches the whole workspace.
type SilenceAlarm struct {
	ID               int64           `json:"id"`
	WorkspaceID      int64           `json:"-"`
	SourceID         *int64          `json:"source_id"`
	Metric           string          `json:"metric"`
	Rule             string          `json:"rule"`
	ThresholdSeconds int             `json:"threshold_seconds"`
	ReminderSeconds  int             `json:"reminder_seconds"`
	BusinessHours    json.RawMessage `gorm:"type:jsonb" json:"business_hours"`
	MinDailyVolume   int             `json:"min_daily_volume"`
	Enabled          bool            `json:"enabled"`
	Silent           bool            `json:"silent"`
	SilentSince      *time.Time      `json:"silent_since"`
	LastNotifiedAt   *time.Time      `json:"last_notified_at"`
	Reminders        int             `json:"reminders"`
	LastCheckedAt    *time.Time      `json:"last_checked_at"`
	// Profile caches the learned rhythm (alarm.Profile), refreshed hourly.
	Profile   json.RawMessage `gorm:"type:jsonb" json:"-"`
	ProfileAt *time.Time      `json:"profile_at"`
	// Message is the text of the current episode ("" when not silent).
	Message   string    `json:"message"`
	CreatedAt time.Time `json:"created_at"`
	UpdatedAt time.Time `json:"updated_at"`
}

// TableName maps SilenceAlarm to silence_alarms.
func (SilenceAlarm) TableName() string { return "silence_alarms" }

// SilenceAlarmList returns a workspace's silence alarms (workspaceID 0: every
// workspace's enabled ones, for the checker).
func (s *Store) SilenceAlarmList(ctx context.Context, workspaceID int64) ([]SilenceAlarm, error) {
	var out []SilenceAlarm
	q := s.db.WithContext(ctx).Order("id")
	if workspaceID != 0 {
		q = q.Where("workspace_id = ?", workspaceID)
	} else {
		q = q.Where("enabled")
	}
	if err := q.Find(&out).Error; err != nil {
		return nil, fmt.Errorf("models: list silence alarms: %w", err)
	}
	return out, nil
}

// SilenceAlarmGet returns one alarm of a workspace.
func (s *Store) SilenceAlarmGet(ctx context.Context, workspaceID, id int64) (SilenceAlarm, error) {
	var a SilenceAlarm
	err := s.db.WithContext(ctx).Where("workspace_id = ?", workspaceID).Take(&a, id).Error
	if errors.Is(err, gorm.ErrRecordNotFound) {
		return a, ErrNotFound
	}
	if err != nil {
		return a, fmt.Errorf("models: silence alarm %d: %w", id, err)
	}
	return a, nil
}

// SilenceAlarmCreate inserts a; ErrConflict when the scope already has one for the metric.
func (s *Store) SilenceAlarmCreate(ctx context.Context, a *SilenceAlarm) error {
	if a.Rule == "" {
		a.Rule = SilenceRuleLearned
	}
	err := s.db.WithContext(ctx).Omit("ID", "CreatedAt", "UpdatedAt", "SilentSince", "LastNotifiedAt", "LastCheckedAt", "Profile", "ProfileAt").Create(a).Error
	if isUniqueViolation(err) {
		return ErrConflict
	}
	if err != nil {
		return fmt.Errorf("models: create silence alarm: %w", err)
	}
	return nil
}

// SilenceAlarmUpdate saves a's configuration; a changed configuration
// starts a fresh episode (the state is cleared).
func (s *Store) SilenceAlarmUpdate(ctx context.Context, a SilenceAlarm) error {
	if a.Rule == "" {
		a.Rule = SilenceRuleLearned
	}
	res := s.db.WithContext(ctx).Exec(`UPDATE silence_alarms SET source_id = ?, metric = ?, rule = ?, threshold_seconds = ?, reminder_seconds = ?,
		business_hours = ?, min_daily_volume = ?, enabled = ?, silent = false, silent_since = NULL, last_notified_at = NULL, reminders = 0,
		profile = NULL, profile_at = NULL, message = '', updated_at = now() WHERE workspace_id = ? AND id = ?`,
		a.SourceID, a.Metric, a.Rule, a.ThresholdSeconds, a.ReminderSeconds, a.BusinessHours, a.MinDailyVolume, a.Enabled, a.WorkspaceID, a.ID)
	if isUniqueViolation(res.Error) {
		return ErrConflict
	}
	if res.Error != nil {
		return fmt.Errorf("models: update silence alarm %d: %w", a.ID, res.Error)
	}
	if res.RowsAffected == 0 {
		return ErrNotFound
	}
	return nil
}

// SilenceAlarmDelete removes one alarm.
func (s *Store) SilenceAlarmDelete(ctx context.Context, workspaceID, id int64) error {
	res := s.db.WithContext(ctx).Exec(`DELETE FROM silence_alarms WHERE workspace_id = ? AND id = ?`, workspaceID, id)
	if res.Error != nil {
		return fmt.Errorf("models: delete silence alarm %d: %w", id, res.Error)
	}
	if res.RowsAffected == 0 {
		return ErrNotFound
	}
	return nil
}

// SilenceAlarmSaveState records a check's outcome.
func (s *Store) SilenceAlarmSaveState(ctx context.Context, a SilenceAlarm) error {
	err := s.db.WithContext(ctx).Exec(`UPDATE silence_alarms SET silent = ?, silent_since = ?, last_notified_at = ?, reminders = ?, last_checked_at = ?,
		message = ? WHERE id = ?`, a.Silent, a.SilentSince, a.LastNotifiedAt, a.Reminders, a.LastCheckedAt, a.Message, a.ID).Error
	if err != nil {
		return fmt.Errorf("models: save silence alarm state %d: %w", a.ID, err)
	}
	return nil
}

// SilenceAlarmSaveProfile caches an alarm's learned rhythm.
func (s *Store) SilenceAlarmSaveProfile(ctx context.Context, id int64, profile json.RawMessage, at time.Time) error {
	err := s.db.WithContext(ctx).Exec(`UPDATE silence_alarms SET profile = ?, profile_at = ? WHERE id = ?`, profile, at, id).Error
	if err != nil {
		return fmt.Errorf("models: save silence profile %d: %w", id, err)
	}
	return nil
}

// ArrivalsByHourOfWeek counts the leads applied in [since, until) from a
// source (0: the whole workspace) per hour of the week of their arrival in
// zone (0 is Monday 00:00-01:00), and returns the first arrival (zero: none).
func (s *Store) ArrivalsByHourOfWeek(ctx context.Context, workspaceID, sourceID int64, zone string, since, until time.Time) (map[int]int64, time.Time, error) {
	if zone == "" {
		zone = "UTC"
	}
	q := `SELECT ((extract(isodow FROM received_at AT TIME ZONE @zone)::int - 1) * 24 + extract(hour FROM received_at AT TIME ZONE @zone)::int) AS slot,
		count(*) AS n, min(received_at) AS first
		FROM events WHERE workspace_id = @ws AND status IN ('applied', 'unchanged') AND processed_at >= @since AND processed_at < @until`
	if sourceID != 0 {
		q += ` AND source_id = @source`
	}
	var rows []struct {
		Slot  int
		N     int64
		First time.Time
	}
	err := s.db.WithContext(ctx).Raw(q+` GROUP BY 1`, map[string]any{"zone": zone, "ws": workspaceID, "source": sourceID, "since": since, "until": until}).
		Scan(&rows).Error
	if err != nil {
		return nil, time.Time{}, fmt.Errorf("models: arrivals by hour of week: %w", err)
	}
	out := make(map[int]int64, len(rows))
	var first time.Time
	for _, r := range rows {
		out[r.Slot] += r.N
		if first.IsZero() || r.First.Before(first) {
			first = r.First
		}
	}
	return out, first, nil
}

// HealthAlarm is one health metric's threshold and state in a workspace.
type HealthAlarm struct {
	WorkspaceID int64      `json:"-"`
	Metric      string     `json:"metric"`
	Threshold   float64    `json:"threshold"`
	Enabled     bool       `json:"enabled"`
	Firing      bool       `json:"firing"`
	FiringSince *time.Time `json:"firing_since"`
	LastValue   *float64   `json:"last_value"`
	UpdatedAt   time.Time  `json:"updated_at"`
}

// TableName maps HealthAlarm to health_alarms.
func (HealthAlarm) TableName() string { return "health_alarms" }

// HealthAlarmList returns the stored health alarms of a workspace.
func (s *Store) HealthAlarmList(ctx context.Context, workspaceID int64) ([]HealthAlarm, error) {
	var out []HealthAlarm
	if err := s.db.WithContext(ctx).Where("workspace_id = ?", workspaceID).Order("metric").Find(&out).Error; err != nil {
		return nil, fmt.Errorf("models: list health alarms: %w", err)
	}
	return out, nil
}

// HealthAlarmConfigure sets a metric's threshold and whether it is enabled,
// keeping its state.
func (s *Store) HealthAlarmConfigure(ctx context.Context, workspaceID int64, metric string, threshold float64, enabled bool) error {
	err := s.db.WithContext(ctx).Exec(`INSERT INTO health_alarms (workspace_id, metric, threshold, enabled) VALUES (?, ?, ?, ?)
		ON CONFLICT (workspace_id, metric) DO UPDATE SET threshold = EXCLUDED.threshold, enabled = EXCLUDED.enabled, updated_at = now()`,
		workspaceID, metric, threshold, enabled).Error
	if err != nil {
		return fmt.Errorf("models: configure health alarm %s: %w", metric, err)
	}
	return nil
}

// HealthAlarmSaveState records a check's outcome, creating the row with the
// given threshold when the metric was never configured.
func (s *Store) HealthAlarmSaveState(ctx context.Context, a HealthAlarm) error {
	err := s.db.WithContext(ctx).Exec(`INSERT INTO health_alarms (workspace_id, metric, threshold, enabled, firing, firing_since, last_value)
		VALUES (?, ?, ?, true, ?, ?, ?)
		ON CONFLICT (workspace_id, metric) DO UPDATE SET firing = EXCLUDED.firing, firing_since = EXCLUDED.firing_since, last_value = EXCLUDED.last_value`,
		a.WorkspaceID, a.Metric, a.Threshold, a.Firing, a.FiringSince, a.LastValue).Error
	if err != nil {
		return fmt.Errorf("models: save health alarm state %s: %w", a.Metric, err)
	}
	return nil
}

package models

import (
	"context"
	"errors"
	"fmt"
	"time"

	"gorm.io/gorm"
)

// Source alarm kinds (source_alarms.kind).
const (
	SourceAlarmSignatureRefused = "signature_refused"
)

// SourceAlarm is the state of one alarm about one source.
type SourceAlarm struct {
	SourceID    int64      `json:"source_id"`
	WorkspaceID int64      `json:"-"`
	Kind        string     `json:"kind"`
	Firing      bool       `json:"firing"`
	FiringSince *time.Time `json:"firing_since"`
	Message     string     `json:"message"`
	UpdatedAt   time.Time  `json:"updated_at"`
}

// TableName maps SourceAlarm to source_alarms.
func (SourceAlarm) TableName() string { return "source_alarms" }

// SourceAlarmFire marks an alarm firing with its message and reports whether
// this call started the episode (false: it was already firing; the message
// is refreshed). Exactly one of concurrent callers sees true.
func (s *Store) SourceAlarmFire(ctx context.Context, workspaceID, sourceID int64, kind, message string, at time.Time) (bool, error) {
	var started bool
	err := s.db.WithContext(ctx).Raw(`INSERT INTO source_alarms AS sa (source_id, workspace_id, kind, firing, firing_since, message, updated_at)
		VALUES (?, ?, ?, true, ?, ?, now())
		ON CONFLICT (source_id, kind) DO UPDATE SET message = EXCLUDED.message, updated_at = now(),
		  firing_since = CASE WHEN sa.firing THEN sa.firing_since ELSE EXCLUDED.firing_since END, firing = true
		RETURNING (xmax = 0 OR firing_since = ?)`, sourceID, workspaceID, kind, at, message, at).Scan(&started).Error
	if err != nil {
		return false, fmt.Errorf("models: fire source alarm %s of %d: %w", kind, sourceID, err)
	}
	return started, nil
}

// SourceAlarmClear ends a firing alarm and returns the episode it ended
// (nil: it was not firing, or a concurrent caller cleared it).
func (s *Store) SourceAlarmClear(ctx context.Context, sourceID int64, kind, message string) (*SourceAlarm, error) {
	var a SourceAlarm
	res := s.db.WithContext(ctx).Raw(`UPDATE source_alarms SET firing = false, message = ?, updated_at = now()
		WHERE source_id = ? AND kind = ? AND firing RETURNING source_id, workspace_id, kind, firing, firing_since, message, updated_at`,
		message, sourceID, kind).Scan(&a)
	if res.Error != nil {
		return nil, fmt.Errorf("models: clear source alarm %s of %d: %w", kind, sourceID, res.Error)
	}
	if res.RowsAffected == 0 {
		return nil, nil
	}
	return &a, nil
}

// SourceAlarmGet returns one alarm's state (not firing when it never fired).
func (s *Store) SourceAlarmGet(ctx context.Context, sourceID int64, kind string) (SourceAlarm, error) {
	var a SourceAlarm
	err := s.db.WithContext(ctx).Where("source_id = ? AND kind = ?", sourceID, kind).Take(&a).Error
	if errors.Is(err, gorm.ErrRecordNotFound) {
		return SourceAlarm{SourceID: sourceID, Kind: kind}, nil
	}
	if err != nil {
		return a, fmt.Errorf("models: source alarm %s of %d: %w", kind, sourceID, err)
	}
	return a, nil
}

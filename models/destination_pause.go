package models

import (
	"context"
	"fmt"
	"strings"
	"time"
)

// Why a destination is paused. The system's own causes (auth, blocked, setup, quota) are faults of the
// destination that the pause probe checks and clears by itself; an operator's pause and the runaway
// guard's wait for a person.
const (
	PauseOperator = "operator"
	PauseAuth     = "auth"    // the CRM refused the credentials
	PauseBlocked  = "blocked" // the SSRF guard refused the base URL's address
	PauseSetup    = "setup"   // the account lacks a field, pipeline or stage the configuration names
	PauseQuota    = "quota"   // the daily request quota is spent until paused_until
	PauseRunaway  = "runaway"
)

// SystemPauseCauses are the causes the pause probe may clear.
var SystemPauseCauses = []string{PauseAuth, PauseBlocked, PauseSetup, PauseQuota}

// FaultRepeatWindow: a fault that comes back this soon after an automatic resume, with the same reason,
// is one the probe cannot see (its check passes, the writes fail). Its new pause waits this long before
// the next probe and raises no second alert.
const FaultRepeatWindow = 10 * time.Minute

// FaultPause is the outcome of DestinationPauseFault.
type FaultPause struct {
	Started bool // this call started the pause episode (and so alerts unless Repeat)
	Episode int
	Repeat  bool // the same fault as the one auto-resumed within FaultRepeatWindow
}

// DestinationPauseFault pauses a destination for a fault of its own. A destination already paused for
// the same cause gets the newer reason and reset time (no new episode); any other pause is left alone.
func (s *Store) DestinationPauseFault(ctx context.Context, id int64, cause, reason string, until *time.Time, now time.Time) (FaultPause, error) {
	db := s.db.WithContext(ctx)
	var rows []struct {
		PauseEpisode      int
		AutoResumedAt     *time.Time
		AutoResumedReason string
	}
	err := db.Raw(`UPDATE destinations SET paused = true, paused_reason = ?, pause_cause = ?, paused_until = ?, paused_at = now(),
		pause_episode = pause_episode + 1, updated_at = now() WHERE id = ? AND NOT paused
		RETURNING pause_episode, auto_resumed_at, auto_resumed_reason`, reason, cause, until, id).Scan(&rows).Error
	if err != nil {
		return FaultPause{}, fmt.Errorf("models: pause destination %d (%s): %w", id, cause, err)
	}
	if len(rows) == 0 {
		err := db.Exec(`UPDATE destinations SET paused_reason = ?, paused_until = COALESCE(?, paused_until)
			WHERE id = ? AND paused AND pause_cause = ?`, reason, until, id, cause).Error
		if err != nil {
			return FaultPause{}, fmt.Errorf("models: refresh pause of destination %d: %w", id, err)
		}
		return FaultPause{}, nil
	}
	p := FaultPause{Started: true, Episode: rows[0].PauseEpisode}
	// prev is "cause: reason" of the last automatic resume; a quota's reason names its reset, so any
	// quota counts as the same fault.
	prev := rows[0].AutoResumedReason
	same := prev == cause+": "+reason || cause == PauseQuota && strings.HasPrefix(prev, PauseQuota+": ")
	if at := rows[0].AutoResumedAt; at != nil && same && now.Sub(*at) < FaultRepeatWindow {
		p.Repeat = true
		if until == nil {
			wait := now.Add(FaultRepeatWindow)
			if err := db.Exec(`UPDATE destinations SET paused_until = ? WHERE id = ?`, wait, id).Error; err != nil {
				return FaultPause{}, fmt.Errorf("models: back off repeated fault of destination %d: %w", id, err)
			}
		}
	}
	return p, nil
}

// DestinationPauseByOperator pauses a destination as a person's decision; a pause the system started
// becomes the operator's, so the probe no longer clears it.
func (s *Store) DestinationPauseByOperator(ctx context.Context, id int64, reason string) error {
	err := s.db.WithContext(ctx).Exec(`UPDATE destinations SET paused_reason = ?, pause_cause = ?, paused_until = NULL,
		paused_at = CASE WHEN paused THEN paused_at ELSE now() END,
		pause_episode = CASE WHEN paused THEN pause_episode ELSE pause_episode + 1 END,
		paused = true, updated_at = now() WHERE id = ? AND (NOT paused OR pause_cause <> ?)`, reason, PauseOperator, id, PauseOperator).Error
	if err != nil {
		return fmt.Errorf("models: pause destination %d: %w", id, err)
	}
	return nil
}

// DestinationsPausedBySystem lists the live destinations paused for a fault the probe may clear.
func (s *Store) DestinationsPausedBySystem(ctx context.Context) ([]Destination, error) {
	var out []Destination
	err := s.db.WithContext(ctx).Where("deleted_at IS NULL AND enabled AND paused AND pause_cause IN ?", SystemPauseCauses).
		Order("id").Find(&out).Error
	if err != nil {
		return nil, fmt.Errorf("models: destinations paused by the system: %w", err)
	}
	return out, nil
}

// DestinationAutoResume clears a system pause if it is still the same episode with a system cause (an
// operator who paused it since keeps it paused); held work becomes due at once. It reports whether it
// resumed.
func (s *Store) DestinationAutoResume(ctx context.Context, id int64, episode int, now time.Time) (bool, error) {
	db := s.db.WithContext(ctx)
	res := db.Exec(`UPDATE destinations SET paused = false, auto_resumed_at = ?, auto_resumed_reason = pause_cause || ': ' || paused_reason,
		paused_reason = '', pause_cause = '', paused_until = NULL, paused_at = NULL, updated_at = now()
		WHERE id = ? AND paused AND pause_episode = ? AND pause_cause IN ?`, now, id, episode, SystemPauseCauses)
	if res.Error != nil {
		return false, fmt.Errorf("models: resume destination %d: %w", id, res.Error)
	}
	if res.RowsAffected == 0 {
		return false, nil
	}
	if err := db.Exec(`UPDATE sync_queue SET next_attempt_at = now(), lease_until = NULL WHERE destination_id = ? AND status = 'pending'`, id).Error; err != nil {
		return false, fmt.Errorf("models: resume destination %d: %w", id, err)
	}
	return true, nil
}

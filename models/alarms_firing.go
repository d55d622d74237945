package models

import (
	"context"
	"fmt"
	"time"
)

// Kinds of FiringAlarm.
const (
	AlarmSignatureRefused  = SourceAlarmSignatureRefused
	AlarmSilence           = "silence"
	AlarmHealth            = "health"
	AlarmDestinationPaused = "destination_paused"
	AlarmDeadman           = "deadman"
)

// DeadmanMaxTickGap is how old the scheduler's last tick may be before the dead-man switch fires on
// screen (its alert uses the same gap).
const DeadmanMaxTickGap = 3 * time.Minute

// FiringAlarm is one alarm firing now in a workspace, as the banners, the nav count and the API list it.
type FiringAlarm struct {
	Kind       string `json:"kind"` // signature_refused | silence | health | destination_paused | deadman
	SourceID   *int64 `json:"source_id"`
	SourceName string `json:"source_name"`
	// DestinationID and Subject name the destination of a destination_paused alarm, the metric of a
	// health alarm.
	DestinationID *int64    `json:"destination_id,omitempty"`
	Subject       string    `json:"subject,omitempty"`
	Message       string    `json:"message"`
	Since         time.Time `json:"since"`
	// Link is the page that explains it, relative to the workspace
	// ("sources/12", "destinations/3", or "guards" for a workspace-wide alarm).
	Link string `json:"link"`
	// Action says what to do about it, in a sentence.
	Action string `json:"action"`
}

// AlarmsFiring is AlarmsFiringAt now.
func (s *Store) AlarmsFiring(ctx context.Context, workspaceID int64) ([]FiringAlarm, error) {
	return s.AlarmsFiringAt(ctx, workspaceID, time.Now())
}

// AlarmsFiringAt lists what is firing in a workspace at now, oldest first: per-source alarms (signature
// refusals), silence alarms, health alarms, paused destinations and the scheduler's dead-man switch. It
// is the one answer to "what is firing" for every page and the API.
func (s *Store) AlarmsFiringAt(ctx context.Context, workspaceID int64, now time.Time) ([]FiringAlarm, error) {
	var out []FiringAlarm
	err := s.db.WithContext(ctx).Raw(firingSQL, workspaceID, workspaceID, workspaceID, workspaceID, now.Add(-DeadmanMaxTickGap)).Scan(&out).Error
	if err != nil {
		return nil, fmt.Errorf("models: firing alarms of workspace %d: %w", workspaceID, err)
	}
	if out == nil {
		out = []FiringAlarm{} // the API answers [] rather than null
	}
	for i := range out {
		out[i].Action = alarmAction(out[i])
	}
	return out, nil
}

// alarmAction is the advice a banner gives for an alarm.
func alarmAction(a FiringAlarm) string {
	switch a.Kind {
	case AlarmSignatureRefused:
		return "Deliveries are refused: check that the sender signs with the source's current secret, or rotate it on both sides."
	case AlarmSilence:
		if a.SourceID != nil {
			return "Check that the sender is still sending to this source's URL; the alarm clears with the next applied event."
		}
		return "Check the sources and the CRM destination; the alarm clears when traffic resumes."
	case AlarmHealth:
		return "Open the guards page for the metric, then the page it concerns (dead letters, destinations, queues)."
	case AlarmDestinationPaused:
		return "Fix the cause on the destination page (a token, a missing field), then resume it: held changes drain then."
	case AlarmDeadman:
		return "Check that a scheduler process is running and that workers are not saturated."
	}
	return ""
}

// DeadLettersOpenCount counts a workspace's open dead letters (the nav's badge).
func (s *Store) DeadLettersOpenCount(ctx context.Context, workspaceID int64) (int64, error) {
	var n int64
	if err := s.db.WithContext(ctx).Raw(`SELECT count(*) FROM dead_letters WHERE workspace_id = ? AND status = 'open'`, workspaceID).Scan(&n).Error; err != nil {
		return 0, fmt.Errorf("models: count open dead letters of workspace %d: %w", workspaceID, err)
	}
	return n, nil
}

// firingSQL lists every kind of firing alarm of a workspace (its id four times, then the dead-man cut-off).
const firingSQL = `
		SELECT a.kind, a.source_id, coalesce(src.name, '') AS source_name, NULL::bigint AS destination_id, '' AS subject,
		       a.message, a.firing_since AS since, 'sources/' || a.source_id AS link
		FROM source_alarms a JOIN sources src ON src.id = a.source_id
		WHERE a.workspace_id = CAST(? AS bigint) AND a.firing AND src.deleted_at IS NULL
		UNION ALL
		SELECT 'silence', sa.source_id, coalesce(src.name, ''), NULL, sa.metric,
		       CASE WHEN sa.message <> '' THEN sa.message WHEN sa.metric = 'crm_write' THEN 'No CRM write succeeded for too long'
		            ELSE 'No event applied for too long' END, sa.silent_since,
		       CASE WHEN sa.source_id IS NULL THEN 'guards' ELSE 'sources/' || sa.source_id END
		FROM silence_alarms sa LEFT JOIN sources src ON src.id = sa.source_id
		WHERE sa.workspace_id = CAST(? AS bigint) AND sa.enabled AND sa.silent AND sa.silent_since IS NOT NULL
		UNION ALL
		SELECT 'health', NULL, '', NULL, h.metric,
		       h.metric || ' is ' || coalesce(round(h.last_value::numeric, 1)::text, 'unknown') || ', above its threshold of ' || round(h.threshold::numeric, 1)::text,
		       coalesce(h.firing_since, h.updated_at), 'guards'
		FROM health_alarms h
		WHERE h.workspace_id = CAST(? AS bigint) AND h.enabled AND h.firing
		UNION ALL
		SELECT 'destination_paused', NULL, '', d.id, d.name,
		       d.name || ' is paused' || CASE WHEN d.paused_reason <> '' THEN ': ' || d.paused_reason ELSE '' END,
		       coalesce(d.paused_at, d.updated_at), 'destinations/' || d.id
		FROM destinations d
		WHERE d.workspace_id = CAST(? AS bigint) AND d.paused AND d.deleted_at IS NULL
		UNION ALL
		SELECT 'deadman', NULL, '', NULL, '',
		       'The scheduler has not ticked since ' || to_char(g.last_tick_at AT TIME ZONE 'UTC', 'YYYY-MM-DD HH24:MI') || ' UTC: retries, alarms and sweeps are not running',
		       g.last_tick_at, 'guards'
		FROM guard_heartbeat g
		WHERE g.id = 1 AND g.last_tick_at < CAST(? AS timestamptz)
		ORDER BY since`

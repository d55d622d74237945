package alarm

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/leadgate/leadgate/guards/alert"
	"github.com/leadgate/leadgate/models"
)

// DestinationProbe reports how many of a workspace's CRM destinations are
// paused by an auth failure, and its sync lag when the sync engine knows it
// better than the outbox does (known false: use the outbox's oldest pending
// CRM write). The CRM sync engine provides it.
type DestinationProbe func(ctx context.Context, workspaceID int64) (pausedByAuth int, syncLag time.Duration, lagKnown bool, err error)

// Monitor checks every workspace's silence and health alarms, persists their
// state and writes each notice to the outbox as an alert, in one transaction
// per alarm, so a notice is written once however often checks run.
type Monitor struct {
	Store        *models.Store
	Log          *slog.Logger
	Now          func() time.Time
	Destinations DestinationProbe // nil: the destination_paused_auth metric is not measured
	// LastCRMWrite overrides how the time of a workspace's last successful
	// CRM write is found (default: the newest sent crm_upsert outbox row).
	LastCRMWrite func(ctx context.Context, workspaceID int64) (time.Time, error)
	// RejectionMinSample is the fewest events in an hour for a rejection rate (default 20).
	RejectionMinSample int
}

// CheckSilence evaluates every enabled silence alarm once.
func (m *Monitor) CheckSilence(ctx context.Context) error {
	alarms, err := m.Store.SilenceAlarmList(ctx, 0)
	if err != nil {
		return err
	}
	var errs []error
	for _, a := range alarms {
		if err := m.checkSilence(ctx, a); err != nil {
			errs = append(errs, fmt.Errorf("silence alarm %d: %w", a.ID, err))
		}
	}
	return errors.Join(errs...)
}

func (m *Monitor) checkSilence(ctx context.Context, a models.SilenceAlarm) error {
	now := m.now()
	rule, err := SilenceRuleOf(a)
	if err != nil {
		return err
	}
	var obs SilenceObservation
	sourceID := int64(0)
	if a.SourceID != nil {
		sourceID = *a.SourceID
	}
	if a.Metric == models.SilenceCRMWrite {
		obs.LastSuccess, err = m.lastCRMWrite(ctx, a.WorkspaceID)
	} else {
		obs.LastSuccess, err = m.Store.LastApplyAt(ctx, a.WorkspaceID, sourceID)
	}
	if err != nil {
		return err
	}
	if rule.MinDailyVolume > 0 {
		if obs.DailyVolume, err = m.Store.DailyVolume(ctx, a.WorkspaceID, sourceID, now); err != nil {
			return err
		}
	}
	st := SilenceState{Silent: a.Silent, Reminders: a.Reminders}
	if a.SilentSince != nil {
		st.Since = *a.SilentSince
	}
	if a.LastNotifiedAt != nil {
		st.LastNotified = *a.LastNotifiedAt
	}
	next, notice := EvaluateSilence(rule, st, obs, now)
	text := ""
	if a.Rule == models.SilenceRuleLearned && a.Metric == models.SilenceApply {
		p, err := m.Profile(ctx, a, now)
		if err != nil {
			return err
		}
		if p.Sufficient() {
			name, err := m.scopeName(ctx, a)
			if err != nil {
				return err
			}
			next, notice, text = EvaluateLearned(p, name, rule.Reminder, st, obs.LastSuccess, now)
		}
	}
	if notice == NoticeEnter && text == "" {
		text = fmt.Sprintf("No event applied since %s (more than %s of business hours).", obs.LastSuccess.UTC().Format(time.RFC3339), rule.Threshold)
	}
	return m.Store.Tx(ctx, func(tx *models.Store) error {
		if notice != "" {
			episode := st.Since
			if notice == NoticeEnter {
				episode = next.Since
			}
			stableID, p := silenceNotice(a, rule, next, obs, notice, episode, now)
			if text != "" && notice != NoticeRecover {
				p.Text = text
			}
			if _, err := alert.Enqueue(ctx, tx, a.WorkspaceID, nil, stableID, p); err != nil {
				return err
			}
		}
		switch {
		case !next.Silent:
			a.Message = ""
		case text != "":
			a.Message = text
		}
		a.Silent, a.Reminders, a.LastCheckedAt = next.Silent, next.Reminders, &now
		a.SilentSince, a.LastNotifiedAt = timePtr(next.Since), timePtr(next.LastNotified)
		return tx.SilenceAlarmSaveState(ctx, a)
	})
}

// EvaluateLearned is EvaluateSilence for the learned rule: it enters when the
// silence since the last success has less than LearnedAlpha chance of being
// luck under the profile, reminds every reminder while silent, and recovers
// on the next success. It also returns the episode's text.
func EvaluateLearned(p Profile, name string, reminder time.Duration, st SilenceState, lastSuccess, now time.Time) (SilenceState, string, string) {
	v := JudgeLearned(p, name, lastSuccess, now)
	if st.Silent {
		if lastSuccess.After(st.Since) {
			return SilenceState{}, NoticeRecover, ""
		}
		if now.Sub(st.LastNotified) >= reminder {
			st.LastNotified = now
			st.Reminders++
			return st, NoticeReminder, v.Message
		}
		return st, "", v.Message
	}
	if !v.Silent {
		return st, "", ""
	}
	return SilenceState{Silent: true, Since: now, LastNotified: now}, NoticeEnter, v.Message
}

// Profile is an alarm's learned rhythm, recomputed from the last
// LearnedWindow of history when the cached one is an hour old.
func (m *Monitor) Profile(ctx context.Context, a models.SilenceAlarm, now time.Time) (Profile, error) {
	var p Profile
	if a.ProfileAt != nil && now.Sub(*a.ProfileAt) < time.Hour && now.After(*a.ProfileAt) && len(a.Profile) > 0 && json.Unmarshal(a.Profile, &p) == nil {
		return p, nil
	}
	zone := profileZone(a)
	sourceID := int64(0)
	if a.SourceID != nil {
		sourceID = *a.SourceID
	}
	since := now.Add(-LearnedWindow).Truncate(time.Hour) // whole hours of the week
	counts, first, err := m.Store.ArrivalsByHourOfWeek(ctx, a.WorkspaceID, sourceID, zone, since, now)
	if err != nil {
		return p, err
	}
	span := time.Duration(0)
	if !first.IsZero() {
		if first.Before(since) {
			first = since
		}
		span = now.Sub(first)
	}
	p = ProfileCounts(zone, span, counts)
	if b, err := json.Marshal(p); err == nil && a.ID != 0 {
		if err := m.Store.SilenceAlarmSaveProfile(ctx, a.ID, b, now); err != nil {
			return p, err
		}
	}
	return p, nil
}

// profileZone is the time zone an alarm learns hours of the week in: its
// business hours' zone, else UTC.
func profileZone(a models.SilenceAlarm) string {
	var bh BusinessHours
	if len(a.BusinessHours) > 0 && json.Unmarshal(a.BusinessHours, &bh) == nil && bh.TimeZone != "" {
		return bh.TimeZone
	}
	return "UTC"
}

// scopeName names what an alarm watches in its messages.
func (m *Monitor) scopeName(ctx context.Context, a models.SilenceAlarm) (string, error) {
	if a.SourceID == nil {
		return "The workspace", nil
	}
	src, err := m.Store.SourceGet(ctx, a.WorkspaceID, *a.SourceID)
	if err != nil {
		return "", err
	}
	return src.Name, nil
}

// DescribeSilence is an alarm's rule as the source page states it.
func (m *Monitor) DescribeSilence(ctx context.Context, a models.SilenceAlarm, now time.Time) (string, error) {
	rule, err := SilenceRuleOf(a)
	if err != nil {
		return "", err
	}
	if a.Rule != models.SilenceRuleLearned || a.Metric != models.SilenceApply {
		return fmt.Sprintf("Static: alarms after %s without a lead%s.", rule.Threshold, hoursNote(rule)), nil
	}
	p, err := m.Profile(ctx, a, now)
	if err != nil {
		return "", err
	}
	return LearnedDescription(p, rule), nil
}

// SilenceRuleOf reads a stored alarm's rule.
func SilenceRuleOf(a models.SilenceAlarm) (SilenceRule, error) {
	var bh BusinessHours
	if len(a.BusinessHours) > 0 {
		if err := json.Unmarshal(a.BusinessHours, &bh); err != nil {
			return SilenceRule{}, fmt.Errorf("business_hours: %w", err)
		}
	}
	sched, err := bh.Compile()
	if err != nil {
		return SilenceRule{}, err
	}
	r := SilenceRule{Threshold: time.Duration(a.ThresholdSeconds) * time.Second, Reminder: time.Duration(a.ReminderSeconds) * time.Second,
		Hours: sched, MinDailyVolume: float64(a.MinDailyVolume)}
	if r.Threshold <= 0 {
		r.Threshold = DefaultSilenceThreshold
	}
	if r.Reminder <= 0 {
		r.Reminder = DefaultSilenceReminder
	}
	return r, nil
}

func silenceNotice(a models.SilenceAlarm, r SilenceRule, st SilenceState, obs SilenceObservation, notice string, episode, now time.Time) (string, alert.Payload) {
	scope := "the workspace"
	if a.SourceID != nil {
		scope = fmt.Sprintf("source %d", *a.SourceID)
	}
	what := "no event applied"
	if a.Metric == models.SilenceCRMWrite {
		what = "no CRM write succeeded"
	}
	dedup := fmt.Sprintf("silence:%d:%d:%d", a.WorkspaceID, a.ID, episode.Unix())
	p := alert.Payload{Type: "silence", DedupKey: dedup, Severity: alert.SeverityWarning,
		Details: map[string]any{"alarm_id": a.ID, "metric": a.Metric, "source_id": a.SourceID, "last_success": obs.LastSuccess.UTC().Format(time.RFC3339),
			"threshold_seconds": int(r.Threshold / time.Second)}}
	since := obs.LastSuccess.UTC().Format(time.RFC3339)
	switch notice {
	case NoticeEnter:
		p.Action, p.Title = alert.ActionTrigger, fmt.Sprintf("Silence: %s for %s", what, scope)
		p.Text = fmt.Sprintf("%s for %s since %s (more than %s of business hours).", capitalize(what), scope, since, r.Threshold)
		return "alert:" + dedup, p
	case NoticeReminder:
		p.Action, p.Title = alert.ActionTrigger, fmt.Sprintf("Still silent: %s for %s", what, scope)
		p.Text = fmt.Sprintf("Reminder %d: %s for %s since %s.", st.Reminders, what, scope, since)
		return fmt.Sprintf("alert:%s:reminder:%d", dedup, st.Reminders), p
	default:
		p.Action, p.Title = alert.ActionResolve, fmt.Sprintf("Recovered: traffic resumed for %s", scope)
		p.Text = fmt.Sprintf("The silence of %s is over: last success at %s (alarm raised at %s).", scope, since, episode.UTC().Format(time.RFC3339))
		return "alert:" + dedup + ":recovered", p
	}
}

// CheckHealth measures every workspace once and evaluates its health alarms.
func (m *Monitor) CheckHealth(ctx context.Context) error {
	wss, err := m.Store.WorkspaceList(ctx, false)
	if err != nil {
		return err
	}
	var errs []error
	for _, ws := range wss {
		if err := m.checkHealth(ctx, ws.ID); err != nil {
			errs = append(errs, fmt.Errorf("health of workspace %s: %w", ws.Slug, err))
		}
	}
	return errors.Join(errs...)
}

func (m *Monitor) checkHealth(ctx context.Context, workspaceID int64) error {
	now := m.now()
	values, err := m.Measure(ctx, workspaceID, now)
	if err != nil {
		return err
	}
	stored, err := m.Store.HealthAlarmList(ctx, workspaceID)
	if err != nil {
		return err
	}
	byMetric := map[string]models.HealthAlarm{}
	for _, a := range stored {
		byMetric[a.Metric] = a
	}
	for _, metric := range HealthMetrics {
		a, ok := byMetric[metric.Name]
		if !ok {
			a = models.HealthAlarm{WorkspaceID: workspaceID, Metric: metric.Name, Threshold: metric.Default, Enabled: true}
		}
		value, known := values[metric.Name]
		st := HealthState{Firing: a.Firing}
		if a.FiringSince != nil {
			st.Since = *a.FiringSince
		}
		if !a.Enabled {
			known, value = true, a.Threshold // a disabled alarm recovers and stays quiet
		}
		next, notice := EvaluateHealth(a.Threshold, value, known, st, now)
		if notice == "" && (!known || (a.LastValue != nil && *a.LastValue == value)) {
			continue
		}
		err := m.Store.Tx(ctx, func(tx *models.Store) error {
			if notice != "" {
				episode := next.Since
				if notice == NoticeRecover {
					episode = st.Since
				}
				stableID, p := healthNotice(workspaceID, metric, a.Threshold, value, notice, episode)
				if _, err := alert.Enqueue(ctx, tx, workspaceID, nil, stableID, p); err != nil {
					return err
				}
			}
			a.Firing, a.FiringSince, a.LastValue = next.Firing, timePtr(next.Since), &value
			return tx.HealthAlarmSaveState(ctx, a)
		})
		if err != nil {
			return err
		}
	}
	return nil
}

// Measure reads every health metric of a workspace that can be measured now.
func (m *Monitor) Measure(ctx context.Context, workspaceID int64, now time.Time) (map[string]float64, error) {
	minSample := m.RejectionMinSample
	if minSample <= 0 {
		minSample = 20
	}
	hm, err := m.Store.HealthMeasure(ctx, workspaceID, now, minSample)
	if err != nil {
		return nil, err
	}
	out := map[string]float64{MetricDeadLettersOpen: hm.DeadLettersOpen,
		// No pending work means no lag and no old row.
		MetricSyncLag: 0, MetricOutboxOldest: 0, MetricDeadLettersOldest: 0}
	put := func(k string, v *float64) {
		if v != nil {
			out[k] = *v
		}
	}
	put(MetricSyncLag, hm.SyncLag)
	put(MetricOutboxOldest, hm.OutboxOldest)
	put(MetricDeadLettersOldest, hm.DeadLettersOldest)
	put(MetricIngestRejectionRate, hm.RejectionRate)
	if m.Destinations != nil {
		paused, lag, lagKnown, err := m.Destinations(ctx, workspaceID)
		if err != nil {
			return nil, fmt.Errorf("alarm: destination probe: %w", err)
		}
		out[MetricDestinationPausedAuth] = float64(paused)
		if lagKnown {
			out[MetricSyncLag] = lag.Seconds()
		}
	}
	return out, nil
}

func healthNotice(workspaceID int64, metric HealthMetric, threshold, value float64, notice string, episode time.Time) (string, alert.Payload) {
	dedup := fmt.Sprintf("health:%d:%s:%d", workspaceID, metric.Name, episode.Unix())
	p := alert.Payload{Type: "health", DedupKey: dedup, Severity: metric.Severity,
		Details: map[string]any{"metric": metric.Name, "value": value, "threshold": threshold, "unit": metric.Unit}}
	if notice == NoticeEnter {
		p.Action = alert.ActionTrigger
		p.Title = fmt.Sprintf("Health: %s is %s (threshold %s)", metric.Name, num(value), num(threshold))
		p.Text = fmt.Sprintf("%s: %s %s, above the threshold of %s.", capitalize(metric.Describes), num(value), metric.Unit, num(threshold))
		return "alert:" + dedup, p
	}
	p.Action = alert.ActionResolve // keeps the trigger's severity so the same channels hear of it
	p.Title = fmt.Sprintf("Recovered: %s is back to %s", metric.Name, num(value))
	p.Text = fmt.Sprintf("%s: %s %s, at or below the threshold of %s.", capitalize(metric.Describes), num(value), metric.Unit, num(threshold))
	return "alert:" + dedup + ":recovered", p
}

func (m *Monitor) lastCRMWrite(ctx context.Context, workspaceID int64) (time.Time, error) {
	if m.LastCRMWrite != nil {
		return m.LastCRMWrite(ctx, workspaceID)
	}
	return m.Store.LastCRMWriteAt(ctx, workspaceID)
}

func (m *Monitor) now() time.Time {
	if m.Now != nil {
		return m.Now()
	}
	return time.Now()
}

func timePtr(t time.Time) *time.Time {
	if t.IsZero() {
		return nil
	}
	return &t
}

func num(v float64) string { return fmt.Sprintf("%.4g", v) }

func capitalize(s string) string {
	if s == "" || s[0] < 'a' || s[0] > 'z' {
		return s
	}
	return string(s[0]-'a'+'A') + s[1:]
}

// CheckWorkspaceHealth evaluates one workspace's health alarms now (after
// an operator changed one, so the page shows the state under the new threshold).
func (m *Monitor) CheckWorkspaceHealth(ctx context.Context, workspaceID int64) error {
	return m.checkHealth(ctx, workspaceID)
}

// CheckSilenceAlarm evaluates one silence alarm now (after an operator changed it).
func (m *Monitor) CheckSilenceAlarm(ctx context.Context, a models.SilenceAlarm) error {
	if !a.Enabled {
		return nil
	}
	return m.checkSilence(ctx, a)
}

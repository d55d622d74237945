package actions

import (
	"context"
	"fmt"

	"github.com/leadgate/leadgate/guards/alarm"
	"github.com/leadgate/leadgate/models"
)

// HealthInput sets one health metric's alarm; a nil field means the metric's default (enabled).
type HealthInput struct {
	Threshold *float64 `json:"threshold"`
	Enabled   *bool    `json:"enabled"`
}

// HealthAlarm is a health alarm's configuration as the API answers it and the audit records it (its
// fields in the order of their names, as the API's answer always had them).
type HealthAlarm struct {
	Enabled   bool    `json:"enabled"`
	Metric    string  `json:"metric"`
	Threshold float64 `json:"threshold"`
}

// PutHealthAlarm sets metric's threshold and whether it is enabled; metric is one of alarm.HealthMetrics,
// resolved by the caller (the surfaces answer an unknown one before reading the input).
func (g *Guards) PutHealthAlarm(ctx context.Context, ws models.Workspace, actor string, metric alarm.HealthMetric, in HealthInput) (HealthAlarm, error) {
	threshold, enabled := metric.Default, true
	if in.Threshold != nil {
		threshold = *in.Threshold
	}
	if in.Enabled != nil {
		enabled = *in.Enabled
	}
	if threshold < 0 || threshold > 1e9 || threshold != threshold {
		return HealthAlarm{}, Invalid("threshold", "threshold must be a number from 0 to 1e9")
	}
	if metric.Name == alarm.MetricIngestRejectionRate && threshold > 100 {
		return HealthAlarm{}, Invalid("threshold", "a rate threshold is a percentage from 0 to 100")
	}
	after := HealthAlarm{Metric: metric.Name, Threshold: threshold, Enabled: enabled}
	err := g.Store.Tx(ctx, func(tx *models.Store) error {
		var before any
		list, err := tx.HealthAlarmList(ctx, ws.ID)
		if err != nil {
			return err
		}
		for _, a := range list {
			if a.Metric == metric.Name {
				before = HealthAlarm{Metric: a.Metric, Threshold: a.Threshold, Enabled: a.Enabled}
			}
		}
		if err := tx.HealthAlarmConfigure(ctx, ws.ID, metric.Name, threshold, enabled); err != nil {
			return err
		}
		return tx.AuditRecord(ctx, models.Audit{WorkspaceID: ws.ID, Actor: actor, Action: "health_alarm.update",
			SubjectType: "health_alarm", SubjectID: metric.Name, Before: before, After: after})
	})
	if err != nil {
		return HealthAlarm{}, fmt.Errorf("save health alarm %s: %w", metric.Name, err)
	}
	if g.Alarms != nil {
		// The state under the new threshold, now rather than at the next check.
		if err := g.Alarms.CheckWorkspaceHealth(ctx, ws.ID); err != nil {
			g.Log.Warn("guards: health alarm saved; its state is refreshed by the next check", "metric", metric.Name, "err", err)
		}
	}
	return after, nil
}

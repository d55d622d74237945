package alarm

import "time"

// Health metrics and their default thresholds (issue 5 §6). An alarm fires
// when its value rises above the threshold and clears when it is back at or
// below it.
const (
	MetricDestinationPausedAuth = "destination_paused_auth"     // destinations paused by an auth failure
	MetricSyncLag               = "sync_lag_seconds"            // age of the oldest CRM write not yet done
	MetricOutboxOldest          = "outbox_oldest_seconds"       // age of the oldest pending outbox row
	MetricDeadLettersOpen       = "dead_letters_open"           // open dead letters
	MetricDeadLettersOldest     = "dead_letters_oldest_seconds" // age of the oldest open dead letter
	MetricIngestRejectionRate   = "ingest_rejection_rate"       // % of the last hour's accepted events (the latest 10,000 at most) rejected
)

// HealthMetric describes one metric.
type HealthMetric struct {
	Name      string  `json:"metric"`
	Default   float64 `json:"default_threshold"`
	Unit      string  `json:"unit"`
	Severity  string  `json:"severity"`
	Describes string  `json:"description"`
}

// HealthMetrics is every health metric with its default.
var HealthMetrics = []HealthMetric{
	{MetricDestinationPausedAuth, 0, "destinations", "critical", "CRM destinations paused because the CRM refused our credentials"},
	{MetricSyncLag, 900, "seconds", "warning", "age of the oldest CRM write still waiting"},
	{MetricOutboxOldest, 1800, "seconds", "warning", "age of the oldest outbox row (CRM writes, side effects, alerts) not yet done"},
	{MetricDeadLettersOpen, 25, "dead letters", "warning", "open dead letters waiting for review"},
	{MetricDeadLettersOldest, 86400, "seconds", "warning", "age of the oldest open dead letter"},
	{MetricIngestRejectionRate, 20, "percent", "warning", "share of the last hour's accepted events (its latest 10,000 at most) rejected as not a lead (at least 20 events)"},
}

// HealthMetricByName finds a metric.
func HealthMetricByName(name string) (HealthMetric, bool) {
	for _, m := range HealthMetrics {
		if m.Name == name {
			return m, true
		}
	}
	return HealthMetric{}, false
}

// HealthState is whether an alarm is firing, and since when.
type HealthState struct {
	Firing bool
	Since  time.Time
}

// EvaluateHealth decides one check: enter when value crosses above the
// threshold, recover when it is back at or below it, nothing otherwise. A
// metric that could not be measured (known false) changes nothing.
func EvaluateHealth(threshold, value float64, known bool, st HealthState, now time.Time) (HealthState, string) {
	if !known {
		return st, ""
	}
	above := value > threshold
	switch {
	case above && !st.Firing:
		return HealthState{Firing: true, Since: now}, NoticeEnter
	case !above && st.Firing:
		return HealthState{}, NoticeRecover
	}
	return st, ""
}

package alarm

import (
	"time"
)

// Silence-alarm defaults (issue 5 §5).
const (
	DefaultSilenceThreshold = 90 * time.Minute
	DefaultSilenceReminder  = 60 * time.Minute
)

// Notice kinds.
const (
	NoticeEnter    = "enter"
	NoticeReminder = "reminder"
	NoticeRecover  = "recover"
)

// SilenceRule is one silence alarm's configuration.
type SilenceRule struct {
	Threshold time.Duration // business time without success that counts as silence
	Reminder  time.Duration // wall time between reminders while silent
	Hours     Schedule
	// MinDailyVolume > 0 keeps the alarm quiet for sources that average
	// fewer events a day (over the last week): silence is normal for them.
	MinDailyVolume float64
}

// SilenceState is the current episode of one alarm.
type SilenceState struct {
	Silent       bool
	Since        time.Time // when the alarm fired
	LastNotified time.Time
	Reminders    int
}

// SilenceObservation is what the alarm watches.
type SilenceObservation struct {
	LastSuccess time.Time // zero: never
	DailyVolume float64
}

// EvaluateSilence decides one check of a silence alarm at now. It returns
// the new state and the notice to send ("" for none):
//
//   - enter: inside business hours, the business time since the last
//     success reached the threshold (and the volume qualifies);
//   - reminder: still silent, inside business hours, Reminder after the
//     last notice;
//   - recover: a success happened after the alarm fired (at any hour).
func EvaluateSilence(r SilenceRule, st SilenceState, obs SilenceObservation, now time.Time) (SilenceState, string) {
	if st.Silent {
		if obs.LastSuccess.After(st.Since) {
			return SilenceState{}, NoticeRecover
		}
		if r.Hours.Active(now) && now.Sub(st.LastNotified) >= r.Reminder {
			st.LastNotified = now
			st.Reminders++
			return st, NoticeReminder
		}
		return st, ""
	}
	if obs.LastSuccess.IsZero() || !r.Hours.Active(now) {
		return st, ""
	}
	if r.MinDailyVolume > 0 && obs.DailyVolume < r.MinDailyVolume {
		return st, ""
	}
	if r.Hours.Elapsed(obs.LastSuccess, now) < r.Threshold {
		return st, ""
	}
	return SilenceState{Silent: true, Since: now, LastNotified: now}, NoticeEnter
}

package alarm_test

import (
	"testing"
	"time"

	"github.com/leadgate/leadgate/guards/alarm"
)

// clock is the injected clock of a silence scenario.
type step struct {
	at          time.Time
	lastSuccess time.Time
	want        string // notice expected at this check
}

func TestSilenceScenario(t *testing.T) {
	berlin := mustLoad(t, "Europe/Berlin")
	at := func(d, h, m int) time.Time { return time.Date(2026, 1, d, h, m, 0, 0, berlin) } // Jan 16 2026 is a Friday
	rule := alarm.SilenceRule{Threshold: 90 * time.Minute, Reminder: 60 * time.Minute,
		Hours: schedule(t, alarm.BusinessHours{TimeZone: "Europe/Berlin", Weekdays: []string{"mon", "tue", "wed", "thu", "fri"}, From: "09:00", To: "17:00"})}
	last := at(16, 16, 0) // the last applied event: Friday 16:00
	steps := []step{
		{at(16, 17, 30), last, ""},              // Friday after hours: 1h of business silence, and outside hours anyway
		{at(17, 12, 0), last, ""},               // Saturday: no alarm outside business hours
		{at(18, 23, 0), last, ""},               // Sunday night
		{at(19, 9, 0), last, ""},                // Monday 09:00: only 1h of business time has passed
		{at(19, 9, 30), last, "enter"},          // 1h30m of business silence: one alarm
		{at(19, 9, 31), last, ""},               // no repeat
		{at(19, 10, 29), last, ""},              // cooldown not over
		{at(19, 10, 30), last, "reminder"},      // reminder after the cooldown
		{at(19, 17, 30), last, ""},              // Monday after hours: no reminder
		{at(20, 9, 0), last, "reminder"},        // Tuesday morning: the next reminder
		{at(20, 9, 5), at(20, 9, 4), "recover"}, // traffic resumed: a recovery notice
		{at(20, 9, 6), at(20, 9, 4), ""},        // and nothing more
	}
	var st alarm.SilenceState
	var notices []string
	for i, s := range steps {
		next, notice := alarm.EvaluateSilence(rule, st, alarm.SilenceObservation{LastSuccess: s.lastSuccess}, s.at)
		if notice != s.want {
			t.Fatalf("step %d at %s: notice %q, want %q (state %+v)", i, s.at.Format("Mon 15:04"), notice, s.want, st)
		}
		if notice != "" {
			notices = append(notices, notice)
		}
		st = next
	}
	if len(notices) != 4 || st.Silent {
		t.Fatalf("notices %v, final state %+v", notices, st)
	}
}

func TestSilenceAlwaysOnAndVolume(t *testing.T) {
	now := time.Date(2026, 1, 17, 3, 0, 0, 0, time.UTC) // a Saturday night: with no business hours it still counts
	rule := alarm.SilenceRule{Threshold: 90 * time.Minute, Reminder: time.Hour, Hours: alarm.Always()}
	obs := alarm.SilenceObservation{LastSuccess: now.Add(-91 * time.Minute), DailyVolume: 3}
	if _, n := alarm.EvaluateSilence(rule, alarm.SilenceState{}, obs, now); n != alarm.NoticeEnter {
		t.Fatalf("notice %q, want enter", n)
	}
	rule.MinDailyVolume = 10 // a source with 3 events a day is often quiet for hours
	if _, n := alarm.EvaluateSilence(rule, alarm.SilenceState{}, obs, now); n != "" {
		t.Fatalf("notice %q for a low-volume source, want none", n)
	}
	if _, n := alarm.EvaluateSilence(rule, alarm.SilenceState{}, alarm.SilenceObservation{}, now); n != "" {
		t.Fatalf("a source that never had traffic is not silent, got %q", n)
	}
}

// TestSilenceAcrossDSTNight: the threshold counts real minutes of business
// time even on the night the clocks change.
func TestSilenceAcrossDSTNight(t *testing.T) {
	ny := mustLoad(t, "America/New_York")
	rule := alarm.SilenceRule{Threshold: 90 * time.Minute, Reminder: time.Hour,
		Hours: schedule(t, alarm.BusinessHours{TimeZone: "America/New_York", From: "00:00", To: "06:00"})}
	last := time.Date(2026, 3, 8, 0, 45, 0, 0, ny)
	// 00:45 EST -> 03:14 EDT is 1h29m of real time (02:00-03:00 does not exist).
	if _, n := alarm.EvaluateSilence(rule, alarm.SilenceState{}, alarm.SilenceObservation{LastSuccess: last}, time.Date(2026, 3, 8, 3, 14, 0, 0, ny)); n != "" {
		t.Fatalf("fired after 1h29m: %q", n)
	}
	if _, n := alarm.EvaluateSilence(rule, alarm.SilenceState{}, alarm.SilenceObservation{LastSuccess: last}, time.Date(2026, 3, 8, 3, 15, 0, 0, ny)); n != alarm.NoticeEnter {
		t.Fatalf("did not fire after 1h30m of real time: %q", n)
	}
}

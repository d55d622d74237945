package alarm_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/leadgate/leadgate/guards/alarm"
	"github.com/leadgate/leadgate/models"
	"github.com/leadgate/leadgate/models/modelstest"
)

// officeHours stores the synthetic history of a form that sends 14 leads an
// hour, 09:00-18:00 on weekdays (UTC), and nothing at night or at weekends,
// for every hour in [from, until).
func (b *bundle) officeHours(t *testing.T, from, until time.Time) {
	t.Helper()
	b.exec(t, `INSERT INTO events (id, workspace_id, source_id, idempotency_key, occurred_at, received_at, status, processed_at)
		SELECT gen_random_uuid(), ?, ?, gen_random_uuid()::text, g, g, 'applied', g
		FROM generate_series(CAST(? AS timestamptz), CAST(? AS timestamptz) - interval '1 minute', interval '1 minute') AS g
		WHERE extract(isodow FROM g AT TIME ZONE 'UTC') BETWEEN 1 AND 5 AND extract(hour FROM g AT TIME ZONE 'UTC') BETWEEN 9 AND 17
		  AND extract(minute FROM g AT TIME ZONE 'UTC')::int % 4 = 0 AND extract(minute FROM g AT TIME ZONE 'UTC') < 56`,
		b.ws, b.source, from, until)
}

func (b *bundle) learnedAlarm(t *testing.T) models.SilenceAlarm {
	t.Helper()
	a := models.SilenceAlarm{WorkspaceID: b.ws, SourceID: &b.source, Metric: models.SilenceApply, ThresholdSeconds: 5400,
		ReminderSeconds: 3600, BusinessHours: []byte(`{}`), Enabled: true} // no rule named: the learned rule is the default
	if err := b.store.SilenceAlarmCreate(context.Background(), &a); err != nil {
		t.Fatal(err)
	}
	return a
}

func (b *bundle) silenceAt(t *testing.T, at time.Time) models.SilenceAlarm {
	t.Helper()
	b.now = at
	if err := b.mon.CheckSilence(context.Background()); err != nil {
		t.Fatalf("check at %s: %v", at, err)
	}
	list, err := b.store.SilenceAlarmList(context.Background(), b.ws)
	if err != nil || len(list) != 1 {
		t.Fatalf("alarms %v, %v", list, err)
	}
	return list[0]
}

func TestLearnedSilenceRule(t *testing.T) {
	store := modelstest.Store(t)
	historyStart := time.Date(2026, 10, 27, 0, 0, 0, 0, time.UTC) // a Tuesday, four weeks before the checks

	t.Run("fires on an unusually quiet weekday hour", func(t *testing.T) {
		b := setup(t, store)
		a := b.learnedAlarm(t)
		if a.Rule != models.SilenceRuleLearned {
			t.Fatalf("a new alarm's rule is %q, want the learned one by default", a.Rule)
		}
		// Tuesday 24 November: the morning as usual, the last lead at 14:00, then nothing.
		b.officeHours(t, historyStart, time.Date(2026, 11, 24, 14, 1, 0, 0, time.UTC))
		quiet := b.silenceAt(t, time.Date(2026, 11, 24, 14, 20, 0, 0, time.UTC))
		if quiet.Silent {
			t.Fatalf("20 quiet minutes fired already: %s", quiet.Message)
		}
		got := b.silenceAt(t, time.Date(2026, 11, 24, 14, 50, 0, 0, time.UTC))
		want := "Web form usually sends 14 leads between 14:00 and 15:00 on Tuesdays; none in the last 50 minutes"
		if !got.Silent || got.Message != want {
			t.Fatalf("silent %v, message %q; want it to fire with %q", got.Silent, got.Message, want)
		}
		if alerts := b.alerts(t); len(alerts) != 1 || alerts[0] != "trigger silence:apply" {
			t.Fatalf("alerts %v, want one silence trigger", alerts)
		}
		firing, err := store.AlarmsFiring(context.Background(), b.ws)
		if err != nil || len(firing) != 1 || firing[0].Message != want {
			t.Fatalf("firing alarms %+v (%v), want the learned silence with its message", firing, err)
		}
		b.event(t, models.EventApplied, time.Date(2026, 11, 24, 15, 5, 0, 0, time.UTC))
		if back := b.silenceAt(t, time.Date(2026, 11, 24, 15, 6, 0, 0, time.UTC)); back.Silent || back.Message != "" {
			t.Fatalf("after a lead arrived: silent %v %q", back.Silent, back.Message)
		}
	})

	t.Run("stays quiet overnight where the history is always quiet", func(t *testing.T) {
		b := setup(t, store)
		b.learnedAlarm(t)
		b.officeHours(t, historyStart, time.Date(2026, 11, 25, 0, 0, 0, 0, time.UTC)) // through Tuesday evening
		for _, at := range []time.Time{time.Date(2026, 11, 24, 22, 0, 0, 0, time.UTC), time.Date(2026, 11, 25, 3, 0, 0, 0, time.UTC),
			time.Date(2026, 11, 25, 8, 59, 0, 0, time.UTC)} {
			if got := b.silenceAt(t, at); got.Silent {
				t.Fatalf("fired at %s: %s", at, got.Message)
			}
		}
		// The static rule (90 min) would have fired overnight.
		st, notice := alarm.EvaluateSilence(alarm.SilenceRule{Threshold: 90 * time.Minute, Reminder: time.Hour, Hours: alarm.Always()},
			alarm.SilenceState{}, alarm.SilenceObservation{LastSuccess: time.Date(2026, 11, 24, 17, 52, 0, 0, time.UTC)},
			time.Date(2026, 11, 25, 3, 0, 0, 0, time.UTC))
		if !st.Silent || notice != alarm.NoticeEnter {
			t.Fatal("the comparison is void: the static rule would not have fired overnight either")
		}
		// And the next morning, an hour into the usual traffic with none, it fires.
		if got := b.silenceAt(t, time.Date(2026, 11, 25, 10, 0, 0, 0, time.UTC)); !got.Silent {
			t.Fatal("a silent Wednesday morning did not fire")
		}
	})

	t.Run("stays quiet at weekends", func(t *testing.T) {
		b := setup(t, store)
		b.learnedAlarm(t)
		b.officeHours(t, historyStart, time.Date(2026, 11, 28, 0, 0, 0, 0, time.UTC)) // through Friday
		for _, at := range []time.Time{time.Date(2026, 11, 28, 14, 0, 0, 0, time.UTC), time.Date(2026, 11, 29, 15, 0, 0, 0, time.UTC),
			time.Date(2026, 11, 30, 8, 30, 0, 0, time.UTC)} {
			if got := b.silenceAt(t, at); got.Silent {
				t.Fatalf("fired at %s: %s", at, got.Message)
			}
		}
	})

	t.Run("too little history says so and keeps the static rule", func(t *testing.T) {
		b := setup(t, store)
		a := b.learnedAlarm(t)
		b.officeHours(t, time.Date(2026, 11, 23, 0, 0, 0, 0, time.UTC), time.Date(2026, 11, 24, 14, 1, 0, 0, time.UTC)) // a day and a half
		desc, err := b.mon.DescribeSilence(context.Background(), a, time.Date(2026, 11, 24, 14, 50, 0, 0, time.UTC))
		if err != nil || !strings.HasPrefix(desc, "Learning this source's rhythm: 1 day of history") || !strings.Contains(desc, "alarms after 1h30m0s without a lead") {
			t.Fatalf("description %q (%v), want it to say the history is too short and the static rule applies", desc, err)
		}
		if got := b.silenceAt(t, time.Date(2026, 11, 24, 14, 50, 0, 0, time.UTC)); got.Silent {
			t.Fatal("50 minutes fired under the static 90-minute rule")
		}
		if got := b.silenceAt(t, time.Date(2026, 11, 24, 15, 31, 0, 0, time.UTC)); !got.Silent || !strings.Contains(got.Message, "No event applied since") {
			t.Fatalf("91 minutes: silent %v %q, want the static rule to fire", got.Silent, got.Message)
		}
	})
}

func TestLearnedProfileMath(t *testing.T) {
	counts := map[int]int64{alarm.Slot(time.Date(2026, 11, 24, 14, 0, 0, 0, time.UTC), time.UTC): 56}
	p := alarm.ProfileCounts("UTC", 28*24*time.Hour, counts)
	if !(p.Rate(alarm.Slot(time.Date(2026, 12, 1, 14, 30, 0, 0, time.UTC), time.UTC)) == 14) {
		t.Fatalf("rate %v, want 14 a Tuesday 14:00 hour", p.Rate(alarm.Slot(time.Date(2026, 12, 1, 14, 0, 0, 0, time.UTC), time.UTC)))
	}
	a, b := time.Date(2026, 12, 1, 13, 30, 0, 0, time.UTC), time.Date(2026, 12, 1, 14, 30, 0, 0, time.UTC)
	if got := p.Expected(a, b); got != 7 {
		t.Fatalf("expected %v in half an hour of a 14/h slot, want 7", got)
	}
	if c := p.QuietChance(a, b); c > 0.001 || c < 0.0009 {
		t.Fatalf("quiet chance %v, want e^-7", c)
	}
	if !p.Sufficient() || alarm.ProfileCounts("UTC", 13*24*time.Hour, counts).Sufficient() || alarm.ProfileCounts("UTC", 28*24*time.Hour, map[int]int64{3: 49}).Sufficient() {
		t.Fatal("sufficient history is at least 14 days and 50 leads")
	}
}

func FuzzLearnedExpected(f *testing.F) {
	f.Add(int64(0), int64(3600), uint8(3))
	f.Fuzz(func(t *testing.T, from, length int64, slot uint8) {
		p := alarm.ProfileCounts("Europe/Berlin", 21*24*time.Hour, map[int]int64{int(slot) % 168: 30})
		a := time.Unix(from%4e9, 0)
		e := p.Expected(a, a.Add(time.Duration(length%(30*86400))*time.Second))
		if e < 0 || e > 10*7*24 {
			t.Fatalf("expected %v out of range", e)
		}
	})
}

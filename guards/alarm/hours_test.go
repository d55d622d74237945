package alarm_test

import (
	"strings"
	"testing"
	"time"

	"github.com/leadgate/leadgate/guards/alarm"
)

func mustLoad(t *testing.T, name string) *time.Location {
	t.Helper()
	loc, err := time.LoadLocation(name)
	if err != nil {
		t.Fatal(err)
	}
	return loc
}

func schedule(t *testing.T, b alarm.BusinessHours) alarm.Schedule {
	t.Helper()
	s, err := b.Compile()
	if err != nil {
		t.Fatalf("compile %+v: %v", b, err)
	}
	return s
}

func TestBusinessHoursActiveFollowsTheTimeZone(t *testing.T) {
	berlin := schedule(t, alarm.BusinessHours{TimeZone: "Europe/Berlin", Weekdays: []string{"mon", "tue", "wed", "thu", "fri"}, From: "09:00", To: "17:00"})
	cases := []struct {
		utc  string
		want bool
	}{
		{"2026-01-12T07:59:00Z", false}, // Monday 08:59 CET
		{"2026-01-12T08:00:00Z", true},  // Monday 09:00 CET (UTC+1)
		{"2026-07-13T07:00:00Z", true},  // Monday 09:00 CEST (UTC+2): same wall clock, different UTC hour
		{"2026-07-13T06:59:00Z", false},
		{"2026-01-12T16:00:00Z", false}, // 17:00 is the end, exclusive
		{"2026-01-17T10:00:00Z", false}, // Saturday
	}
	for _, tc := range cases {
		at, _ := time.Parse(time.RFC3339, tc.utc)
		if got := berlin.Active(at); got != tc.want {
			t.Errorf("Active(%s) = %v, want %v", tc.utc, got, tc.want)
		}
	}
	// Monday morning in Tokyo is still Sunday in UTC.
	tokyo := schedule(t, alarm.BusinessHours{TimeZone: "Asia/Tokyo", Weekdays: []string{"mon"}, From: "06:00", To: "10:00"})
	if at := time.Date(2026, 1, 11, 22, 0, 0, 0, time.UTC); at.Weekday() != time.Sunday || !tokyo.Active(at) {
		t.Errorf("Sunday 22:00 UTC is Monday 07:00 in Tokyo: want active")
	}
	if at := time.Date(2026, 1, 12, 2, 0, 0, 0, time.UTC); tokyo.Active(at) {
		t.Errorf("Monday 02:00 UTC is Monday 11:00 in Tokyo: want inactive")
	}
}

func TestElapsedCountsOnlyBusinessTime(t *testing.T) {
	berlin := mustLoad(t, "Europe/Berlin")
	s := schedule(t, alarm.BusinessHours{TimeZone: "Europe/Berlin", Weekdays: []string{"mon", "tue", "wed", "thu", "fri"}, From: "09:00", To: "17:00"})
	fri16 := time.Date(2026, 1, 16, 16, 0, 0, 0, berlin)
	mon0930 := time.Date(2026, 1, 19, 9, 30, 0, 0, berlin)
	if got := s.Elapsed(fri16, mon0930); got != 90*time.Minute {
		t.Fatalf("Friday 16:00 to Monday 09:30 = %s of business time, want 1h30m", got)
	}
	if got := alarm.Always().Elapsed(fri16, mon0930); got != mon0930.Sub(fri16) {
		t.Fatalf("always: %s", got)
	}
}

func TestElapsedAcrossDST(t *testing.T) {
	ny := mustLoad(t, "America/New_York")
	night := schedule(t, alarm.BusinessHours{TimeZone: "America/New_York", From: "00:00", To: "06:00"})
	cases := []struct {
		name string
		a, b time.Time
		want time.Duration
	}{
		// 2026-03-08: clocks jump from 02:00 to 03:00, so 00:00-06:00 lasts five real hours.
		{"spring forward", time.Date(2026, 3, 7, 23, 0, 0, 0, ny), time.Date(2026, 3, 8, 7, 0, 0, 0, ny), 5 * time.Hour},
		// 2026-11-01: 01:00-02:00 happens twice, so the window lasts seven real hours.
		{"fall back", time.Date(2026, 10, 31, 23, 0, 0, 0, ny), time.Date(2026, 11, 1, 7, 0, 0, 0, ny), 7 * time.Hour},
		{"ordinary day", time.Date(2026, 3, 9, 23, 0, 0, 0, ny).AddDate(0, 0, -1), time.Date(2026, 3, 9, 7, 0, 0, 0, ny), 6 * time.Hour},
	}
	for _, tc := range cases {
		if got := night.Elapsed(tc.a, tc.b); got != tc.want {
			t.Errorf("%s: %s, want %s", tc.name, got, tc.want)
		}
	}
	// Berlin's 09:00-17:00 is 8 real hours on the DST days too (the jump is at night).
	berlin := mustLoad(t, "Europe/Berlin")
	day := schedule(t, alarm.BusinessHours{TimeZone: "Europe/Berlin", From: "09:00", To: "17:00"})
	if got := day.Elapsed(time.Date(2026, 3, 28, 18, 0, 0, 0, berlin), time.Date(2026, 3, 29, 18, 0, 0, 0, berlin)); got != 8*time.Hour {
		t.Errorf("Berlin spring-forward Sunday: %s, want 8h", got)
	}
}

func TestBusinessHoursValidation(t *testing.T) {
	cases := []struct {
		b    alarm.BusinessHours
		want string
	}{
		{alarm.BusinessHours{TimeZone: "Mars/Olympus"}, "time_zone"},
		{alarm.BusinessHours{TimeZone: "Local"}, "time_zone"},
		{alarm.BusinessHours{Weekdays: []string{"monday"}}, "weekdays"},
		{alarm.BusinessHours{From: "9am", To: "17:00"}, "from"},
		{alarm.BusinessHours{From: "09:00", To: "25:00"}, "to"},
		{alarm.BusinessHours{From: "24:00", To: "24:00"}, "from"},
		{alarm.BusinessHours{From: "18:00", To: "09:00"}, "to: must be after from"},
	}
	for _, tc := range cases {
		if _, err := tc.b.Compile(); err == nil || !strings.HasPrefix(err.Error(), tc.want) {
			t.Errorf("%+v: err %v, want it to start with %q", tc.b, err, tc.want)
		}
	}
	if _, err := (alarm.BusinessHours{From: "00:00", To: "24:00", Weekdays: []string{"Sat", "sun"}}).Compile(); err != nil {
		t.Errorf("whole weekend days: %v", err)
	}
}

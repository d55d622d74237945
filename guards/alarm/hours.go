// Package alarm decides when leadgate must tell someone that something is
// wrong: silence alarms (no applies or no CRM writes for too long, inside
// business hours), health alarms (a metric above its threshold) and the
// dead-man switch (the scheduler's own ticks were missed). Deciding is pure
// and clock-injected (EvaluateSilence, EvaluateHealth); Monitor reads
// Postgres, persists state and writes alerts to the outbox.
package alarm

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// BusinessHours is when silence matters, as stored and edited. The zero
// value means "always". Times are wall-clock times in TimeZone, so a window
// follows daylight saving time.
type BusinessHours struct {
	TimeZone string   `json:"time_zone,omitempty"` // IANA name, default UTC
	Weekdays []string `json:"weekdays,omitempty"`  // "mon" … "sun"; empty: every day
	From     string   `json:"from,omitempty"`      // "09:00"; empty with To empty: all day
	To       string   `json:"to,omitempty"`        // "18:00"; "24:00" is the end of the day
}

// Schedule is a validated BusinessHours.
type Schedule struct {
	always   bool
	loc      *time.Location
	days     [7]bool
	from, to int // minutes after local midnight, from < to
}

var weekdayNames = map[string]time.Weekday{
	"sun": time.Sunday, "mon": time.Monday, "tue": time.Tuesday, "wed": time.Wednesday,
	"thu": time.Thursday, "fri": time.Friday, "sat": time.Saturday,
}

// Always is the schedule that is always active.
func Always() Schedule { return Schedule{always: true, loc: time.UTC} }

// Compile validates b; the error names the field at fault.
func (b BusinessHours) Compile() (Schedule, error) {
	if b.TimeZone == "" && len(b.Weekdays) == 0 && b.From == "" && b.To == "" {
		return Always(), nil
	}
	s := Schedule{loc: time.UTC, from: 0, to: 24 * 60}
	if b.TimeZone != "" {
		loc, err := time.LoadLocation(b.TimeZone)
		if err != nil || strings.EqualFold(b.TimeZone, "local") {
			return s, fmt.Errorf("time_zone: %q is not an IANA time zone (like Europe/Berlin)", b.TimeZone)
		}
		s.loc = loc
	}
	if len(b.Weekdays) == 0 {
		s.days = [7]bool{true, true, true, true, true, true, true}
	}
	for _, d := range b.Weekdays {
		wd, ok := weekdayNames[strings.ToLower(strings.TrimSpace(d))]
		if !ok {
			return s, fmt.Errorf("weekdays: %q is not one of mon, tue, wed, thu, fri, sat, sun", d)
		}
		s.days[wd] = true
	}
	if b.From != "" || b.To != "" {
		var err error
		if s.from, err = clock(b.From, false); err != nil {
			return s, fmt.Errorf("from: %w", err)
		}
		if s.to, err = clock(b.To, true); err != nil {
			return s, fmt.Errorf("to: %w", err)
		}
		if s.from >= s.to {
			return s, fmt.Errorf("to: must be after from (%s); a window across midnight is two days' windows", b.From)
		}
	}
	return s, nil
}

// clock parses "HH:MM" into minutes after midnight; "24:00" only as an end.
func clock(v string, end bool) (int, error) {
	h, m, ok := strings.Cut(strings.TrimSpace(v), ":")
	hh, err1 := strconv.Atoi(h)
	mm, err2 := strconv.Atoi(m)
	if !ok || err1 != nil || err2 != nil || len(m) != 2 || hh < 0 || mm < 0 || mm > 59 || hh > 24 || (hh == 24 && (mm != 0 || !end)) {
		return 0, fmt.Errorf("%q is not a time of day like 09:00", v)
	}
	return hh*60 + mm, nil
}

// Active reports whether t falls inside the business hours.
func (s Schedule) Active(t time.Time) bool {
	if s.always {
		return true
	}
	lt := t.In(s.loc)
	if !s.days[lt.Weekday()] {
		return false
	}
	m := lt.Hour()*60 + lt.Minute()
	return m >= s.from && m < s.to
}

// maxSpan bounds how far back Elapsed walks day by day.
const maxSpan = 400 * 24 * time.Hour

// Elapsed is how much business time passed between a and b: the real
// duration of the overlap of [a, b) with every business window. A window's
// ends are wall-clock times of its day, so a day with a DST change has a
// shorter or longer window.
func (s Schedule) Elapsed(a, b time.Time) time.Duration {
	if !b.After(a) {
		return 0
	}
	if s.always {
		return b.Sub(a)
	}
	if b.Sub(a) > maxSpan {
		a = b.Add(-maxSpan)
	}
	var total time.Duration
	la := a.In(s.loc)
	day := time.Date(la.Year(), la.Month(), la.Day(), 0, 0, 0, 0, s.loc)
	for i := 0; i < 402; i++ {
		y, m, d := day.Date()
		if day.After(b) {
			break
		}
		if s.days[day.Weekday()] {
			start := time.Date(y, m, d, 0, s.from, 0, 0, s.loc)
			end := time.Date(y, m, d, 0, s.to, 0, 0, s.loc)
			total += overlap(start, end, a, b)
		}
		day = time.Date(y, m, d+1, 0, 0, 0, 0, s.loc)
	}
	return total
}

func overlap(s1, e1, s2, e2 time.Time) time.Duration {
	start, end := s1, e1
	if s2.After(start) {
		start = s2
	}
	if e2.Before(end) {
		end = e2
	}
	if !end.After(start) {
		return 0
	}
	return end.Sub(start)
}

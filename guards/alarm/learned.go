package alarm

import (
	"fmt"
	"math"
	"strings"
	"time"
)

// The learned silence rule. A source's history gives its usual arrivals in
// each of the 168 hours of the week (the mean over the weeks seen). Arrivals
// are modelled as a Poisson process with that hour-of-week rate, so after a
// silence from the last arrival until now the expected count is
// λ = Σ rate(hour) × (the part of that hour inside the silence), and the
// chance of seeing none by luck alone is e^−λ. The alarm fires when that
// chance falls below LearnedAlpha. Every gap between two leads is one more
// chance of a false alarm, so the threshold is set per gap: at 1 in 10,000
// (λ ≥ 9.2, about nine leads that should have come and did not) a source of
// 600 leads a week that behaves like its history sees a false alarm about
// once in four months. Hours the history shows quiet (nights, weekends) add
// nothing to λ, so silence there never fires.
const (
	// LearnedAlpha is the chance of a silence by luck below which it fires.
	LearnedAlpha = 1e-4
	// LearnedWindow is how much history the rule learns from.
	LearnedWindow = 28 * 24 * time.Hour
	// LearnedMinHistory and LearnedMinArrivals are the least history the
	// rule trusts; with less it says so and the static rule applies.
	LearnedMinHistory  = 14 * 24 * time.Hour
	LearnedMinArrivals = 50
)

// hoursPerWeek is the number of hour-of-week slots.
const hoursPerWeek = 7 * 24

// Profile is a source's learned weekly rhythm: arrivals counted per hour of
// the week (slot 0 is Monday 00:00-01:00 in Zone) over Span of history.
type Profile struct {
	Zone   string              `json:"zone"`
	Span   time.Duration       `json:"span"`
	Total  int                 `json:"total"`
	Counts [hoursPerWeek]int64 `json:"counts"`
}

// Slot is the hour of the week of t in loc (Monday 00:00 is 0).
func Slot(t time.Time, loc *time.Location) int {
	lt := t.In(loc)
	day := (int(lt.Weekday()) + 6) % 7 // Monday first
	return day*24 + lt.Hour()
}

// Weeks is how many weeks of history the profile covers.
func (p Profile) Weeks() float64 { return p.Span.Hours() / (24 * 7) }

// Sufficient reports whether the profile has enough history to be trusted.
func (p Profile) Sufficient() bool {
	return p.Span >= LearnedMinHistory && p.Total >= LearnedMinArrivals
}

// Rate is the usual arrivals per hour in a slot.
func (p Profile) Rate(slot int) float64 {
	w := p.Weeks()
	if w <= 0 || slot < 0 || slot >= hoursPerWeek {
		return 0
	}
	return float64(p.Counts[slot]) / max(w, 1)
}

func (p Profile) location() *time.Location {
	if p.Zone != "" {
		if loc, err := time.LoadLocation(p.Zone); err == nil {
			return loc
		}
	}
	return time.UTC
}

// Expected is the number of arrivals the profile expects in [a, b).
func (p Profile) Expected(a, b time.Time) float64 {
	if !b.After(a) {
		return 0
	}
	if b.Sub(a) > 7*24*time.Hour {
		a = b.Add(-7 * 24 * time.Hour) // a week of silence is already certain
	}
	loc := p.location()
	var total float64
	for t := a; t.Before(b); {
		lt := t.In(loc)
		next := time.Date(lt.Year(), lt.Month(), lt.Day(), lt.Hour(), 0, 0, 0, loc).Add(time.Hour)
		if next.After(b) {
			next = b
		}
		total += p.Rate(Slot(t, loc)) * next.Sub(t).Hours()
		t = next
	}
	return total
}

// QuietChance is the Poisson probability of no arrival in [a, b).
func (p Profile) QuietChance(a, b time.Time) float64 {
	return math.Exp(-p.Expected(a, b))
}

// LearnedVerdict is one check of the learned rule.
type LearnedVerdict struct {
	Silent  bool
	Chance  float64 // of this silence by luck
	Message string
}

// JudgeLearned checks a silence from lastArrival (zero: never) until now.
func JudgeLearned(p Profile, name string, lastArrival, now time.Time) LearnedVerdict {
	if lastArrival.IsZero() {
		return LearnedVerdict{Chance: 1}
	}
	chance := p.QuietChance(lastArrival, now)
	v := LearnedVerdict{Chance: chance, Silent: chance < LearnedAlpha}
	v.Message = LearnedMessage(p, name, lastArrival, now)
	return v
}

// LearnedMessage says what is usual for the hour and how long it has been
// quiet: "Typeform usually sends 14 leads between 14:00 and 15:00 on
// Tuesdays; none in the last 50 minutes".
func LearnedMessage(p Profile, name string, lastArrival, now time.Time) string {
	loc := p.location()
	lt := now.In(loc)
	rate := p.Rate(Slot(now, loc))
	usual := fmt.Sprintf("%.0f leads", rate)
	switch {
	case rate < 0.95:
		usual = fmt.Sprintf("%.1f leads", rate)
	case rate < 1.5:
		usual = "1 lead"
	}
	return fmt.Sprintf("%s usually sends %s between %02d:00 and %02d:00 on %ss; none in the last %s",
		name, usual, lt.Hour(), (lt.Hour()+1)%24, lt.Weekday(), quietFor(now.Sub(lastArrival)))
}

func quietFor(d time.Duration) string {
	switch {
	case d < 2*time.Hour:
		return fmt.Sprintf("%d minutes", int(d.Round(time.Minute)/time.Minute))
	case d < 48*time.Hour:
		return fmt.Sprintf("%d hours", int(d.Round(time.Hour)/time.Hour))
	}
	return fmt.Sprintf("%d days", int(d/(24*time.Hour)))
}

// LearnedDescription is the rule's text for the source page and the alarm
// list: the learned rhythm, or why the static rule still applies.
func LearnedDescription(p Profile, static SilenceRule) string {
	if !p.Sufficient() {
		return fmt.Sprintf("Learning this source's rhythm: %s of history and %d leads so far (it needs %d days and %d leads); until then it alarms after %s without a lead%s.",
			roundDays(p.Span), p.Total, int(LearnedMinHistory.Hours()/24), LearnedMinArrivals, static.Threshold, hoursNote(static))
	}
	loc := p.location()
	busiest, quiet := 0, 0
	for s := range hoursPerWeek {
		if p.Counts[s] > p.Counts[busiest] {
			busiest = s
		}
		if p.Counts[s] == 0 {
			quiet++
		}
	}
	day := []string{"Mondays", "Tuesdays", "Wednesdays", "Thursdays", "Fridays", "Saturdays", "Sundays"}[busiest/24]
	return fmt.Sprintf("Learned from %s of history (%d leads, %s): busiest %02d:00-%02d:00 on %s with %.0f leads; %d hours of the week are usually quiet. It alarms when a silence has less than a 1 in 10,000 chance of being luck.",
		roundDays(p.Span), p.Total, loc, busiest%24, busiest%24+1, day, p.Rate(busiest), quiet)
}

func roundDays(d time.Duration) string {
	days := int(d.Hours()/24 + 0.5)
	if days == 1 {
		return "1 day"
	}
	return fmt.Sprintf("%d days", days)
}

func hoursNote(r SilenceRule) string {
	if r.Hours.always {
		return ""
	}
	return " in business hours"
}

// ProfileCounts builds a profile from per-slot counts (as a query returns them).
func ProfileCounts(zone string, span time.Duration, counts map[int]int64) Profile {
	p := Profile{Zone: strings.TrimSpace(zone), Span: span}
	for s, n := range counts {
		if s >= 0 && s < hoursPerWeek {
			p.Counts[s] += n
			p.Total += int(n)
		}
	}
	return p
}

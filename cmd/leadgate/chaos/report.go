package chaos

import (
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"time"
)

// Report is the outcome of a run: the baseline and leadgate columns (either may be nil).
type Report struct {
	Config   Config
	Scenario ScenarioStats
	Baseline *Column
	Leadgate *Column
}

// ScenarioStats describes the traffic both modes were fed.
type ScenarioStats struct {
	Leads, UniqueEvents, Deliveries, InFlightDuplicates, SameSecondPairs, RepeatForms int
	Window                                                                            time.Duration
}

func describe(sc *Scenario) ScenarioStats {
	s := ScenarioStats{Leads: len(sc.Leads), UniqueEvents: len(sc.Events), Window: sc.Window}
	for _, e := range sc.Events {
		s.Deliveries++
		if e.Duplicate {
			s.Deliveries++
			s.InFlightDuplicates++
		}
	}
	for _, l := range sc.Leads {
		forms := 0
		var sendEmail, sendVoice time.Duration
		for _, i := range l.Events {
			e := sc.Events[i]
			switch e.Channel {
			case 0:
				forms++
			case 1:
				sendEmail = e.SendAt
			case 2:
				sendVoice = e.SendAt
			}
		}
		if forms > 1 {
			s.RepeatForms++
		}
		if sendEmail > 0 && sendVoice > 0 && (sendEmail-sendVoice).Abs() < 10*time.Millisecond {
			s.SameSecondPairs++
		}
	}
	return s
}

// Failed reports whether leadgate's column breaks any promise.
func (r *Report) Failed() bool { return r.Leadgate != nil && len(r.Leadgate.Violations()) > 0 }

// row is one line of the table: a label and a value per column.
type row struct {
	label string
	cell  func(c *Column) string
}

func rows() []row {
	n := func(f func(c *Column) int) func(*Column) string {
		return func(c *Column) string { return fmt.Sprint(f(c)) }
	}
	crm := func(f func(c *Column) string) func(*Column) string {
		return func(c *Column) string {
			if !c.CRMKnown {
				return "n/a (no CRM sync)"
			}
			return f(c)
		}
	}
	return []row{
		{"measured in", func(c *Column) string { return c.Target }},
		{"duplicate contacts", n(func(c *Column) int { return c.DuplicateContacts })},
		{"stage regressions (leads)", func(c *Column) string {
			if c.CRMKnown {
				return fmt.Sprintf("%d (%d backward writes)", c.Regressions, c.BackwardMoves)
			}
			return fmt.Sprint(c.Regressions)
		}},
		{"lost leads (acked, not there)", n(func(c *Column) int { return c.Lost })},
		{"acked leads at their highest stage", func(c *Column) string { return fmt.Sprintf("%d / %d", c.LeadsAtHighest, c.LeadsAcked) }},
		{"unique events acked 200 → final outcome", func(c *Column) string { return fmt.Sprintf("%d → %d", c.EventsAcked, c.EventsFinal) }},
		{"delivery attempts / answered 200", func(c *Column) string { return fmt.Sprintf("%d / %d", c.Attempts, c.Attempts200) }},
		{"unique events never acked (sender gave up)", n(func(c *Column) int { return c.EventsGivenUp })},
		{"CRM requests", crm(func(c *Column) string { return fmt.Sprint(c.CRMRequests) })},
		{"CRM API failures (non-2xx) / 429s / 5xx", crm(func(c *Column) string {
			return fmt.Sprintf("%d / %d / %d", c.CRMFailures, c.CRM429, c.CRM5xx)
		})},
		{"CRM write failure rate after retries", crm(func(c *Column) string {
			return fmt.Sprintf("%.2f%% (%d / %d)", 100*c.WriteFailureRate(), c.WriteFailures, c.WriteTotal)
		})},
		{"max CRM requests in any 1 s (limit)", crm(func(c *Column) string { return fmt.Sprintf("%d (%d)", c.MaxIn1s, c.RateLimit) })},
		{"ack p50 / p99 (all attempts answered 200)", func(c *Column) string { return fmtDur(c.AckP50) + " / " + fmtDur(c.AckP99) }},
		{"ack p50 / p99 outside receiver fault windows", func(c *Column) string { return fmtDur(c.CalmP50) + " / " + fmtDur(c.CalmP99) }},
		{"attempts in each receiver fault window: answered 200 / no answer, ack p99 / max", fmtFaultAcks},
		{"accepted/s", func(c *Column) string { return fmt.Sprintf("%.0f", c.AcceptedPerSec) }},
		{"wall time (traffic start → final state)", func(c *Column) string { return fmtDur(c.Wall) }},
		{"dead letters (kind, status) / outbox pending at the end", func(c *Column) string {
			if c.DeadLetters == nil {
				return "n/a"
			}
			return fmtKinds(c.DeadLetters) + " / " + fmt.Sprint(c.OutboxPending)
		}},
		{"faults injected", func(c *Column) string { return fmtFaults(c.Faults) }},
		{"schedulers: activations / time two were active / longest time none was", func(c *Column) string {
			if !c.SchedulerKnown {
				return "n/a (one process)"
			}
			return fmt.Sprintf("%d / %s / %s", c.SchedulerSpans, fmtDur(c.SchedulerOverlap), fmtDur(c.SchedulerLongestGap))
		}},
	}
}

func fmtFaultAcks(c *Column) string {
	if len(c.InFaults) == 0 {
		return "n/a"
	}
	parts := make([]string, len(c.InFaults))
	for i, f := range c.InFaults {
		parts[i] = fmt.Sprintf("%s: %d of %d / %d, %s / %s", f.Fault, f.Answered200, f.Attempts, f.Unanswered, fmtDur(f.P99), fmtDur(f.Max))
	}
	return strings.Join(parts, "; ")
}

func fmtDur(d time.Duration) string {
	switch {
	case d == 0:
		return "0"
	case d < time.Millisecond:
		return fmt.Sprintf("%.2fms", float64(d)/float64(time.Millisecond))
	case d < 10*time.Second:
		return fmt.Sprintf("%.1fms", float64(d)/float64(time.Millisecond))
	}
	return d.Round(time.Second).String()
}

func fmtKinds(m map[string]int) string {
	if m == nil {
		return "n/a"
	}
	if len(m) == 0 {
		return "0"
	}
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(m)) {
		parts = append(parts, fmt.Sprintf("%d %s", m[k], k))
	}
	return strings.Join(parts, ", ")
}

func fmtFaults(fs []FaultRecord) string {
	if len(fs) == 0 {
		return "none"
	}
	var parts []string
	for _, f := range fs {
		switch {
		case f.Skip != "":
			parts = append(parts, f.Fault+" (n/a)")
		case f.Err != "":
			parts = append(parts, f.Fault+" (FAILED)")
		default:
			parts = append(parts, fmt.Sprintf("%s @%s", f.Fault, f.At.Round(100*time.Millisecond)))
		}
	}
	return strings.Join(parts, ", ")
}

// Write renders the report as a markdown table ("markdown") or aligned text ("text").
func (r *Report) Write(w io.Writer, format string) error {
	cols := []*Column{}
	for _, c := range []*Column{r.Baseline, r.Leadgate} {
		if c != nil {
			cols = append(cols, c)
		}
	}
	s := r.Scenario
	header := fmt.Sprintf("multi-channel race: %d leads, %d unique events, %d deliveries (%d in-flight duplicates, %d same-second channel pairs, %d repeat forms), send window %s, seed %d, CRM limit %d req/s",
		s.Leads, s.UniqueEvents, s.Deliveries, s.InFlightDuplicates, s.SameSecondPairs, s.RepeatForms, s.Window.Round(100*time.Millisecond), r.Config.Seed, r.Config.CRMRPS)
	table := [][]string{{""}}
	for _, c := range cols {
		table[0] = append(table[0], c.Name)
	}
	for _, rw := range rows() {
		line := []string{rw.label}
		for _, c := range cols {
			line = append(line, rw.cell(c))
		}
		table = append(table, line)
	}
	var b strings.Builder
	if format == "markdown" {
		fmt.Fprintf(&b, "%s\n\n", header)
		for i, line := range table {
			fmt.Fprintf(&b, "| %s |\n", strings.Join(line, " | "))
			if i == 0 {
				fmt.Fprintf(&b, "|%s\n", strings.Repeat("---|", len(line)))
			}
		}
	} else {
		fmt.Fprintf(&b, "%s\n\n", header)
		widths := make([]int, len(table[0]))
		for _, line := range table {
			for i, cell := range line {
				widths[i] = max(widths[i], len([]rune(cell)))
			}
		}
		for _, line := range table {
			for i, cell := range line {
				fmt.Fprintf(&b, "%s%s  ", cell, strings.Repeat(" ", widths[i]-len([]rune(cell))))
			}
			b.WriteString("\n")
		}
	}
	for _, c := range cols {
		if c.Topology != "" {
			fmt.Fprintf(&b, "\n- %s: %s", c.Name, c.Topology)
		}
		for _, f := range c.Faults {
			if f.Err == "" && f.Skip == "" {
				fmt.Fprintf(&b, "\n- %s: fault %s at %s, recovered in %s", c.Name, f.Fault, f.At.Round(100*time.Millisecond), f.Took.Round(100*time.Millisecond))
			}
		}
		for _, n := range c.Notes {
			fmt.Fprintf(&b, "\n- %s: %s", c.Name, n)
		}
		for _, f := range c.Faults {
			if f.Err != "" {
				fmt.Fprintf(&b, "\n- %s: fault %s failed: %s", c.Name, f.Fault, f.Err)
			}
		}
	}
	if r.Leadgate != nil {
		if v := r.Leadgate.Violations(); len(v) > 0 {
			fmt.Fprintf(&b, "\n\nleadgate FAILED: %s\n", strings.Join(v, "; "))
		} else {
			fmt.Fprintf(&b, "\n\nleadgate held every promise: 0 duplicates, 0 regressions, 0 lost, every acknowledged event resolved, no rate-limit violation")
			if r.Leadgate.SchedulerKnown {
				b.WriteString(", never two schedulers active")
			}
			b.WriteString(".\n")
		}
	} else {
		b.WriteString("\n")
	}
	_, err := io.WriteString(w, b.String())
	return err
}

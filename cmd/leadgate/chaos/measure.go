package chaos

import (
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Column is one side of the report: what the CRM (or, without the CRM sync, leadgate's own contact
// store) holds after the run, measured against what the senders were told.
type Column struct {
	Name string
	// Target says what was measured: "CRM" (the fake ActiveCampaign) or "leadgate contacts".
	Target string

	Leads, UniqueEvents, Deliveries int
	Attempts, Attempts200           int // HTTP requests the senders made, and those answered 200

	DuplicateContacts int // contacts beyond the first for one real person
	Regressions       int // leads whose final stage is below the highest acknowledged, or that moved backwards
	BackwardMoves     int // stage writes lower than the contact's previous stage (CRM target only)
	Lost              int // leads with an acknowledged event and no contact
	LeadsAcked        int
	LeadsAtHighest    int // acknowledged leads whose contact holds their highest acknowledged stage
	Unmatched         int // contacts that belong to no lead of the scenario

	EventsAcked   int // unique events acknowledged with a 200
	EventsFinal   int // of those, how many reached a final outcome
	EventsGivenUp int // unique events the senders gave up on (no 200 after three attempts)

	CRMKnown      bool // the CRM's request log was measured
	CRMRequests   int
	CRMFailures   int // answers other than 2xx (any reason)
	CRM429        int
	CRM5xx        int
	MaxIn1s       int
	RateLimit     int
	WriteFailures int // changes that never reached the CRM after every retry
	WriteTotal    int // the changes WriteFailures is a share of
	DeadLetters   map[string]int
	OutboxPending int64 // leadgate's CRM and side-effect work still pending when the run ended

	AckP50, AckP99 time.Duration
	// CalmP50 and CalmP99 leave out attempts begun while the receiver itself was being faulted
	// (SIGKILL, Redis or Postgres restart, plus a second after each recovery).
	CalmP50, CalmP99 time.Duration
	// InFaults are the attempts begun in each receiver fault's window, fault by fault: what a sender saw
	// while leadgate's own process, Redis or Postgres was down and coming back.
	InFaults       []FaultAcks
	AcceptedPerSec float64
	SendWindow     time.Duration
	Wall           time.Duration
	Faults         []FaultRecord
	Notes          []string

	// Topology describes a replicated run's deployment ("" for one process).
	Topology string
	// SchedulerKnown: the scheduler processes' activity was measured (replicated runs): how many times one
	// became active, how long two or more were active at once (must be 0) and the longest stretch with
	// none active (a failover's takeover).
	SchedulerKnown      bool
	SchedulerSpans      int
	SchedulerOverlap    time.Duration
	SchedulerLongestGap time.Duration
}

// WriteFailureRate is WriteFailures / WriteTotal.
func (c *Column) WriteFailureRate() float64 {
	if c.WriteTotal == 0 {
		return 0
	}
	return float64(c.WriteFailures) / float64(c.WriteTotal)
}

// Violations lists the promises the column breaks (empty when it holds all of them): duplicates,
// regressions, lost leads, acknowledged events without a final outcome, CRM writes that failed for
// good, and rate-limit violations (any 429, or more requests in a second than the limit).
func (c *Column) Violations() []string {
	var v []string
	add := func(bad bool, format string, n int) {
		if bad {
			v = append(v, strings.ReplaceAll(format, "%d", strconv.Itoa(n)))
		}
	}
	add(c.DuplicateContacts > 0, "%d duplicate contacts", c.DuplicateContacts)
	add(c.Regressions > 0, "%d stage regressions", c.Regressions)
	add(c.Lost > 0, "%d lost leads", c.Lost)
	add(c.EventsFinal < c.EventsAcked, "%d acknowledged events without a final outcome", c.EventsAcked-c.EventsFinal)
	add(c.LeadsAtHighest < c.LeadsAcked, "%d acknowledged leads not at their highest stage", c.LeadsAcked-c.LeadsAtHighest)
	add(c.WriteFailures > 0, "%d CRM writes failed after retries", c.WriteFailures)
	add(c.CRMKnown && c.CRM429 > 0, "%d CRM 429 answers", c.CRM429)
	add(c.CRMKnown && c.MaxIn1s > c.RateLimit, "%d CRM requests in one second", c.MaxIn1s)
	if c.SchedulerKnown && c.SchedulerSpans == 0 {
		v = append(v, "no scheduler was ever active")
	}
	if c.SchedulerKnown && c.SchedulerOverlap > 0 {
		v = append(v, "two schedulers active at once for "+c.SchedulerOverlap.String())
	}
	return v
}

// observed is the raw material of a column.
type observed struct {
	sc       *Scenario
	traffic  *Traffic
	contacts []CRMContact
	writes   []StageWrite // nil when only leadgate's contacts were read
	summary  *CRMSummary  // nil when there was no CRM to measure
	// final reports whether an acknowledged event (by the event id of its 200) reached a final
	// outcome; nil means a 200 is itself final (the baseline writes before answering).
	final func(eventID string) bool
}

// stageRank is a stage's rank, -1 for none or unknown.
func stageRank(s string) int { return slices.Index(Stages, s) }

// measure fills the scenario and outcome rows of c from o.
func measure(c *Column, o observed) {
	sc := o.sc
	c.Leads, c.UniqueEvents, c.Deliveries = len(sc.Leads), len(sc.Events), len(o.traffic.Deliveries)

	// What the senders were told, per event and per lead.
	acked := make([]bool, len(sc.Events))
	eventIDs := make([]string, len(sc.Events))
	var lat, calm []time.Duration
	windows := receiverFaultWindows(c.Faults, o.traffic.Base)
	inFault := make([][]time.Duration, len(windows))
	c.InFaults = make([]FaultAcks, len(windows))
	for i, w := range windows {
		c.InFaults[i].Fault = w.fault
	}
	var lastAck time.Time
	for _, d := range o.traffic.Deliveries {
		c.Attempts += len(d.attempts)
		for _, a := range d.attempts {
			w := windowOf(windows, a.began)
			if w >= 0 {
				c.InFaults[w].Attempts++
				if a.status == 0 {
					c.InFaults[w].Unanswered++
				}
			}
			if a.status == http.StatusOK {
				c.Attempts200++
				lat = append(lat, a.latency)
				if w < 0 {
					calm = append(calm, a.latency)
				} else {
					c.InFaults[w].Answered200++
					inFault[w] = append(inFault[w], a.latency)
				}
				if a.eventID != "" {
					eventIDs[d.event] = a.eventID
				}
			}
		}
		if d.acked {
			acked[d.event] = true
			if d.ackedAt.After(lastAck) {
				lastAck = d.ackedAt
			}
		}
	}
	highest := make([]int, len(sc.Leads))
	for i := range highest {
		highest[i] = -1
	}
	for i, e := range sc.Events {
		switch {
		case !acked[i]:
			c.EventsGivenUp++
		default:
			c.EventsAcked++
			if o.final == nil || (eventIDs[i] != "" && o.final(eventIDs[i])) {
				c.EventsFinal++
			}
			highest[e.Lead] = max(highest[e.Lead], e.Stage())
		}
	}

	// What the target holds, per lead.
	byEmail := map[string]int{}
	for _, l := range sc.Leads {
		byEmail[l.Email] = l.Index
	}
	contactsOf := make([][]CRMContact, len(sc.Leads))
	leadOf := map[string]int{}
	for _, ct := range o.contacts {
		i, ok := byEmail[strings.ToLower(strings.TrimSpace(ct.Email))]
		if !ok {
			c.Unmatched++
			continue
		}
		contactsOf[i] = append(contactsOf[i], ct)
		leadOf[ct.ID] = i
	}
	backward := make([]bool, len(sc.Leads))
	last := map[string]int{}
	for _, w := range o.writes {
		r := stageRank(w.Stage)
		if prev, ok := last[w.ContactID]; ok && r < prev {
			c.BackwardMoves++
			if i, ok := leadOf[w.ContactID]; ok {
				backward[i] = true
			}
		}
		last[w.ContactID] = r
	}
	for i := range sc.Leads {
		cs := contactsOf[i]
		c.DuplicateContacts += max(0, len(cs)-1)
		final := -1
		for _, ct := range cs {
			final = max(final, stageRank(ct.Stage))
		}
		if highest[i] < 0 {
			continue // no event of this lead was acknowledged
		}
		c.LeadsAcked++
		switch {
		case len(cs) == 0:
			c.Lost++
		case final >= highest[i]:
			c.LeadsAtHighest++
		}
		if (len(cs) > 0 && final < highest[i]) || backward[i] {
			c.Regressions++
		}
	}

	if s := o.summary; s != nil {
		c.CRMKnown = true
		c.CRMRequests, c.MaxIn1s = s.Requests, s.MaxIn1s
		for code, n := range s.ByStatus {
			st, _ := strconv.Atoi(code)
			switch {
			case st >= 200 && st < 300:
			case st == http.StatusTooManyRequests:
				c.CRM429 += n
				c.CRMFailures += n
			case st >= 500:
				c.CRM5xx += n
				c.CRMFailures += n
			default:
				c.CRMFailures += n
			}
		}
	}

	slices.Sort(lat)
	slices.Sort(calm)
	c.AckP50, c.AckP99 = percentile(lat, 0.50), percentile(lat, 0.99)
	c.CalmP50, c.CalmP99 = percentile(calm, 0.50), percentile(calm, 0.99)
	for i, l := range inFault {
		slices.Sort(l)
		c.InFaults[i].P99 = percentile(l, 0.99)
		if len(l) > 0 {
			c.InFaults[i].Max = l[len(l)-1]
		}
	}
	if span := lastAck.Sub(o.traffic.Started); c.EventsAcked > 0 && span > 0 {
		c.AcceptedPerSec = float64(c.EventsAcked) / span.Seconds()
	}
	c.SendWindow = sc.Window
}

// FaultAcks are the attempts begun in one receiver fault's window (from the fault until a second after
// its recovery): how many, how many were answered 200, how many got no answer at all (a transport error
// or the sender's timeout), and the 200s' p99 and slowest ack.
type FaultAcks struct {
	Fault                             string
	Attempts, Answered200, Unanswered int
	P99, Max                          time.Duration
}

// faultWindow is when a fault on the receiver disturbed it.
type faultWindow struct {
	fault    string
	from, to time.Time
}

// receiverFaultWindows are the windows of the faults on the receiver (the CRM storm does not touch the
// receiver of leadgate, and is the baseline's everyday weather).
func receiverFaultWindows(faults []FaultRecord, base time.Time) []faultWindow {
	var ws []faultWindow
	for _, f := range faults {
		if f.Fault == FaultCRMStorm || f.Skip != "" {
			continue
		}
		from := base.Add(f.At)
		ws = append(ws, faultWindow{f.Fault, from, from.Add(f.Took + time.Second)})
	}
	return ws
}

// windowOf is the index of the first window t falls in, or -1.
func windowOf(ws []faultWindow, t time.Time) int {
	for i, w := range ws {
		if !t.Before(w.from) && t.Before(w.to) {
			return i
		}
	}
	return -1
}

// percentile of sorted durations (nearest rank); 0 for none.
func percentile(sorted []time.Duration, p float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	i := int(float64(len(sorted))*p+0.5) - 1
	return sorted[min(max(i, 0), len(sorted)-1)]
}

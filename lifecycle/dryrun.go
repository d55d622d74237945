package lifecycle

import (
	"cmp"
	"slices"
	"time"
)

// HistoricalEvent is a stored event replayed by DryRun.
type HistoricalEvent struct {
	// ContactKey groups the events of one contact (its id, or its normalized
	// identity); identity resolution is not replayed.
	ContactKey string
	EventID    string
	Proposal
	// Hold, when set, is a guard that stops any event changing this contact
	// (a tripped loop breaker): such an event is quarantined with the
	// hold's kind instead of applied, as the apply job does.
	Hold *Hold
}

// Hold is a guard holding a contact's changes, with the dead letter it writes.
type Hold struct {
	Rule   string // the guard, e.g. "loop_breaker"
	Kind   string // dead-letter kind, e.g. "loop_suspected"
	Reason string
}

// DryRunReport is what a rule set would do to a set of historical events.
type DryRunReport struct {
	RulesVersion int
	Contacts     []ContactReplay // sorted by Key
	Totals       DryRunTotals
}

// DryRunTotals counts replayed events by final outcome (see
// Decision.EventOutcome); Duplicates are repeated event ids, skipped.
type DryRunTotals struct {
	Contacts    int
	Events      int
	Duplicates  int
	Applied     int
	Unchanged   int
	Quarantined int
	Dropped     int
	Waiting     int
}

// ContactReplay is one contact's state after the replay.
type ContactReplay struct {
	Key            string
	Exists         bool // false when no event applied anything
	FinalStage     string
	StageEnteredAt time.Time
	Tags           []string
	Transitions    []Transition
	Quarantined    []EventVerdict
	Dropped        []EventVerdict
	// Waiting are events that never found the contact: in production they
	// end as missing_contact dead letters.
	Waiting []EventVerdict
}

// Transition is one stage change in a replay.
type Transition struct {
	EventID string
	From    string // "" for the first stage
	To      string
	At      time.Time
	Verdict StageVerdict
}

// EventVerdict is an event that was not applied, with why.
type EventVerdict struct {
	EventID    string
	EventType  string
	OccurredAt time.Time
	Kind       string // dead-letter kind; "" for dropped events
	Reason     string
	// Decision is the verdict itself, for readers that explain it in their
	// own words; not part of the API's answer.
	Decision Decision `json:"-"`
}

// DryRun replays events through rules without writing anything: events are
// grouped by ContactKey, ordered by OccurredAt (then EventID), and applied
// through Decide starting from a contact that does not exist yet. The replay
// model mirrors the apply job: a repeated EventID counts once; an event
// that waits for its contact is retried after each later event of that
// contact and reported as Waiting if the contact never appears; fields are
// merged last-value-wins (only their presence matters to Decide); only an
// event that applies something makes the contact exist. The caller compares
// the report with the stored contacts.
func DryRun(rules Rules, events []HistoricalEvent) DryRunReport {
	byContact := map[string][]HistoricalEvent{}
	for _, e := range events {
		byContact[e.ContactKey] = append(byContact[e.ContactKey], e)
	}
	report := DryRunReport{RulesVersion: rules.Version}
	for _, key := range sortedKeys(byContact) {
		rp := replayer{rules: rules, out: ContactReplay{Key: key}, contact: Contact{Fields: map[string]string{}}}
		rp.run(byContact[key], &report.Totals)
		report.Contacts = append(report.Contacts, rp.out)
	}
	report.Totals.Contacts = len(report.Contacts)
	return report
}

// replayer holds one contact's replay state.
type replayer struct {
	rules   Rules
	contact Contact
	out     ContactReplay
	waiting []HistoricalEvent
}

func (rp *replayer) run(events []HistoricalEvent, totals *DryRunTotals) {
	slices.SortStableFunc(events, func(a, b HistoricalEvent) int {
		return cmp.Or(a.OccurredAt.Compare(b.OccurredAt), cmp.Compare(a.EventID, b.EventID))
	})
	seen := map[string]bool{}
	for _, e := range events {
		if e.EventID != "" && seen[e.EventID] {
			totals.Duplicates++
			continue
		}
		seen[e.EventID] = true
		totals.Events++
		rp.apply(e, totals)
		rp.retryWaiting(totals)
	}
	for _, e := range rp.waiting {
		totals.Waiting++
		d := rp.rules.Decide(rp.contact, e.Proposal)
		rp.out.Waiting = append(rp.out.Waiting, verdict(e, d))
	}
	rp.out.Exists = rp.contact.Exists
	rp.out.FinalStage = rp.contact.Stage
	rp.out.StageEnteredAt = rp.contact.StageEnteredAt
}

// retryWaiting re-decides waiting events once the contact exists.
func (rp *replayer) retryWaiting(totals *DryRunTotals) {
	if !rp.contact.Exists || len(rp.waiting) == 0 {
		return
	}
	retry := rp.waiting
	rp.waiting = nil
	for _, e := range retry {
		rp.apply(e, totals)
	}
}

func (rp *replayer) apply(e HistoricalEvent, totals *DryRunTotals) {
	d := held(rp.rules.Decide(rp.contact, e.Proposal), e.Hold)
	switch d.Outcome {
	case Wait:
		rp.waiting = append(rp.waiting, e)
		return
	case Quarantined:
		totals.Quarantined++
		rp.out.Quarantined = append(rp.out.Quarantined, verdict(e, d))
		return
	case Dropped:
		totals.Dropped++
		rp.out.Dropped = append(rp.out.Dropped, verdict(e, d))
		return
	}
	changed := rp.applyFields(e.Proposal, d)
	if d.NewStage != "" {
		rp.out.Transitions = append(rp.out.Transitions, Transition{
			EventID: e.EventID, From: rp.contact.Stage, To: d.NewStage, At: d.EnteredAt, Verdict: d.Stage,
		})
		rp.contact.Stage, rp.contact.StageEnteredAt = d.NewStage, d.EnteredAt
	}
	switch d.EventOutcome(changed) {
	case Applied:
		totals.Applied++
	default:
		totals.Unchanged++
	}
}

// applyFields merges what an applied or unchanged decision lets through and
// reports whether the contact changed (creation, a field, verification, a tag).
func (rp *replayer) applyFields(p Proposal, d Decision) bool {
	changed := !rp.contact.Exists
	rp.contact.Exists = true
	if !d.ApplyFields {
		return changed
	}
	for _, k := range sortedKeys(p.Fields) {
		if v := p.Fields[k]; present(v) && rp.contact.Fields[k] != v {
			rp.contact.Fields[k] = v
			changed = true
		}
	}
	if p.PhoneVerified && !rp.contact.PhoneVerified {
		rp.contact.PhoneVerified = true
		changed = true
	}
	for _, t := range d.Tags {
		if !slices.Contains(rp.out.Tags, t) {
			rp.out.Tags = append(rp.out.Tags, t)
			changed = true
		}
	}
	return changed
}

// held turns a decision that would change the contact into the hold's dead
// letter; the rules' verdict and the move stay, so a reader can say what the
// guard stopped.
func held(d Decision, h *Hold) Decision {
	if h == nil || !(d.Outcome == Applied || (d.Outcome == Unchanged && d.ApplyFields)) {
		return d
	}
	j := d.Judged
	j.Rule, j.Policy = h.Rule, ""
	return Decision{Outcome: Quarantined, Stage: d.Stage, DeadLetterKind: h.Kind, Reason: h.Reason, Judged: j}
}

func verdict(e HistoricalEvent, d Decision) EventVerdict {
	return EventVerdict{EventID: e.EventID, EventType: e.EventType, OccurredAt: e.OccurredAt, Kind: d.DeadLetterKind, Reason: d.Reason, Decision: d}
}

// FinalStages maps each contact key of a report to its final stage, for a
// quick comparison with the stored contacts.
func (rep DryRunReport) FinalStages() map[string]string {
	out := make(map[string]string, len(rep.Contacts))
	for _, c := range rep.Contacts {
		out[c.Key] = c.FinalStage
	}
	return out
}

package lifecycle

import (
	"maps"
	"strings"
	"time"
)

// Observation is one proposed value for one contact field.
type Observation struct {
	Field  string
	Value  string
	Source string // source name or id, matched against Rules.SourcePrecedence
	// ObservedAt is when the source observed the value (the event's
	// occurred_at, or the time of a human correction).
	ObservedAt time.Time
	Basis      string // how the event matched the contact (email, phone, ...)
	Human      bool   // a correction made by an operator in the UI or API
	EventID    string
	// ExplicitDelete marks an empty Value as a deliberate deletion (from a
	// source configured to send them, or a human clearing the field).
	ExplicitDelete bool
}

// Resolved is a field's winning value and where it came from.
type Resolved struct {
	Value      string
	Source     string
	ObservedAt time.Time
	Human      bool
}

// ResolveFields computes each field's value from all of its observations,
// independent of their order:
//
//   - observations sharing an EventID and Field count once, as the one with
//     the earliest ObservedAt: a retried delivery gains no recency;
//   - an empty (or blank) value is ignored unless ExplicitDelete is set, so it
//     never erases a present value;
//   - a human correction beats everything, the latest human one winning;
//   - otherwise the source ranked highest in SourcePrecedence wins (listed
//     sources, case-insensitive, beat unlisted ones);
//   - otherwise, and between observations of the same rank, the most recent.
//
// A field whose winner is an explicit deletion, or that has no present value,
// is absent from the result.
func (r Rules) ResolveFields(obs []Observation) map[string]Resolved {
	return r.NewResolution(obs).Fields()
}

// beats reports whether a takes precedence over b for the same field.
func (r Rules) beats(a, b Observation) bool {
	if a.Human != b.Human {
		return a.Human
	}
	if !a.Human {
		if pa, pb := r.precedence(a.Source), r.precedence(b.Source); pa != pb {
			return pa < pb
		}
	}
	if !a.ObservedAt.Equal(b.ObservedAt) {
		return a.ObservedAt.After(b.ObservedAt)
	}
	return tieBreak(a, b)
}

// tieBreak orders otherwise equal observations by content so that the
// result never depends on input order.
func tieBreak(a, b Observation) bool {
	if a.EventID != b.EventID {
		return a.EventID > b.EventID
	}
	if a.Source != b.Source {
		return a.Source > b.Source
	}
	if a.Value != b.Value {
		return a.Value > b.Value
	}
	return a.ExplicitDelete && !b.ExplicitDelete
}

// precedence is a source's position in SourcePrecedence, or len for an
// unlisted source.
func (r Rules) precedence(source string) int {
	for i, s := range r.SourcePrecedence {
		if strings.EqualFold(s, source) {
			return i
		}
	}
	return len(r.SourcePrecedence)
}

// FirstTouch returns existing completed by incoming: a key is taken from
// incoming only when existing lacks it or holds a blank value, so first-touch
// attribution (source, UTM, first seen) is written once and never
// overwritten. Neither map is modified.
func FirstTouch(existing, incoming map[string]string) map[string]string {
	out := make(map[string]string, len(existing)+len(incoming))
	maps.Copy(out, existing)
	for k, v := range incoming {
		if present(v) && !present(out[k]) {
			out[k] = v
		}
	}
	return out
}

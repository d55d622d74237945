package lifecycle

import "maps"

// Resolution is ResolveFields kept up to date as observations arrive: a contact's fields are resolved
// over its whole history once, and each new event's observations then cost what they add, not what the
// contact has seen before. Fields always equals ResolveFields over every observation added.
type Resolution struct {
	rules Rules
	// byField holds each field's observations after deduplication, to find a field's winner again when
	// an earlier copy of an observation replaces the one that was winning.
	byField map[string][]Observation
	// copies locates the kept copy of each (EventID, Field).
	copies map[copyKey]int
	// winners is each field's winning observation among those that count (a present value or an
	// explicit deletion).
	winners map[string]Observation
}

type copyKey struct{ event, field string }

// NewResolution resolves obs under r's precedence.
func (r Rules) NewResolution(obs []Observation) *Resolution {
	s := &Resolution{rules: r, byField: map[string][]Observation{}, copies: map[copyKey]int{}, winners: map[string]Observation{}}
	for _, o := range obs {
		s.Add(o)
	}
	return s
}

// Add takes one more observation into account.
func (s *Resolution) Add(o Observation) {
	if o.EventID != "" {
		k := copyKey{o.EventID, o.Field}
		if i, seen := s.copies[k]; seen {
			kept := s.byField[o.Field][i]
			if !earlierCopy(o, kept) {
				return // a later copy of an observation already counted: it gains no recency
			}
			s.byField[o.Field][i] = o
			s.rewin(o.Field)
			return
		}
		s.copies[k] = len(s.byField[o.Field])
	}
	s.byField[o.Field] = append(s.byField[o.Field], o)
	if counts(o) {
		if cur, ok := s.winners[o.Field]; !ok || s.rules.beats(o, cur) {
			s.winners[o.Field] = o
		}
	}
}

// rewin finds a field's winner again over its kept observations.
func (s *Resolution) rewin(field string) {
	delete(s.winners, field)
	for _, o := range s.byField[field] {
		if !counts(o) {
			continue
		}
		if cur, ok := s.winners[field]; !ok || s.rules.beats(o, cur) {
			s.winners[field] = o
		}
	}
}

// With is Fields as it would be with obs added, leaving s unchanged. ok is false when obs repeat an
// observation s already holds (the same EventID and Field): the answer then needs a full resolution.
func (s *Resolution) With(obs []Observation) (fields map[string]Resolved, ok bool) {
	winners := maps.Clone(s.winners)
	added := map[copyKey]bool{}
	for _, o := range obs {
		if o.EventID != "" {
			k := copyKey{o.EventID, o.Field}
			if _, seen := s.copies[k]; seen || added[k] {
				return nil, false
			}
			added[k] = true
		}
		if counts(o) {
			if cur, ok := winners[o.Field]; !ok || s.rules.beats(o, cur) {
				winners[o.Field] = o
			}
		}
	}
	return resolved(winners), true
}

// Fields is each field's resolved value; a field whose winner is an explicit deletion, or that has no
// present value, is absent.
func (s *Resolution) Fields() map[string]Resolved { return resolved(s.winners) }

func resolved(winners map[string]Observation) map[string]Resolved {
	out := make(map[string]Resolved, len(winners))
	for field, o := range winners {
		if !present(o.Value) {
			continue // an explicit deletion won
		}
		out[field] = Resolved{Value: o.Value, Source: o.Source, ObservedAt: o.ObservedAt, Human: o.Human}
	}
	return out
}

// counts reports whether an observation takes part in resolution: an empty value never erases a present
// one unless it is a deliberate deletion.
func counts(o Observation) bool { return present(o.Value) || o.ExplicitDelete }

// earlierCopy reports whether o replaces kept as the one copy of an observation that counts: the
// earliest, ties broken by content so that input order never matters.
func earlierCopy(o, kept Observation) bool {
	return o.ObservedAt.Before(kept.ObservedAt) || (o.ObservedAt.Equal(kept.ObservedAt) && tieBreak(kept, o))
}

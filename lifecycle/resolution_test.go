package lifecycle

import (
	"math/rand/v2"
	"reflect"
	"testing"
)

// randomObservations draws observations over a few fields, sources, events and times, with empty values,
// explicit deletions, human corrections and repeated (EventID, Field) copies, so that every rule of
// ResolveFields is exercised.
func randomObservations(rng *rand.Rand, n int) []Observation {
	fields := []string{"company", "budget", "first_name"}
	sources := []string{"HubSpot", "hubspot", "clearbit", "web_form", "vapi"}
	values := []string{"", " ", "Acme", "Acme Corp", "10k", "Jane"}
	obs := make([]Observation, n)
	for i := range obs {
		o := Observation{Field: fields[rng.IntN(len(fields))], Value: values[rng.IntN(len(values))],
			Source: sources[rng.IntN(len(sources))], ObservedAt: at(rng.IntN(6))}
		if rng.IntN(8) > 0 {
			o.EventID = string(rune('a' + rng.IntN(6)))
		}
		o.Human = rng.IntN(10) == 0
		o.ExplicitDelete = o.Value == "" && rng.IntN(3) == 0
		obs[i] = o
	}
	return obs
}

// Resolving incrementally (a contact's history once, then each event's observations as they come) gives
// exactly what resolving the whole history at once gives, whatever the order and the repeats.
func TestResolutionAddEqualsResolvingEverythingAtOnce(t *testing.T) {
	t.Parallel()
	rules := testRules(func(r *Rules) { r.SourcePrecedence = []string{"HubSpot", "clearbit"} })
	rng := rand.New(rand.NewPCG(7, 11))
	for round := range 3000 {
		obs := randomObservations(rng, 1+rng.IntN(24))
		cut := rng.IntN(len(obs) + 1)
		s := rules.NewResolution(obs[:cut])
		want := resolveAllAtOnce(rules, obs)
		if got := rules.ResolveFields(obs); !reflect.DeepEqual(got, want) {
			t.Fatalf("round %d: ResolveFields = %+v, want %+v (observations %+v)", round, got, want, obs)
		}
		if with, ok := s.With(obs[cut:]); ok && !reflect.DeepEqual(with, want) {
			t.Fatalf("round %d: With = %+v, want %+v (observations %+v, cut at %d)", round, with, want, obs, cut)
		}
		for _, o := range obs[cut:] {
			s.Add(o)
		}
		if got := s.Fields(); !reflect.DeepEqual(got, want) {
			t.Fatalf("round %d: after Add, Fields = %+v, want %+v (observations %+v, cut at %d)", round, got, want, obs, cut)
		}
	}
}

// With leaves the resolution as it was, and declines (ok false) when the new observations repeat one it
// already holds, since a repeat can only be settled against the whole history.
func TestResolutionWithChangesNothingAndDeclinesRepeats(t *testing.T) {
	t.Parallel()
	rules := testRules(nil)
	s := rules.NewResolution([]Observation{{Field: "company", Value: "Acme", Source: "web_form", ObservedAt: at(0), EventID: "e1"}})
	got, ok := s.With([]Observation{{Field: "company", Value: "Acme Corp", Source: "web_form", ObservedAt: at(5), EventID: "e2"}})
	if !ok || got["company"].Value != "Acme Corp" {
		t.Fatalf("With a newer value = %+v, %v; want Acme Corp, true", got, ok)
	}
	if s.Fields()["company"].Value != "Acme" {
		t.Fatalf("With changed the resolution: %+v", s.Fields())
	}
	if _, ok := s.With([]Observation{{Field: "company", Value: "Acme Inc", Source: "web_form", ObservedAt: at(-5), EventID: "e1"}}); ok {
		t.Fatal("With accepted an earlier copy of an observation it holds")
	}
}

// resolveAllAtOnce is ResolveFields written the plain way, as the rules read: keep the earliest copy of
// each (EventID, Field), drop empty values that are not deletions, and take each field's best.
func resolveAllAtOnce(r Rules, obs []Observation) map[string]Resolved {
	type key struct{ event, field string }
	first := map[key]int{}
	var kept []Observation
	for _, o := range obs {
		if o.EventID == "" {
			kept = append(kept, o)
			continue
		}
		k := key{o.EventID, o.Field}
		if i, seen := first[k]; !seen {
			first[k] = len(kept)
			kept = append(kept, o)
		} else if o.ObservedAt.Before(kept[i].ObservedAt) || (o.ObservedAt.Equal(kept[i].ObservedAt) && tieBreak(kept[i], o)) {
			kept[i] = o
		}
	}
	winners := map[string]Observation{}
	for _, o := range kept {
		if !present(o.Value) && !o.ExplicitDelete {
			continue
		}
		if cur, ok := winners[o.Field]; !ok || r.beats(o, cur) {
			winners[o.Field] = o
		}
	}
	out := map[string]Resolved{}
	for f, o := range winners {
		if present(o.Value) {
			out[f] = Resolved{Value: o.Value, Source: o.Source, ObservedAt: o.ObservedAt, Human: o.Human}
		}
	}
	return out
}

package lifecycle

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
)

// Field condition operators.
const (
	OpEq      = "eq"      // value equals Value (case-insensitive, trimmed)
	OpIn      = "in"      // value equals one of Values (case-insensitive, trimmed)
	OpGte     = "gte"     // value is a number >= Value
	OpLte     = "lte"     // value is a number <= Value
	OpPresent = "present" // value is not blank
)

// ScoreRules configures the lead score: behaviour points per event type and
// fit points per field condition.
type ScoreRules struct {
	EventPoints map[string]int   `json:"event_points"`
	FieldPoints []FieldCondition `json:"field_points"`
}

// FieldCondition awards Points when a contact field meets Op.
type FieldCondition struct {
	Field  string   `json:"field"`
	Op     string   `json:"op"`
	Value  string   `json:"value,omitempty"`
	Values []string `json:"values,omitempty"`
	Points int      `json:"points"`
}

// ScoreLine is one contribution to a score, for the contact's breakdown.
type ScoreLine struct {
	Kind   string `json:"kind"` // "event" or "field"
	Key    string `json:"key"`  // the event type, or the condition ("employees gte 50")
	Points int    `json:"points"`
}

// Compute derives the score from the contact's distinct applied event types
// and its current field values. It is recomputed from that set, never
// incremented: each event type scores once however often it appears (so a
// repeated delivery or a second identical event adds nothing), and each field
// condition scores once while it holds. Event types match EventPoints
// case-insensitively and lines name the configured event type. Lines come
// sorted: events by type, then field conditions in rule order; zero-point
// matches are left out.
func (s ScoreRules) Compute(distinctEventTypes []string, fields map[string]string) (int, []ScoreLine) {
	var lines []ScoreLine
	total := 0
	scored := map[string]bool{}
	for _, t := range distinctEventTypes {
		key, pts, ok := lookupPoints(s.EventPoints, t)
		if !ok || pts == 0 || scored[key] {
			continue
		}
		scored[key] = true
		lines = append(lines, ScoreLine{Kind: "event", Key: key, Points: pts})
		total += pts
	}
	slices.SortFunc(lines, func(a, b ScoreLine) int { return strings.Compare(a.Key, b.Key) })
	for _, c := range s.FieldPoints {
		if c.Points == 0 || !c.holds(fields[c.Field]) {
			continue
		}
		lines = append(lines, ScoreLine{Kind: "field", Key: c.String(), Points: c.Points})
		total += c.Points
	}
	return total, lines
}

// lookupPoints finds eventType's configured key and points, exactly or else
// case-insensitively (the smallest matching key wins).
func lookupPoints(m map[string]int, eventType string) (string, int, bool) {
	if p, ok := m[eventType]; ok {
		return eventType, p, true
	}
	best, pts, found := "", 0, false
	for k, p := range m {
		if strings.EqualFold(k, eventType) && (!found || k < best) {
			best, pts, found = k, p, true
		}
	}
	return best, pts, found
}

// holds reports whether value satisfies the condition; a blank value
// satisfies nothing, and a non-numeric one no numeric comparison.
func (c FieldCondition) holds(value string) bool {
	v := strings.TrimSpace(value)
	if v == "" {
		return false
	}
	switch c.Op {
	case OpPresent:
		return true
	case OpEq:
		return strings.EqualFold(v, strings.TrimSpace(c.Value))
	case OpIn:
		return slices.ContainsFunc(c.Values, func(o string) bool { return strings.EqualFold(v, strings.TrimSpace(o)) })
	case OpGte, OpLte:
		got, err1 := parseNumber(v)
		want, err2 := parseNumber(c.Value)
		if err1 != nil || err2 != nil {
			return false
		}
		if c.Op == OpGte {
			return got >= want
		}
		return got <= want
	}
	return false
}

// String renders the condition for a score breakdown.
func (c FieldCondition) String() string {
	switch c.Op {
	case OpPresent:
		return c.Field + " present"
	case OpIn:
		return fmt.Sprintf("%s in [%s]", c.Field, strings.Join(c.Values, ", "))
	}
	return fmt.Sprintf("%s %s %s", c.Field, c.Op, c.Value)
}

// parseNumber accepts finite decimal numbers, with optional thousands
// separators ("1,000").
func parseNumber(s string) (float64, error) {
	f, err := strconv.ParseFloat(strings.ReplaceAll(strings.TrimSpace(s), ",", ""), 64)
	if err != nil {
		return 0, fmt.Errorf("parse number %q: %w", s, err)
	}
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return 0, fmt.Errorf("parse number %q: not finite", s)
	}
	return f, nil
}

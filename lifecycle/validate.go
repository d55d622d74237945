package lifecycle

import (
	"fmt"
	"slices"
	"strings"
)

// ValidationError is a problem with a rule set. Field is the JSON path of the
// offending field ("stages[2]", "aliases.SQL_VOICE", "score.field_points[0].op")
// or empty when the input as a whole is wrong; it maps onto the admin API's
// {"error","field"} body.
type ValidationError struct {
	Field   string
	Message string
}

func (e *ValidationError) Error() string {
	if e.Field == "" {
		return "stage rules: " + e.Message
	}
	return "stage rules: " + e.Field + ": " + e.Message
}

func invalid(field, format string, args ...any) *ValidationError {
	return &ValidationError{Field: field, Message: fmt.Sprintf(format, args...)}
}

// Validate reports the first problem found, checking fields in declaration
// order and map keys in sorted order so the same rules always give the same
// error. Empty policy strings are valid and mean the default.
func (r Rules) Validate() error {
	checks := []func() error{
		r.validateVersion,
		r.validateStages,
		r.validateAliases,
		r.validateEventStages,
		r.validateBackward,
		r.validateRequiredFields,
		r.validatePolicies,
		r.validatePhoneStages,
		r.validateNames,
		r.Score.validate,
		r.validateSideEffects,
	}
	for _, check := range checks {
		if err := check(); err != nil {
			return err
		}
	}
	return nil
}

func (r Rules) validateVersion() error {
	if r.Version < 0 {
		return invalid("version", "must not be negative")
	}
	return nil
}

func (r Rules) validateStages() error {
	if len(r.Stages) == 0 {
		return invalid("stages", "at least one stage is required")
	}
	seen := map[string]string{}
	check := func(list string, i int, name string) error {
		field := fmt.Sprintf("%s[%d]", list, i)
		if err := checkName(field, name); err != nil {
			return err
		}
		key := strings.ToLower(name)
		if prev, dup := seen[key]; dup {
			return invalid(field, "%q duplicates %s", name, prev)
		}
		seen[key] = field
		return nil
	}
	for i, s := range r.Stages {
		if err := check("stages", i, s); err != nil {
			return err
		}
	}
	for i, s := range r.Terminal {
		if err := check("terminal", i, s); err != nil {
			return err
		}
	}
	return nil
}

// checkName rejects names that could not round-trip through a form or a CRM
// field: empty, padded, or carrying control characters.
func checkName(field, name string) error {
	if name == "" {
		return invalid(field, "must not be empty")
	}
	if strings.TrimSpace(name) != name {
		return invalid(field, "%q has leading or trailing spaces", name)
	}
	if strings.ContainsFunc(name, func(c rune) bool { return c < 0x20 || c == 0x7f }) {
		return invalid(field, "%q contains control characters", name)
	}
	return nil
}

func (r Rules) validateAliases() error {
	seen := map[string]string{}
	for _, k := range sortedKeys(r.Aliases) {
		field := "aliases." + k
		if err := checkName(field, k); err != nil {
			return err
		}
		if prev, dup := seen[strings.ToLower(k)]; dup {
			return invalid(field, "duplicates alias %q (aliases are case-insensitive)", prev)
		}
		seen[strings.ToLower(k)] = k
		target, ok := r.stageNamed(r.Aliases[k])
		if !ok {
			return invalid(field, "maps to unknown stage %q", r.Aliases[k])
		}
		if s, isStage := r.stageNamed(k); isStage && s != target {
			return invalid(field, "is the name of stage %q but maps to %q", s, target)
		}
	}
	return nil
}

func (r Rules) validateEventStages() error {
	for _, k := range sortedKeys(r.EventStages) {
		field := "event_stages." + k
		if k == "" {
			return invalid(field, "event type must not be empty")
		}
		if _, ok := r.Canonical(r.EventStages[k]); !ok {
			return invalid(field, "unknown stage %q", r.EventStages[k])
		}
	}
	return nil
}

func (r Rules) validateBackward() error {
	for i, m := range r.AllowedBackward {
		field := fmt.Sprintf("allowed_backward[%d]", i)
		from, ok := r.Canonical(m.From)
		if !ok {
			return invalid(field+".from", "unknown stage %q", m.From)
		}
		to, ok := r.Canonical(m.To)
		if !ok {
			return invalid(field+".to", "unknown stage %q", m.To)
		}
		if from == to {
			return invalid(field, "%s -> %s is not a move", from, to)
		}
		if !r.IsTerminal(from) && (r.IsTerminal(to) || r.Rank(to) > r.Rank(from)) {
			return invalid(field, "%s -> %s is not a backward move; forward moves and entering a terminal stage need no allowance", from, to)
		}
	}
	return nil
}

func (r Rules) validateRequiredFields() error {
	for _, k := range sortedKeys(r.RequiredFields) {
		field := "required_fields." + k
		if _, ok := r.Canonical(k); !ok {
			return invalid(field, "unknown stage %q", k)
		}
		for i, f := range r.RequiredFields[k] {
			if f == "" {
				return invalid(fmt.Sprintf("%s[%d]", field, i), "field name must not be empty")
			}
		}
	}
	return nil
}

func (r Rules) validatePolicies() error {
	if !slices.Contains([]string{"", PolicyTag, PolicyDeadLetter}, r.OnMissingField) {
		return invalid("on_missing_field", "%q is not one of tag, dead_letter", r.OnMissingField)
	}
	if r.MissingFieldTag != "" {
		if err := checkName("missing_field_tag", r.MissingFieldTag); err != nil {
			return err
		}
	}
	if !slices.Contains([]string{"", PolicyDeadLetter, PolicyDrop, PolicyApplyFieldsKeepStage}, r.OnStateConflict) {
		return invalid("on_state_conflict", "%q is not one of dead_letter, drop, apply_fields_keep_stage", r.OnStateConflict)
	}
	if !slices.Contains([]string{"", PolicyApplyFieldsKeepStage, PolicyDeadLetter}, r.OnLateEvent) {
		return invalid("on_late_event", "%q is not one of apply_fields_keep_stage, dead_letter", r.OnLateEvent)
	}
	return nil
}

func (r Rules) validatePhoneStages() error {
	for i, s := range r.RequirePhoneVerification {
		if _, ok := r.Canonical(s); !ok {
			return invalid(fmt.Sprintf("require_phone_verification[%d]", i), "unknown stage %q", s)
		}
	}
	return nil
}

// validateNames checks the plain name lists: event types and sources.
func (r Rules) validateNames() error {
	lists := []struct {
		field string
		names []string
	}{
		{"requires_existing_contact", r.RequiresContact},
		{"source_precedence", r.SourcePrecedence},
	}
	for _, l := range lists {
		seen := map[string]bool{}
		for i, n := range l.names {
			field := fmt.Sprintf("%s[%d]", l.field, i)
			if n == "" {
				return invalid(field, "must not be empty")
			}
			if seen[strings.ToLower(n)] {
				return invalid(field, "%q is listed twice", n)
			}
			seen[strings.ToLower(n)] = true
		}
	}
	return nil
}

func (r Rules) validateSideEffects() error {
	for i, se := range r.SideEffects {
		field := fmt.Sprintf("side_effects[%d]", i)
		if _, err := r.sideEffectCause(se.On); err != nil {
			return invalid(field+".on", "%v", err)
		}
		if se.Action == "" {
			return invalid(field+".action", "must not be empty")
		}
	}
	return nil
}

func (s ScoreRules) validate() error {
	for _, k := range sortedKeys(s.EventPoints) {
		if k == "" {
			return invalid("score.event_points.", "event type must not be empty")
		}
	}
	for i, c := range s.FieldPoints {
		field := fmt.Sprintf("score.field_points[%d]", i)
		if c.Field == "" {
			return invalid(field+".field", "must not be empty")
		}
		switch c.Op {
		case OpPresent:
		case OpEq:
			if !present(c.Value) {
				return invalid(field+".value", "op eq needs a value")
			}
		case OpIn:
			if len(c.Values) == 0 {
				return invalid(field+".values", "op in needs at least one value")
			}
		case OpGte, OpLte:
			if _, err := parseNumber(c.Value); err != nil {
				return invalid(field+".value", "op %s needs a number, got %q", c.Op, c.Value)
			}
		default:
			return invalid(field+".op", "%q is not one of eq, in, gte, lte, present", c.Op)
		}
	}
	return nil
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

package lifecycle

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
)

// rulesWire is the JSON shape of Rules with pointers where "absent" must be
// told apart from the zero value.
type rulesWire struct {
	Version                  int                 `json:"version"`
	Stages                   []string            `json:"stages"`
	Terminal                 []string            `json:"terminal"`
	Aliases                  map[string]string   `json:"aliases"`
	EventStages              map[string]string   `json:"event_stages"`
	AllowRegression          *bool               `json:"allow_regression"`
	AllowedBackward          []Move              `json:"allowed_backward"`
	AllowSkip                *bool               `json:"allow_skip"`
	RequiredFields           map[string][]string `json:"required_fields"`
	OnMissingField           string              `json:"on_missing_field"`
	MissingFieldTag          string              `json:"missing_field_tag"`
	RequirePhoneVerification []string            `json:"require_phone_verification"`
	OnStateConflict          string              `json:"on_state_conflict"`
	OnLateEvent              string              `json:"on_late_event"`
	RequiresContact          []string            `json:"requires_existing_contact"`
	SourcePrecedence         []string            `json:"source_precedence"`
	Score                    ScoreRules          `json:"score"`
	SideEffects              []SideEffectRule    `json:"side_effects"`
}

// ParseRules decodes a rule set strictly (unknown fields and trailing data
// are rejected), fills every absent field with its DefaultRules value, and
// validates the result. An explicit empty "terminal": [] means "no terminal
// stage"; an absent one means the default ["Lost"]. Every error is a
// *ValidationError whose Field names the offending JSON field when known.
func ParseRules(data []byte) (Rules, error) {
	w, err := decodeWire(data)
	if err != nil {
		return Rules{}, err
	}
	r := w.withDefaults()
	if err := r.Validate(); err != nil {
		return Rules{}, err
	}
	return r, nil
}

// ParseOverride decodes a payload's state_machine_rules for Stricter. Absent
// fields take the most permissive value so that they tighten nothing:
// allow_regression and allow_skip default to true, policies to "" (no
// change), lists and maps to nil (no change). The result is meaningful only as
// an argument to Stricter; it is not validated as a rule set.
func ParseOverride(data []byte) (Rules, error) {
	w, err := decodeWire(data)
	if err != nil {
		return Rules{}, err
	}
	o := Rules{
		AllowRegression:          true,
		AllowSkip:                true,
		AllowedBackward:          w.AllowedBackward,
		RequiredFields:           w.RequiredFields,
		OnMissingField:           w.OnMissingField,
		RequirePhoneVerification: w.RequirePhoneVerification,
		OnStateConflict:          w.OnStateConflict,
		OnLateEvent:              w.OnLateEvent,
		RequiresContact:          w.RequiresContact,
	}
	if w.AllowRegression != nil {
		o.AllowRegression = *w.AllowRegression
	}
	if w.AllowSkip != nil {
		o.AllowSkip = *w.AllowSkip
	}
	return o, nil
}

// UnmarshalJSON decodes rules strictly and applies the DefaultRules values to
// absent fields, exactly like ParseRules but without validation. JSON null
// leaves r unchanged.
func (r *Rules) UnmarshalJSON(data []byte) error {
	if bytes.Equal(bytes.TrimSpace(data), []byte("null")) {
		return nil
	}
	w, err := decodeWire(data)
	if err != nil {
		return err
	}
	*r = w.withDefaults()
	return nil
}

// MarshalJSON encodes rules with empty lists and maps instead of null and
// with empty policies spelled as their defaults, so that decoding the output
// yields rules that behave the same (a nil Terminal means "no terminal
// stage", which must not come back as the default ["Lost"]).
func (r Rules) MarshalJSON() ([]byte, error) {
	type plain Rules // drops the methods, avoiding recursion
	p := plain(r)
	// Spell out the effective policies: an empty policy means its default.
	p.OnMissingField = r.onMissingField()
	p.MissingFieldTag = r.missingFieldTag()
	p.OnStateConflict = r.onStateConflict()
	p.OnLateEvent = r.onLateEvent()
	p.Stages = nonNil(p.Stages)
	p.Terminal = nonNil(p.Terminal)
	p.AllowedBackward = nonNil(p.AllowedBackward)
	p.RequirePhoneVerification = nonNil(p.RequirePhoneVerification)
	p.RequiresContact = nonNil(p.RequiresContact)
	p.SourcePrecedence = nonNil(p.SourcePrecedence)
	p.SideEffects = nonNil(p.SideEffects)
	p.Score.FieldPoints = nonNil(p.Score.FieldPoints)
	if p.Aliases == nil {
		p.Aliases = map[string]string{}
	}
	if p.EventStages == nil {
		p.EventStages = map[string]string{}
	}
	if p.RequiredFields == nil {
		p.RequiredFields = map[string][]string{}
	}
	if p.Score.EventPoints == nil {
		p.Score.EventPoints = map[string]int{}
	}
	return json.Marshal(p)
}

func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

// decodeWire decodes one JSON object strictly, translating decoder errors
// into *ValidationError.
func decodeWire(data []byte) (rulesWire, error) {
	var w rulesWire
	trimmed := bytes.TrimSpace(data)
	if len(trimmed) == 0 || trimmed[0] != '{' {
		return w, &ValidationError{Message: "rules must be a JSON object"}
	}
	dec := json.NewDecoder(bytes.NewReader(trimmed))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&w); err != nil {
		return rulesWire{}, jsonError(err)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return rulesWire{}, &ValidationError{Message: "unexpected data after the rules object"}
	}
	return w, nil
}

// jsonError turns an encoding/json error into a *ValidationError naming the
// field when the decoder knows it.
func jsonError(err error) error {
	var typeErr *json.UnmarshalTypeError
	var syntaxErr *json.SyntaxError
	switch {
	case errors.As(err, &typeErr):
		return &ValidationError{Field: typeErr.Field, Message: fmt.Sprintf("must be %s, not %s", typeErr.Type, typeErr.Value)}
	case errors.As(err, &syntaxErr):
		return &ValidationError{Message: fmt.Sprintf("invalid JSON at byte %d: %v", syntaxErr.Offset, err)}
	}
	// encoding/json reports unknown fields only as text: json: unknown field "x".
	if name, ok := strings.CutPrefix(err.Error(), "json: unknown field "); ok {
		return &ValidationError{Field: strings.Trim(name, `"`), Message: "unknown field"}
	}
	if errors.Is(err, io.ErrUnexpectedEOF) {
		return &ValidationError{Message: "invalid JSON: unexpected end of input"}
	}
	return &ValidationError{Message: fmt.Sprintf("invalid JSON: %v", err)}
}

// withDefaults fills absent fields from DefaultRules.
func (w rulesWire) withDefaults() Rules {
	r := DefaultRules()
	r.Version = w.Version
	if w.Stages != nil {
		r.Stages = w.Stages
	}
	if w.Terminal != nil {
		r.Terminal = w.Terminal
	}
	if w.Aliases != nil {
		r.Aliases = w.Aliases
	}
	if w.EventStages != nil {
		r.EventStages = w.EventStages
	}
	if w.AllowRegression != nil {
		r.AllowRegression = *w.AllowRegression
	}
	if w.AllowedBackward != nil {
		r.AllowedBackward = w.AllowedBackward
	}
	if w.AllowSkip != nil {
		r.AllowSkip = *w.AllowSkip
	}
	if w.RequiredFields != nil {
		r.RequiredFields = w.RequiredFields
	}
	if w.OnMissingField != "" {
		r.OnMissingField = w.OnMissingField
	}
	if w.MissingFieldTag != "" {
		r.MissingFieldTag = w.MissingFieldTag
	}
	if w.RequirePhoneVerification != nil {
		r.RequirePhoneVerification = w.RequirePhoneVerification
	}
	if w.OnStateConflict != "" {
		r.OnStateConflict = w.OnStateConflict
	}
	if w.OnLateEvent != "" {
		r.OnLateEvent = w.OnLateEvent
	}
	if w.RequiresContact != nil {
		r.RequiresContact = w.RequiresContact
	}
	if w.SourcePrecedence != nil {
		r.SourcePrecedence = w.SourcePrecedence
	}
	if w.Score.EventPoints != nil {
		r.Score.EventPoints = w.Score.EventPoints
	}
	if w.Score.FieldPoints != nil {
		r.Score.FieldPoints = w.Score.FieldPoints
	}
	if w.SideEffects != nil {
		r.SideEffects = w.SideEffects
	}
	return r
}

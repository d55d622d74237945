// Package filter evaluates per-source drop and tag rules, written in the
// expr language (github.com/expr-lang/expr), over an event's mapped fields and
// its raw payload. Rules are compiled and type-checked when they are saved, so
// a malformed expression is refused with a clear error instead of failing on
// live traffic.
package filter

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strings"

	"github.com/expr-lang/expr"
	"github.com/expr-lang/expr/vm"
)

// Rule actions.
const (
	ActionDrop = "drop"
	ActionTag  = "tag"
)

// Limits on what an operator may save.
const (
	MaxRules      = 100
	MaxExprLength = 4000
	maxNodes      = 2000
)

var (
	namePattern = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9 _.:-]{0,79}$`)
	tagPattern  = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.:-]{0,63}$`)
)

// Rule is one filter rule as stored and edited. Expr must evaluate to a
// boolean; when it is true, a drop rule drops the event (it is stored with
// outcome "dropped" and the rule's name) and a tag rule adds Tags.
type Rule struct {
	Name    string   `json:"name"`
	Expr    string   `json:"expr"`
	Action  string   `json:"action"`
	Tags    []string `json:"tags,omitempty"`
	Enabled *bool    `json:"enabled,omitempty"` // nil means enabled
}

// On reports whether the rule is enabled.
func (r Rule) On() bool { return r.Enabled == nil || *r.Enabled }

// RuleError says which rule is wrong and why; Field is the JSON path of the
// offending value ("rules[2].expr"), for the API's error body.
type RuleError struct {
	Index   int
	Field   string
	Message string
}

func (e *RuleError) Error() string { return e.Field + ": " + e.Message }

// Set is a compiled, validated rule set, safe for concurrent use.
type Set struct {
	rules    []Rule
	programs []*vm.Program
}

// Empty reports whether the set has no rule switched on: evaluating it can neither drop nor tag.
func (s *Set) Empty() bool {
	if s == nil {
		return true
	}
	for _, r := range s.rules {
		if r.On() {
			return false
		}
	}
	return true
}

// Rules returns the rules the set was compiled from.
func (s *Set) Rules() []Rule {
	if s == nil {
		return nil
	}
	return s.rules
}

// Compile validates every rule and compiles its expression against the event
// environment (see Env). Disabled rules are validated too, so that enabling one
// later cannot fail.
func Compile(rules []Rule) (*Set, error) {
	if len(rules) > MaxRules {
		return nil, &RuleError{Index: -1, Field: "rules", Message: fmt.Sprintf("at most %d rules per source", MaxRules)}
	}
	s := &Set{rules: make([]Rule, len(rules)), programs: make([]*vm.Program, len(rules))}
	seen := map[string]bool{}
	for i, r := range rules {
		r.Name = strings.TrimSpace(r.Name)
		r.Action = strings.ToLower(strings.TrimSpace(r.Action))
		if err := validate(i, r, seen); err != nil {
			return nil, err
		}
		p, err := CompileExpr(r.Expr)
		if err != nil {
			return nil, &RuleError{Index: i, Field: fmt.Sprintf("rules[%d].expr", i), Message: err.Error()}
		}
		s.rules[i], s.programs[i] = r, p
	}
	return s, nil
}

func validate(i int, r Rule, seen map[string]bool) error {
	field := func(f string) string { return fmt.Sprintf("rules[%d].%s", i, f) }
	switch {
	case !namePattern.MatchString(r.Name):
		return &RuleError{Index: i, Field: field("name"), Message: "name must be 1-80 letters, digits, spaces or _ . : - and start with a letter or digit"}
	case seen[strings.ToLower(r.Name)]:
		return &RuleError{Index: i, Field: field("name"), Message: fmt.Sprintf("another rule is already named %q", r.Name)}
	case r.Action != ActionDrop && r.Action != ActionTag:
		return &RuleError{Index: i, Field: field("action"), Message: `action must be "drop" or "tag"`}
	case r.Action == ActionTag && len(r.Tags) == 0:
		return &RuleError{Index: i, Field: field("tags"), Message: "a tag rule needs at least one tag"}
	case r.Action == ActionDrop && len(r.Tags) > 0:
		return &RuleError{Index: i, Field: field("tags"), Message: "a drop rule takes no tags"}
	}
	for j, t := range r.Tags {
		if !tagPattern.MatchString(t) {
			return &RuleError{Index: i, Field: fmt.Sprintf("rules[%d].tags[%d]", i, j), Message: "a tag is 1-64 letters, digits or _ . : -"}
		}
	}
	seen[strings.ToLower(r.Name)] = true
	return nil
}

// CompileExpr compiles one boolean expression against the event environment.
// Its errors quote the position of the problem, as expr reports it.
func CompileExpr(code string) (*vm.Program, error) {
	code = strings.TrimSpace(code)
	if code == "" {
		return nil, fmt.Errorf("expression is empty")
	}
	if len(code) > MaxExprLength {
		return nil, fmt.Errorf("expression is longer than %d characters", MaxExprLength)
	}
	p, err := expr.Compile(code, expr.Env(Env{}), expr.AsBool(), expr.MaxNodes(maxNodes))
	if err != nil {
		return nil, fmt.Errorf("invalid expression: %s", strings.TrimSpace(err.Error()))
	}
	return p, nil
}

// ParseRules decodes a stored rule set.
func ParseRules(raw json.RawMessage) ([]Rule, error) {
	if len(raw) == 0 {
		return nil, nil
	}
	var rules []Rule
	if err := json.Unmarshal(raw, &rules); err != nil {
		return nil, fmt.Errorf("filter: decode rules: %w", err)
	}
	return rules, nil
}

package filter

import (
	"context"
	"fmt"
	"slices"

	"github.com/expr-lang/expr"
)

// Verdict is what a rule set decides for one event.
type Verdict struct {
	// Drop is true when a drop rule matched; Rule names it.
	Drop bool
	Rule string
	// Tags are the tags of every matching tag rule evaluated before a drop,
	// deduplicated, in rule order.
	Tags []string
	// Errors lists rules that failed at run time (a missing value used in
	// arithmetic, say). A failing rule never matches: a broken rule must not
	// drop leads.
	Errors []string
}

// Reason is the text stored as a dropped event's reason.
func (v Verdict) Reason() string {
	if !v.Drop {
		return ""
	}
	return "dropped by filter rule " + fmt.Sprintf("%q", v.Rule)
}

// Evaluate runs the enabled rules in order: tag rules add their tags, and the
// first drop rule that matches ends the evaluation. A nil set keeps everything.
func Evaluate(ctx context.Context, s *Set, env Env) Verdict {
	var v Verdict
	if s == nil {
		return v
	}
	if env.Fields == nil {
		env.Fields = map[string]any{}
	}
	if env.Attribution == nil {
		env.Attribution = map[string]any{}
	}
	for i, r := range s.rules {
		if ctx.Err() != nil {
			v.Errors = append(v.Errors, "evaluation cancelled: "+ctx.Err().Error())
			return v
		}
		if !r.On() {
			continue
		}
		out, err := expr.Run(s.programs[i], env)
		if err != nil {
			v.Errors = append(v.Errors, fmt.Sprintf("rule %q: %v", r.Name, err))
			continue
		}
		if matched, _ := out.(bool); !matched {
			continue
		}
		if r.Action == ActionDrop {
			v.Drop, v.Rule = true, r.Name
			return v
		}
		for _, t := range r.Tags {
			if !slices.Contains(v.Tags, t) {
				v.Tags = append(v.Tags, t)
			}
		}
	}
	return v
}

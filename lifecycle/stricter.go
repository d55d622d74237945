package lifecycle

import "slices"

// strictness ranks policy values from most permissive (0) to strictest.
// Dead-lettering is the strictest answer because nothing is applied and an
// operator must look; dropping applies nothing, silently; applying the fields
// lets part of the event through. Unknown values rank -1.
func strictness(policy string) int {
	switch policy {
	case PolicyApplyFieldsKeepStage, PolicyTag:
		return 0
	case PolicyDrop:
		return 1
	case PolicyDeadLetter:
		return 2
	}
	return -1
}

// Stricter returns r tightened by a payload's rule override (crm-event
// state_machine_rules, see ParseOverride), field by field, only where the
// override is stricter; everything else is ignored:
//
//   - allow_regression, allow_skip: true -> false is taken, false -> true ignored;
//   - allowed_backward: when the override lists moves, only moves in both remain;
//   - required_fields, require_phone_verification, requires_existing_contact:
//     the override's entries are added (entries naming unknown stages are ignored);
//   - on_missing_field, on_state_conflict, on_late_event: taken when stricter,
//     ranked apply_fields_keep_stage/tag < drop < dead_letter;
//   - stages, terminal, aliases, event stages, precedence, score, side effects
//     and version are never overridden.
//
// r is not modified; the result shares no mutable maps or slices with r that
// Stricter changed.
func (r Rules) Stricter(override Rules) Rules {
	out := r
	if r.AllowRegression && !override.AllowRegression {
		out.AllowRegression = false
	}
	if r.AllowSkip && !override.AllowSkip {
		out.AllowSkip = false
	}
	if override.AllowedBackward != nil {
		out.AllowedBackward = nil
		for _, m := range r.AllowedBackward {
			if r.moveListed(override.AllowedBackward, m) {
				out.AllowedBackward = append(out.AllowedBackward, m)
			}
		}
		out.AllowedBackward = nonNil(out.AllowedBackward)
	}
	out.OnMissingField = stricterPolicy(r.onMissingField(), override.OnMissingField,
		PolicyTag, PolicyDeadLetter)
	out.OnStateConflict = stricterPolicy(r.onStateConflict(), override.OnStateConflict,
		PolicyApplyFieldsKeepStage, PolicyDrop, PolicyDeadLetter)
	out.OnLateEvent = stricterPolicy(r.onLateEvent(), override.OnLateEvent,
		PolicyApplyFieldsKeepStage, PolicyDeadLetter)
	out.RequiredFields = r.unionRequiredFields(override.RequiredFields)
	out.RequirePhoneVerification = r.unionStages(r.RequirePhoneVerification, override.RequirePhoneVerification)
	out.RequiresContact = slices.Clone(r.RequiresContact)
	for _, t := range override.RequiresContact {
		if t != "" && !containsFold(out.RequiresContact, t) {
			out.RequiresContact = append(out.RequiresContact, t)
		}
	}
	return out
}

// stricterPolicy returns override when it is one of allowed and stricter
// than base.
func stricterPolicy(base, override string, allowed ...string) string {
	if slices.Contains(allowed, override) && strictness(override) > strictness(base) {
		return override
	}
	return base
}

// moveListed reports whether m appears in list, comparing canonical names.
func (r Rules) moveListed(list []Move, m Move) bool {
	from, _ := r.Canonical(m.From)
	to, _ := r.Canonical(m.To)
	for _, o := range list {
		f, okF := r.Canonical(o.From)
		t, okT := r.Canonical(o.To)
		if okF && okT && f == from && t == to {
			return true
		}
	}
	return false
}

func (r Rules) unionRequiredFields(extra map[string][]string) map[string][]string {
	out := make(map[string][]string, len(r.RequiredFields))
	for k, v := range r.RequiredFields {
		out[k] = slices.Clone(v)
	}
	for _, k := range sortedKeys(extra) {
		stage, ok := r.Canonical(k)
		if !ok {
			continue
		}
		key := r.requiredFieldsKey(stage)
		for _, f := range extra[k] {
			if f != "" && !slices.Contains(out[key], f) {
				out[key] = append(out[key], f)
			}
		}
	}
	return out
}

// requiredFieldsKey returns the existing RequiredFields key for stage (which
// may be an alias or differ in case), or stage itself.
func (r Rules) requiredFieldsKey(stage string) string {
	for _, k := range sortedKeys(r.RequiredFields) {
		if s, ok := r.Canonical(k); ok && s == stage {
			return k
		}
	}
	return stage
}

func (r Rules) unionStages(base, extra []string) []string {
	out := slices.Clone(base)
	for _, s := range extra {
		stage, ok := r.Canonical(s)
		if !ok {
			continue
		}
		if !slices.ContainsFunc(out, func(b string) bool { c, _ := r.Canonical(b); return c == stage }) {
			out = append(out, stage)
		}
	}
	return nonNil(out)
}

package lifecycle

import (
	"fmt"
	"slices"
	"strings"
	"time"
)

// Decide is the stage decision for one event against its contact's current
// state. It is pure: the same rules, contact and proposal give the same
// Decision. In order:
//
//  1. An event type listed in RequiresContact with no existing contact: Wait.
//  2. The target is p.TargetStage (alias-resolved), else
//     p.SourceEventStages[event type], else Rules.EventStages[event type]
//     (event types match case-insensitively). A target that names no stage
//     is Invalid and quarantined (unknown_stage).
//  3. No target: fields only (Unchanged, ApplyFields) — except for a contact
//     without a stage (new, or in a stage the rules no longer know), which
//     enters the first ordered stage.
//  4. A higher stage, or a terminal stage from a non-terminal one, is Forward
//     whatever the event's time (a contact's stage is the highest it
//     reached); with AllowSkip false, a forward move past intermediate stages
//     (or a stageless contact entering beyond the first stage) is
//     SkipDisallowed and follows OnStateConflict.
//  5. A lower stage, or leaving a terminal stage: Late when p.OccurredAt is
//     not after c.StageEnteredAt (follows OnLateEvent; a tie counts as late),
//     else a Regression, which is applied when AllowedBackward lists the
//     move or AllowRegression is set and the current stage is not terminal,
//     and otherwise follows OnStateConflict.
//  6. Entering a stage checks RequirePhoneVerification (unverified:
//     quarantined, phone_unverified) and RequiredFields against the
//     contact's fields merged with the event's (missing: tag, or quarantined
//     as missing_field under OnMissingField dead_letter). Only the target
//     stage's requirements apply, not those of stages skipped over.
func (r Rules) Decide(c Contact, p Proposal) Decision {
	current, _ := r.Canonical(c.Stage)
	if !c.Exists && r.requiresContact(p.EventType) {
		return Decision{
			Outcome:        Wait,
			Stage:          None,
			DeadLetterKind: KindMissingContact,
			Reason:         fmt.Sprintf("%s requires an existing contact and none matches yet", p.EventType),
			Judged:         Judged{EventType: p.EventType, From: current, Rule: "requires_contact"},
		}
	}
	target, via, raw, err := r.proposedStage(p)
	if err != nil {
		return Decision{
			Outcome:        Quarantined,
			Stage:          Invalid,
			DeadLetterKind: KindUnknownStage,
			Reason:         err.Error(),
			Judged:         Judged{EventType: p.EventType, From: current, Proposed: raw, Rule: "stages"},
		}
	}
	if target == "" {
		if current != "" || len(r.Stages) == 0 {
			return Decision{Outcome: Unchanged, Stage: None, ApplyFields: true,
				Reason: fmt.Sprintf("no stage proposed for %s; fields only", p.EventType),
				Judged: Judged{EventType: p.EventType, From: current}}
		}
		target, raw, via = r.Stages[0], r.Stages[0], "a contact without a stage starts in the first stage"
	}
	m := move{rules: r, from: current, to: target, raw: raw, via: via, contact: c, proposal: p}
	switch verdict := m.classify(); verdict {
	case Same:
		return m.stamp(Decision{Outcome: Unchanged, Stage: Same, ApplyFields: true,
			Reason: fmt.Sprintf("already in %s (%s); fields only", current, via)}, "", "")
	case Forward:
		rule := ""
		if len(r.skippedStages(current, target)) > 0 && !r.terminal(target) {
			rule = "allow_skip"
		}
		return m.enter(Forward, m.describe("forward"), rule)
	case SkipDisallowed:
		return m.conflict(SkipDisallowed, KindSkipNotAllowed,
			fmt.Sprintf("%s skips %s; allow_skip=false", m.describe("forward"), r.skipped(current, target)), "allow_skip")
	case Late:
		return m.late()
	default:
		return m.regression()
	}
}

// stamp records the move the decision judged, with the rule and policy that
// decided it.
func (m move) stamp(d Decision, rule, policy string) Decision {
	d.Judged = Judged{EventType: m.proposal.EventType, From: m.from, To: m.to, Proposed: m.raw, Rule: rule, Policy: policy}
	if m.from == "" || m.rules.rankOf(m.to) > m.rules.rankOf(m.from) {
		d.Judged.Skipped = m.rules.skippedStages(m.from, m.to)
	}
	return d
}

// proposedStage resolves the event's target stage and says where it came
// from. An empty target with a nil error means the event proposes no stage.
func (r Rules) proposedStage(p Proposal) (stage, via, raw string, err error) {
	if p.TargetStage != "" {
		s, ok := r.ResolveStage(p.TargetStage, p)
		if !ok {
			return "", "", p.TargetStage, fmt.Errorf("target_stage %q is neither a stage nor an alias", p.TargetStage)
		}
		return s, fmt.Sprintf("target_stage %q", p.TargetStage), p.TargetStage, nil
	}
	sources := []struct {
		name    string
		mapping map[string]string
	}{
		{"the source's event_stages", p.SourceEventStages},
		{"event_stages", r.EventStages},
	}
	for _, src := range sources {
		name, ok := lookupFold(src.mapping, p.EventType)
		if !ok {
			continue
		}
		s, ok := r.Canonical(name)
		if !ok {
			return "", "", name, fmt.Errorf("%s maps %s to %q, which is neither a stage nor an alias", src.name, p.EventType, name)
		}
		return s, fmt.Sprintf("%s: %s -> %s", src.name, p.EventType, name), name, nil
	}
	return "", "", "", nil
}

// lookupFold finds key in m exactly, else case-insensitively (the smallest
// matching key wins, so the answer never depends on map order).
func lookupFold(m map[string]string, key string) (string, bool) {
	if key == "" {
		return "", false
	}
	if v, ok := m[key]; ok {
		return v, true
	}
	best, val, found := "", "", false
	for k, v := range m {
		if strings.EqualFold(k, key) && (!found || k < best) {
			best, val, found = k, v, true
		}
	}
	return val, found
}

// rankOf is Rank for a canonical name.
func (r Rules) rankOf(stage string) int {
	for i, s := range r.Stages {
		if s == stage {
			return i
		}
	}
	return len(r.Stages)
}

func (r Rules) terminal(stage string) bool {
	for _, t := range r.Terminal {
		if t == stage {
			return true
		}
	}
	return false
}

// skipped lists the ordered stages strictly between from and to.
func (r Rules) skipped(from, to string) string {
	return strings.Join(r.skippedStages(from, to), ", ")
}

// skippedStages are the ordered stages strictly between from and to on a
// forward move (none for a backward one, or into an unordered stage).
func (r Rules) skippedStages(from, to string) []string {
	lo, hi := -1, r.rankOf(to)
	if from != "" {
		lo = r.rankOf(from)
	}
	if hi > len(r.Stages) {
		hi = len(r.Stages)
	}
	if lo+1 >= hi {
		return nil
	}
	return slices.Clone(r.Stages[lo+1 : hi])
}

// move is one proposed stage change under evaluation.
type move struct {
	rules    Rules
	from, to string // canonical; from is "" for a contact without a stage
	raw      string // the target as written
	via      string // where the target came from, for reasons
	contact  Contact
	proposal Proposal
}

func (m move) classify() StageVerdict {
	r := m.rules
	switch {
	case m.from == "":
		if !r.AllowSkip && !r.terminal(m.to) && r.rankOf(m.to) > 0 {
			return SkipDisallowed
		}
		return Forward
	case m.from == m.to:
		return Same
	case r.terminal(m.from):
		return m.backward()
	case r.terminal(m.to):
		return Forward
	case r.rankOf(m.to) > r.rankOf(m.from):
		if !r.AllowSkip && r.rankOf(m.to)-r.rankOf(m.from) > 1 {
			return SkipDisallowed
		}
		return Forward
	default:
		return m.backward()
	}
}

// backward tells a late arrival from a true regression by event time.
func (m move) backward() StageVerdict {
	if !m.proposal.OccurredAt.After(m.contact.StageEnteredAt) {
		return Late
	}
	return Regression
}

func (m move) describe(kind string) string {
	if m.from == "" {
		return fmt.Sprintf("enters %s (%s)", m.to, m.via)
	}
	return fmt.Sprintf("%s %s -> %s (%s)", kind, m.from, m.to, m.via)
}

func (m move) late() Decision {
	reason := fmt.Sprintf("late event: proposes %s below %s, but happened at %s, not after the contact entered %s at %s (%s); on_late_event=%s",
		m.to, m.from, fmtTime(m.proposal.OccurredAt), m.from, fmtTime(m.contact.StageEnteredAt), m.via, m.rules.onLateEvent())
	if m.rules.onLateEvent() == PolicyDeadLetter {
		return m.stamp(Decision{Outcome: Quarantined, Stage: Late, DeadLetterKind: KindLateEvent, Reason: reason}, "on_late_event", m.rules.onLateEvent())
	}
	return m.stamp(Decision{Outcome: Unchanged, Stage: Late, ApplyFields: true, Reason: reason}, "on_late_event", m.rules.onLateEvent())
}

func (m move) regression() Decision {
	r := m.rules
	if r.allowsBackward(m.from, m.to) {
		return m.enter(AllowedBackward, m.describe("allowed backward move")+"; listed in allowed_backward", "allowed_backward")
	}
	newer := fmt.Sprintf("regression %s -> %s (event at %s is newer than entry into %s at %s; %s)",
		m.from, m.to, fmtTime(m.proposal.OccurredAt), m.from, fmtTime(m.contact.StageEnteredAt), m.via)
	if r.terminal(m.from) {
		return m.conflict(Regression, KindStateConflict,
			fmt.Sprintf("%s; terminal stage %s is left only through allowed_backward", newer, m.from), "allowed_backward")
	}
	if r.AllowRegression {
		return m.enter(Regression, newer+"; allow_regression=true", "allow_regression")
	}
	return m.conflict(Regression, KindStateConflict, newer, "allow_regression")
}

// conflict applies OnStateConflict to a move the rules refuse.
func (m move) conflict(verdict StageVerdict, kind, reason, rule string) Decision {
	policy := m.rules.onStateConflict()
	reason += "; on_state_conflict=" + policy
	switch policy {
	case PolicyDrop:
		return m.stamp(Decision{Outcome: Dropped, Stage: verdict, Reason: reason}, rule, policy)
	case PolicyApplyFieldsKeepStage:
		return m.stamp(Decision{Outcome: Unchanged, Stage: verdict, ApplyFields: true, Reason: reason}, rule, policy)
	default:
		return m.stamp(Decision{Outcome: Quarantined, Stage: verdict, DeadLetterKind: kind, Reason: reason}, rule, policy)
	}
}

// enter moves the contact into m.to once the stage's entry requirements hold.
// rule names what let the move through ("" for a move simply in order).
func (m move) enter(verdict StageVerdict, reason, rule string) Decision {
	r := m.rules
	if r.needsVerifiedPhone(m.to) && !m.phoneVerified() {
		return m.stamp(Decision{Outcome: Quarantined, Stage: verdict, DeadLetterKind: KindPhoneUnverified,
			Reason: fmt.Sprintf("%s; %s requires a verified phone and the contact's phone is not verified", reason, m.to)}, "require_phone_verification", "")
	}
	d := Decision{Outcome: Applied, NewStage: m.to, EnteredAt: m.proposal.OccurredAt, Stage: verdict, ApplyFields: true, Reason: reason}
	if missing := m.missingFields(); len(missing) > 0 {
		list := strings.Join(missing, ", ")
		if r.onMissingField() == PolicyDeadLetter {
			return m.stamp(Decision{Outcome: Quarantined, Stage: verdict, DeadLetterKind: KindMissingField,
				Reason: fmt.Sprintf("%s; %s requires %s, missing; on_missing_field=dead_letter", reason, m.to, list)}, "required_fields", PolicyDeadLetter)
		}
		d.Tags = []string{r.missingFieldTag()}
		d.Reason = fmt.Sprintf("%s; %s requires %s, missing; tagged %s", reason, m.to, list, r.missingFieldTag())
		return m.stamp(d, "required_fields", r.onMissingField())
	}
	return m.stamp(d, rule, "")
}

func (r Rules) needsVerifiedPhone(stage string) bool {
	for _, s := range r.RequirePhoneVerification {
		if c, ok := r.Canonical(s); ok && c == stage {
			return true
		}
	}
	return false
}

func (m move) phoneVerified() bool {
	return m.contact.PhoneVerified || m.proposal.PhoneVerified ||
		truthy(m.proposal.Fields["phone_verified"]) || truthy(m.contact.Fields["phone_verified"])
}

// missingFields lists the target stage's required fields present neither on
// the contact nor in the event, in rule order.
func (m move) missingFields() []string {
	var missing []string
	for _, k := range sortedKeys(m.rules.RequiredFields) {
		if s, ok := m.rules.Canonical(k); !ok || s != m.to {
			continue
		}
		for _, f := range m.rules.RequiredFields[k] {
			if present(m.proposal.Fields[f]) || present(m.contact.Fields[f]) {
				continue
			}
			if !containsFold(missing, f) {
				missing = append(missing, f)
			}
		}
	}
	return missing
}

func present(v string) bool { return strings.TrimSpace(v) != "" }

func truthy(v string) bool {
	switch strings.ToLower(strings.TrimSpace(v)) {
	case "true", "1", "yes", "verified":
		return true
	}
	return false
}

func fmtTime(t time.Time) string {
	if t.IsZero() {
		return "an unknown time"
	}
	return t.UTC().Format(time.RFC3339Nano)
}

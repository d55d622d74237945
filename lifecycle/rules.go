package lifecycle

import "strings"

// Policy values accepted by Rules.OnMissingField, Rules.OnStateConflict and
// Rules.OnLateEvent.
const (
	PolicyTag                  = "tag"
	PolicyDeadLetter           = "dead_letter"
	PolicyDrop                 = "drop"
	PolicyApplyFieldsKeepStage = "apply_fields_keep_stage"
)

// DefaultMissingFieldTag is the tag applied when a stage's required fields are
// missing and Rules.OnMissingField is "tag".
const DefaultMissingFieldTag = "needs-data"

// Move is one explicitly allowed backward stage move, e.g. Lost -> Engaged to
// recycle a lead. Names may be aliases; they are resolved case-insensitively.
type Move struct {
	From string `json:"from"`
	To   string `json:"to"`
}

// Rules is one version of a workspace's stage rules. Build it with
// DefaultRules or ParseRules (or decode it with encoding/json, which applies
// the same defaults): the zero value is not a usable rule set.
//
// Empty policy strings behave as their defaults (OnMissingField "tag",
// MissingFieldTag "needs-data", OnStateConflict "dead_letter", OnLateEvent
// "apply_fields_keep_stage"), so rules built in Go code stay safe.
type Rules struct {
	// Version is assigned by the store on save; decisions record it.
	Version int `json:"version"`
	// Stages is the ordered pipeline; a stage's index is its rank.
	Stages []string `json:"stages"`
	// Terminal stages (e.g. Lost) are reachable from any stage, are not part
	// of the order, and are left only through AllowedBackward.
	Terminal []string `json:"terminal"`
	// Aliases maps an external stage name (case-insensitive) to a stage.
	Aliases map[string]string `json:"aliases"`
	// EventStages maps a workspace-wide event type to the stage it proposes;
	// a source's own mapping (Proposal.SourceEventStages) takes precedence.
	EventStages map[string]string `json:"event_stages"`
	// AllowRegression lets a newer event move an ordered stage backwards.
	// It never lets a contact leave a terminal stage.
	AllowRegression bool `json:"allow_regression"`
	// AllowedBackward lists backward moves allowed even without
	// AllowRegression, including moves out of a terminal stage.
	AllowedBackward []Move `json:"allowed_backward"`
	// AllowSkip lets a forward move jump over intermediate stages.
	AllowSkip bool `json:"allow_skip"`
	// RequiredFields lists, per stage, the fields a contact needs to enter it.
	RequiredFields map[string][]string `json:"required_fields"`
	// OnMissingField is "tag" (enter the stage and tag the contact) or
	// "dead_letter".
	OnMissingField string `json:"on_missing_field"`
	// MissingFieldTag is the tag used by OnMissingField "tag".
	MissingFieldTag string `json:"missing_field_tag"`
	// RequirePhoneVerification lists stages that need a verified phone.
	RequirePhoneVerification []string `json:"require_phone_verification"`
	// OnStateConflict handles a true regression (a newer event proposing a
	// lower stage) and a disallowed skip: "dead_letter", "drop" or
	// "apply_fields_keep_stage".
	OnStateConflict string `json:"on_state_conflict"`
	// OnLateEvent handles an event proposing a lower stage that happened
	// before the contact entered its current stage: "apply_fields_keep_stage"
	// or "dead_letter".
	OnLateEvent string `json:"on_late_event"`
	// RequiresContact lists event types (case-insensitive) that must find an
	// existing contact, e.g. payment_succeeded; otherwise they wait.
	RequiresContact []string `json:"requires_existing_contact"`
	// SourcePrecedence lists source names or ids, highest authority first,
	// for field values (see ResolveFields).
	SourcePrecedence []string `json:"source_precedence"`
	// Score configures the lead score.
	Score ScoreRules `json:"score"`
	// SideEffects lists the side effects fired on contact creation or stage
	// entry.
	SideEffects []SideEffectRule `json:"side_effects"`
}

// DefaultRules returns the rules a workspace starts with: Discovered ->
// Engaged -> SQL -> Closed plus a terminal Lost, no regression, skipping
// allowed, missing required fields tagged "needs-data", true regressions
// dead-lettered and late events applied for their fields only. Version is 0
// ("not saved yet"). Maps and slices are empty, never nil.
func DefaultRules() Rules {
	return Rules{
		Stages:                   []string{"Discovered", "Engaged", "SQL", "Closed"},
		Terminal:                 []string{"Lost"},
		Aliases:                  map[string]string{},
		EventStages:              map[string]string{},
		AllowedBackward:          []Move{},
		AllowSkip:                true,
		RequiredFields:           map[string][]string{},
		OnMissingField:           PolicyTag,
		MissingFieldTag:          DefaultMissingFieldTag,
		RequirePhoneVerification: []string{},
		OnStateConflict:          PolicyDeadLetter,
		OnLateEvent:              PolicyApplyFieldsKeepStage,
		RequiresContact:          []string{},
		SourcePrecedence:         []string{},
		Score:                    ScoreRules{EventPoints: map[string]int{}, FieldPoints: []FieldCondition{}},
		SideEffects:              []SideEffectRule{},
	}
}

// Canonical resolves a stage name or alias, case-insensitively, to the
// stage's name as spelled in Stages or Terminal. Stage names win over
// aliases. It reports false for an empty or unknown name.
func (r Rules) Canonical(name string) (stage string, ok bool) {
	if name == "" {
		return "", false
	}
	if s, ok := r.stageNamed(name); ok {
		return s, true
	}
	target, ok := r.Aliases[name]
	if !ok {
		// Case-insensitive fallback; the smallest matching key wins so the
		// answer never depends on map order, even for unvalidated rules.
		best := ""
		for k, v := range r.Aliases {
			if strings.EqualFold(k, name) && (!ok || k < best) {
				best, target, ok = k, v, true
			}
		}
	}
	if !ok {
		return "", false
	}
	return r.stageNamed(target)
}

// stageNamed matches name against Stages and Terminal, case-insensitively.
func (r Rules) stageNamed(name string) (string, bool) {
	for _, s := range r.Stages {
		if strings.EqualFold(s, name) {
			return s, true
		}
	}
	for _, s := range r.Terminal {
		if strings.EqualFold(s, name) {
			return s, true
		}
	}
	return "", false
}

// Rank returns the position of a stage (or alias) in the order: 0 for the
// first ordered stage, len(Stages) for every terminal stage (terminal stages
// sit after the order and are equal to each other) and -1 for an unknown name.
func (r Rules) Rank(stage string) int {
	s, ok := r.Canonical(stage)
	if !ok {
		return -1
	}
	for i, o := range r.Stages {
		if o == s {
			return i
		}
	}
	return len(r.Stages)
}

// IsTerminal reports whether stage (or alias) names a terminal stage.
func (r Rules) IsTerminal(stage string) bool {
	s, ok := r.Canonical(stage)
	if !ok {
		return false
	}
	for _, t := range r.Terminal {
		if t == s {
			return true
		}
	}
	return false
}

// allowsBackward reports whether from -> to (canonical names) is listed in
// AllowedBackward.
func (r Rules) allowsBackward(from, to string) bool {
	for _, m := range r.AllowedBackward {
		f, okF := r.Canonical(m.From)
		t, okT := r.Canonical(m.To)
		if okF && okT && f == from && t == to {
			return true
		}
	}
	return false
}

// requiresContact reports whether eventType must find an existing contact.
func (r Rules) requiresContact(eventType string) bool {
	return containsFold(r.RequiresContact, eventType)
}

func (r Rules) onMissingField() string {
	if r.OnMissingField == "" {
		return PolicyTag
	}
	return r.OnMissingField
}

func (r Rules) missingFieldTag() string {
	if r.MissingFieldTag == "" {
		return DefaultMissingFieldTag
	}
	return r.MissingFieldTag
}

func (r Rules) onStateConflict() string {
	if r.OnStateConflict == "" {
		return PolicyDeadLetter
	}
	return r.OnStateConflict
}

func (r Rules) onLateEvent() string {
	if r.OnLateEvent == "" {
		return PolicyApplyFieldsKeepStage
	}
	return r.OnLateEvent
}

func containsFold(list []string, s string) bool {
	for _, v := range list {
		if strings.EqualFold(v, s) {
			return true
		}
	}
	return false
}

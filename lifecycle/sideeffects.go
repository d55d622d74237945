package lifecycle

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"maps"
	"strings"
)

// Side-effect causes: SideEffectRule.On is CauseCreated or CauseEnterPrefix
// followed by a stage name or alias ("enter:SQL").
const (
	CauseCreated     = "created"
	CauseEnterPrefix = "enter:"
)

// SideEffectRule fires Action with Params on a cause.
type SideEffectRule struct {
	On     string            `json:"on"`     // "created" | "enter:<Stage>"
	Action string            `json:"action"` // "start_onboarding", "nurture", "sales_task", ...
	Params map[string]string `json:"params,omitempty"`
}

// SideEffect is one side effect to write to the outbox.
type SideEffect struct {
	// ID is stable per contact, cause and action (see SideEffectID).
	ID     string
	Cause  string // "created" or "enter:<canonical stage>"
	Action string
	Params map[string]string
}

// SideEffectsFor lists the side effects due when a contact is created
// (created) and/or enters a stage (enteredStage, "" for none), creation
// effects first, each in rule order. Rules repeating a cause and action
// yield one side effect. IDs derive only from the contact, the cause (with
// the stage's canonical name, so an alias or a re-saved rule set changes
// nothing) and the action: replaying an event, re-entering a stage or
// editing params never produces a second id for the same cause.
func (r Rules) SideEffectsFor(contactID string, created bool, enteredStage string) []SideEffect {
	var causes []string
	if created {
		causes = append(causes, CauseCreated)
	}
	if stage, ok := r.Canonical(enteredStage); ok {
		causes = append(causes, CauseEnterPrefix+stage)
	}
	var out []SideEffect
	seen := map[string]bool{}
	for _, cause := range causes {
		for _, rule := range r.SideEffects {
			ruleCause, err := r.sideEffectCause(rule.On)
			if err != nil || ruleCause != cause || rule.Action == "" {
				continue
			}
			id := SideEffectID(contactID, cause, rule.Action)
			if seen[id] {
				continue
			}
			seen[id] = true
			out = append(out, SideEffect{ID: id, Cause: cause, Action: rule.Action, Params: maps.Clone(rule.Params)})
		}
	}
	return out
}

// SideEffectID is the hex SHA-256 of contactID, cause and action joined by
// NUL bytes (so that no two different triples hash the same input).
func SideEffectID(contactID, cause, action string) string {
	sum := sha256.Sum256([]byte(contactID + "\x00" + cause + "\x00" + action))
	return hex.EncodeToString(sum[:])
}

// sideEffectCause canonicalizes a rule's "on" value.
func (r Rules) sideEffectCause(on string) (string, error) {
	if strings.EqualFold(on, CauseCreated) {
		return CauseCreated, nil
	}
	if len(on) > len(CauseEnterPrefix) && strings.EqualFold(on[:len(CauseEnterPrefix)], CauseEnterPrefix) {
		name := on[len(CauseEnterPrefix):]
		stage, ok := r.Canonical(name)
		if !ok {
			return "", fmt.Errorf("unknown stage %q", name)
		}
		return CauseEnterPrefix + stage, nil
	}
	return "", fmt.Errorf("%q is neither %q nor %q followed by a stage", on, CauseCreated, CauseEnterPrefix)
}

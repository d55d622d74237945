package lifecycle

import (
	"math"
	"strings"
)

// VocabularyTerm is one value of a provider's own stage vocabulary (HubSpot's
// lifecyclestage "salesqualifiedlead") and where it sits in a funnel: 0 is
// the first stage, 1 the last.
type VocabularyTerm struct {
	Value    string  `json:"value"`
	Position float64 `json:"position"`
}

// DefaultAliases maps each term of a provider's vocabulary onto these rules'
// stages: a term that already names a stage or a workspace alias keeps it;
// any other goes to the ordered stage at its funnel position. These are the
// aliases a source of that provider starts with.
func (r Rules) DefaultAliases(vocab []VocabularyTerm) map[string]string {
	out := make(map[string]string, len(vocab))
	for _, t := range vocab {
		if s, ok := r.Canonical(t.Value); ok {
			out[t.Value] = s
			continue
		}
		if len(r.Stages) == 0 {
			continue
		}
		i := int(math.Round(min(max(t.Position, 0), 1) * float64(len(r.Stages)-1)))
		out[t.Value] = r.Stages[i]
	}
	return out
}

// ResolveStage resolves a stage value an event proposes: the source's own
// aliases first (p.SourceAliases, or the default aliases of p.SourceVocabulary
// when the source has none), then the rules' stages and aliases. An alias
// that names no stage of these rules resolves to nothing.
func (r Rules) ResolveStage(name string, p Proposal) (string, bool) {
	aliases := p.SourceAliases
	if aliases == nil && len(p.SourceVocabulary) > 0 {
		aliases = r.DefaultAliases(p.SourceVocabulary)
	}
	if target, ok := lookupFold(aliases, strings.TrimSpace(name)); ok {
		return r.Canonical(target)
	}
	return r.Canonical(name)
}

package apply

import (
	"github.com/leadgate/leadgate/ingest/mapping"
	"github.com/leadgate/leadgate/lifecycle"
	"github.com/leadgate/leadgate/models"
)

// stageVocabulary is the standard stage vocabulary of a source kind's
// provider, in the rules' terms.
func stageVocabulary(kind string) []lifecycle.VocabularyTerm {
	terms := mapping.StageVocabulary(kind)
	if len(terms) == 0 {
		return nil
	}
	out := make([]lifecycle.VocabularyTerm, len(terms))
	for i, t := range terms {
		out[i] = lifecycle.VocabularyTerm{Value: t.Value, Position: t.Position}
	}
	return out
}

// SourceStageAliases are the stage aliases a source works with under rules:
// its own, or, when it has none, its provider's defaults. The source form
// shows them.
func SourceStageAliases(src models.Source, rules lifecycle.Rules) (aliases map[string]string, defaults bool) {
	if src.Config.StageAliases != nil {
		return src.Config.StageAliases, false
	}
	return rules.DefaultAliases(stageVocabulary(src.Kind)), true
}

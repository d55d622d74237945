package handlers

import (
	"context"
	"maps"
	"strconv"
	"strings"

	"github.com/leadgate/leadgate/lifecycle/apply"
	"github.com/leadgate/leadgate/models"
)

// MaxStageAliases caps the stage aliases of one source.
const MaxStageAliases = 200

// CheckStageAliases validates a source's stage aliases against the
// workspace's current rules (each must name a stage) and stores none when
// they are exactly the provider's defaults, so the source keeps following
// the defaults when the stages change. It returns the field at fault.
func CheckStageAliases(ctx context.Context, st *models.Store, workspaceID int64, in *SourceInput) (field, msg string, err error) {
	if in.StageAliases == nil {
		return "", "", nil
	}
	if len(in.StageAliases) > MaxStageAliases {
		return "stage_aliases", "at most " + strconv.Itoa(MaxStageAliases) + " stage aliases", nil
	}
	rules, err := apply.LoadRules(ctx, st, workspaceID)
	if err != nil {
		return "", "", err
	}
	clean := make(map[string]string, len(in.StageAliases))
	for value, stage := range in.StageAliases {
		value, stage = strings.TrimSpace(value), strings.TrimSpace(stage)
		if value == "" || len(value) > 100 {
			return "stage_aliases", "each stage alias needs a value of 1-100 characters", nil
		}
		canon, ok := rules.Canonical(stage)
		if !ok {
			return "stage_aliases", "stage alias " + strconv.Quote(value) + " maps to " + strconv.Quote(stage) +
				", which is not a stage; stages: " + strings.Join(append(append([]string{}, rules.Stages...), rules.Terminal...), ", "), nil
		}
		clean[value] = canon
	}
	in.StageAliases = clean
	if defaults, _ := apply.SourceStageAliases(models.Source{Kind: in.Kind}, rules); len(defaults) > 0 && maps.Equal(defaults, clean) {
		in.StageAliases = nil
	}
	return "", "", nil
}

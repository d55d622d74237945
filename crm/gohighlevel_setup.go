package crm

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"strings"
)

// MissingSetup lists every contact custom field, pipeline and stage the configuration names and the
// location lacks, read afresh: the loop-breaker pair, the stage field (field mode), each mapped custom
// field, and in opportunity mode the pipeline and every mapped stage. The loop-breaker pair and the stage
// field can be created (CreateSetupFields); mapped fields are the operator's to make, since leadgate
// cannot know their type.
func (g *goHighLevel) MissingSetup(ctx context.Context) ([]MissingPiece, error) {
	fields, err := g.listFields(ctx, nil)
	if err != nil {
		return nil, err
	}
	idx := ghlFieldIndex(fields)
	g.mu.Lock()
	g.setup.fields = nil // the next write reads the list again, with whatever is created meanwhile
	g.mu.Unlock()
	var out []MissingPiece
	seen := map[string]bool{}
	field := func(ref, setting string, creatable bool) {
		key := normalizeFieldRef(ref)
		_, byID := idx[ref]
		_, byName := idx[key]
		if ref == "" || isNative(ghlNative, ref) || seen[key] || byID || byName {
			return
		}
		seen[key] = true
		msg := g.missingField(ref).Message
		if creatable {
			msg += "; or POST .../loop-fields creates it"
		}
		out = append(out, MissingPiece{Kind: "field", Name: ref, Setting: setting, Creatable: creatable, Message: msg})
	}
	field(g.cfg.LoopField, "loop_field", true)
	field(g.cfg.SyncField, "sync_field", true)
	if g.cfg.StageMode == StageModeField {
		field(g.cfg.StageField, "stage_field", true)
	}
	for _, name := range sortedKeys(g.cfg.FieldMap) {
		field(g.cfg.FieldMap[name], "field_map["+name+"]", false)
	}
	if g.cfg.StageMode != StageModeDeal {
		return out, nil
	}
	pipes, err := g.listPipelines(ctx, nil)
	if err != nil {
		return nil, err
	}
	g.mu.Lock()
	g.setup.pipelines = nil
	g.mu.Unlock()
	i := slices.IndexFunc(pipes, func(p ghlPipeline) bool { return p.ID == g.cfg.Pipeline })
	if i < 0 {
		return append(out, MissingPiece{Kind: "pipeline", Name: g.cfg.Pipeline, Setting: "pipeline",
			Message: fmt.Sprintf("gohighlevel: the pipeline %q does not exist in location %s: change the destination's pipeline",
				g.cfg.Pipeline, g.cfg.LocationID)}), nil
	}
	for _, stage := range sortedKeys(g.cfg.StageMap) {
		id := g.cfg.StageMap[stage]
		if !slices.ContainsFunc(pipes[i].Stages, func(s ghlPipelineStage) bool { return s.ID == id }) {
			out = append(out, MissingPiece{Kind: "stage", Name: id, Setting: "stage_map[" + stage + "]",
				Message: fmt.Sprintf("gohighlevel: the pipeline stage %q (stage_map[%s]) is not a stage of pipeline %q: change stage_map",
					id, stage, g.cfg.Pipeline)})
		}
	}
	return out, nil
}

// CreateSetupFields creates the creatable pieces MissingSetup lists (the loop-breaker pair and, in field
// mode, the stage field) as text custom fields of the location's contacts. It returns the names created.
func (g *goHighLevel) CreateSetupFields(ctx context.Context) ([]string, error) {
	missing, err := g.MissingSetup(ctx)
	if err != nil {
		return nil, err
	}
	created, err := createMissing(ctx, missing, g.createTextField)
	g.mu.Lock()
	g.setup.fields = nil
	g.mu.Unlock()
	return created, err
}

// createTextField creates one text custom field of the location's contacts (CreateCustomFieldsDTO: name,
// dataType TEXT, model contact; the model's default is not documented, so it is named). A reference given
// as a field key ("contact.lifecycle_stage", "{{ contact.lifecycle_stage }}") is created under the name
// GHL derives that key from.
func (g *goHighLevel) createTextField(ctx context.Context, ref string) error {
	name := strings.TrimPrefix(strings.Trim(strings.TrimSpace(ref), "{} "), "contact.")
	in := map[string]any{"name": name, "dataType": "TEXT", "model": "contact"}
	path := "/locations/" + pathID(g.cfg.LocationID) + "/customFields"
	_, err := g.do(ctx, call{method: http.MethodPost, path: path, in: in}, nil)
	return err
}

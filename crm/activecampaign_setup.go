package crm

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"regexp"
	"slices"
	"strings"
)

// acDigits matches a custom field given by its id: a field that does not exist cannot be created under it.
var acDigits = regexp.MustCompile(`^[0-9]+$`)

// classify refines ActiveCampaign's non-2xx answers: a write naming a custom field the account no longer
// has ("Field N does not exist", 422 on fieldValues) is a fault of the destination's setup, not of the
// contact: every contact would be refused the same way.
func (a *activeCampaign) classify(e *Error, _ http.Header, body []byte) {
	b := strings.ToLower(string(body))
	if e.Status != http.StatusUnprocessableEntity || !strings.Contains(b, "does not exist") || !strings.Contains(b, "field") {
		return
	}
	a.forgetFields() // the field was deleted since the list was read
	e.Class = Setup
	e.Message += ": a custom field this destination writes is missing from the ActiveCampaign account " +
		"(deleted since?): recreate it (POST .../loop-fields creates the loop-breaker and stage fields) or change the mapping"
}

// MissingSetup lists every custom field, pipeline and stage the configuration names and the account
// lacks, read afresh. The loop-breaker pair and a stage field named by perstag or title can be created.
func (a *activeCampaign) MissingSetup(ctx context.Context) ([]MissingPiece, error) {
	a.forgetFields()
	a.mu.Lock()
	a.pipe = nil
	a.mu.Unlock()
	known, _, err := a.fieldIndex(ctx, nil)
	if err != nil {
		return nil, err
	}
	var out []MissingPiece
	seen := map[string]bool{}
	field := func(ref string, creatable bool) {
		if ref == "" || seen[fieldKey(ref)] {
			return
		}
		seen[fieldKey(ref)] = true
		if _, ok := known[fieldKey(ref)]; ok {
			return
		}
		setting := a.fieldSetting(ref)
		msg := fmt.Sprintf("ActiveCampaign account lacks the custom field %q (%s)", ref, setting)
		switch {
		case ref == a.cfg.LoopField || ref == a.cfg.SyncField:
			msg = fmt.Sprintf("ActiveCampaign account lacks the loop-breaker field %q (%s); create it or POST .../loop-fields", ref, setting)
		case creatable:
			msg += "; create it or POST .../loop-fields"
		case setting == "stage_field":
			msg += ": no field has this id; pick an existing field, or name the field (perstag or title) and leadgate can create it"
		default:
			msg += ": create it in ActiveCampaign (Contacts > Fields) or change the mapping"
		}
		out = append(out, MissingPiece{Kind: "field", Name: ref, Setting: setting, Creatable: creatable, Message: msg})
	}
	field(a.cfg.LoopField, true)
	field(a.cfg.SyncField, true)
	if a.cfg.StageMode == StageModeField {
		field(a.cfg.StageField, !acDigits.MatchString(a.cfg.StageField))
	}
	for _, name := range sortedKeys(a.cfg.FieldMap) {
		if ref := a.cfg.FieldMap[name]; !isACNative(ref) {
			field(ref, false)
		}
	}
	if a.cfg.StageMode != StageModeDeal {
		return out, nil
	}
	p, err := a.pipeline(ctx, nil)
	var e *Error
	switch {
	case ClassOf(err) == Setup && errors.As(err, &e):
		return append(out, MissingPiece{Kind: "pipeline", Name: a.cfg.Pipeline, Setting: "pipeline", Message: e.Message}), nil
	case err != nil:
		return nil, err
	}
	for _, stage := range sortedKeys(a.cfg.StageMap) {
		if id := a.cfg.StageMap[stage]; !slices.Contains(p.stages, id) {
			out = append(out, MissingPiece{Kind: "stage", Name: id, Setting: "stage_map[" + stage + "]",
				Message: fmt.Sprintf("ActiveCampaign deal pipeline %q has no stage %q (stage_map[%s])", a.cfg.Pipeline, id, stage)})
		}
	}
	return out, nil
}

// CreateSetupFields creates the missing loop-breaker pair and, in field mode, a missing stage field named
// by perstag or title, as text fields on every list. It returns the names it created.
func (a *activeCampaign) CreateSetupFields(ctx context.Context) ([]string, error) {
	missing, err := a.MissingSetup(ctx)
	if err != nil {
		return nil, err
	}
	created, err := createMissing(ctx, missing, a.createTextField)
	a.forgetFields()
	return created, err
}

// createTextField creates one text custom field visible on all lists (POST /fields, then POST /fieldRels
// with relid 0).
func (a *activeCampaign) createTextField(ctx context.Context, name string) error {
	in := map[string]any{"field": map[string]any{"type": "text", "title": name, "perstag": strings.ToUpper(name)}}
	var out struct {
		Field struct {
			ID flexString `json:"id"`
		} `json:"field"`
	}
	if _, err := a.api.do(ctx, call{method: http.MethodPost, path: "/fields", in: in, out: &out}, nil); err != nil {
		return err
	}
	rel := map[string]any{"fieldRel": map[string]any{"field": string(out.Field.ID), "relid": 0}}
	_, err := a.api.do(ctx, call{method: http.MethodPost, path: "/fieldRels", in: rel}, nil)
	return err
}

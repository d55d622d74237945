package crm

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"strings"
)

// CheckSetup lists what the configuration names and the HubSpot account lacks, without writing anything:
// contact properties (the loop-breaker pair, the stage field, every mapped property), stage_map values that
// are not options of an enumeration stage property, and in deal mode the pipeline and every mapped
// dealstage. It reads the account afresh. nil when the setup is complete, else a Setup *Error naming each
// missing piece; a failed read (refused credentials, a rate limit) is returned as it is.
func (h *hubSpot) CheckSetup(ctx context.Context) error {
	props, err := h.contactProperties(ctx)
	if err != nil {
		return err
	}
	byName := map[string]hsProperty{}
	for _, p := range props {
		byName[p.Name] = p
	}
	var problems []string
	need := func(name, role string) {
		if _, ok := byName[name]; name != "" && !ok {
			problems = append(problems, fmt.Sprintf("hubspot: no contact property %q (%s)", name, role))
		}
	}
	need(h.cfg.LoopField, "the loop-breaker field")
	need(h.cfg.SyncField, "the sync-timestamp field")
	for _, name := range sortedKeys(h.cfg.FieldMap) {
		need(h.cfg.FieldMap[name], "field_map["+name+"]")
	}
	if h.cfg.StageMode == StageModeField {
		need(h.cfg.StageField, "the stage field")
		if p, ok := byName[h.cfg.StageField]; ok && len(p.Options) > 0 {
			var values []string
			for _, o := range p.Options {
				values = append(values, o.Value)
			}
			for _, stage := range sortedKeys(h.cfg.StageMap) {
				if v := h.cfg.StageMap[stage]; !slices.Contains(values, v) {
					problems = append(problems, fmt.Sprintf("hubspot: %q is not an option of %s (stage_map[%s])", v, h.cfg.StageField, stage))
				}
			}
		}
	}
	if h.cfg.StageMode == StageModeDeal {
		pipes, err := h.dealPipelines(ctx)
		if err != nil {
			return err
		}
		i := slices.IndexFunc(pipes, func(p Pipeline) bool { return p.ID == h.cfg.Pipeline })
		if i < 0 {
			problems = append(problems, fmt.Sprintf("hubspot: no deal pipeline %q (pipeline)", h.cfg.Pipeline))
		} else {
			for _, stage := range sortedKeys(h.cfg.StageMap) {
				id := h.cfg.StageMap[stage]
				if !slices.ContainsFunc(pipes[i].Stages, func(o Option) bool { return o.Value == id }) {
					problems = append(problems, fmt.Sprintf("hubspot: deal pipeline %q has no stage %q (stage_map[%s])", h.cfg.Pipeline, id, stage))
				}
			}
		}
	}
	if len(problems) == 0 {
		return nil
	}
	return &Error{Class: Setup, Message: strings.Join(problems, "; ")}
}

// contactProperties lists the account's contact properties with their options
// (GET /crm/v3/properties/contacts, CollectionResponsePropertyNoPaging).
func (h *hubSpot) contactProperties(ctx context.Context) ([]hsProperty, error) {
	var out struct {
		Results []hsProperty `json:"results"`
	}
	if _, err := h.do(ctx, call{method: http.MethodGet, path: "/crm/v3/properties/contacts", out: &out}, nil); err != nil {
		return nil, err
	}
	return out.Results, nil
}

// dealPipelines lists the deal pipelines with their stages (GET /crm/v3/pipelines/deals).
func (h *hubSpot) dealPipelines(ctx context.Context) ([]Pipeline, error) {
	var out struct {
		Results []struct {
			ID     string `json:"id"`
			Label  string `json:"label"`
			Stages []struct {
				ID           string `json:"id"`
				Label        string `json:"label"`
				DisplayOrder int    `json:"displayOrder"`
			} `json:"stages"`
		} `json:"results"`
	}
	if _, err := h.do(ctx, call{method: http.MethodGet, path: "/crm/v3/pipelines/deals", out: &out}, nil); err != nil {
		return nil, err
	}
	pipes := make([]Pipeline, 0, len(out.Results))
	for _, p := range out.Results {
		pl := Pipeline{ID: p.ID, Label: p.Label}
		for _, s := range p.Stages {
			pl.Stages = append(pl.Stages, Option{Value: s.ID, Label: s.Label, Order: s.DisplayOrder})
		}
		pipes = append(pipes, pl)
	}
	return pipes, nil
}

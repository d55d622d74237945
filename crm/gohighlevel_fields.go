package crm

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"
)

// ghlSetupRecheck is how long a loaded field or pipeline list is trusted when a reference is missing from
// it: after that the location is read again, so a field an operator has just created is found.
const ghlSetupRecheck = 10 * time.Second

type ghlField struct {
	ID       string `json:"id"`
	Name     string `json:"name"`
	FieldKey string `json:"fieldKey"`
	DataType string `json:"dataType"`
}

// multi reports whether the field's values are arrays of strings (CheckboxField / MultiSelectField
// field_value in apps/contacts.json).
func (f ghlField) multi() bool { return f.DataType == "CHECKBOX" || f.DataType == "MULTIPLE_OPTIONS" }

func (f ghlField) numeric() bool { return f.DataType == "NUMERICAL" || f.DataType == "MONETORY" }

// ghlSetup is what the adapter has read of the location's setup: its contact custom fields and pipelines.
type ghlSetup struct {
	fields    map[string]ghlField // reference (id, fieldKey with or without "contact.", name) -> field
	fieldsAt  time.Time
	pipelines map[string][]string // pipeline id -> stage ids
	pipesAt   time.Time
}

// listFields reads the location's contact custom fields: GET /locations/{id}/customFields?model=contact
// (apps/locations.json; without model the answer may include opportunity fields).
func (g *goHighLevel) listFields(ctx context.Context, calls *int) ([]ghlField, error) {
	var out struct {
		CustomFields []ghlField `json:"customFields"`
	}
	path := "/locations/" + pathID(g.cfg.LocationID) + "/customFields"
	q := url.Values{"model": {"contact"}}
	if _, err := g.do(ctx, call{method: http.MethodGet, path: path, query: q, out: &out}, calls); err != nil {
		return nil, err
	}
	return out.CustomFields, nil
}

// ghlFieldIndex indexes a location's fields by every reference a setting may use: id, and name or
// fieldKey with or without "contact." (normalizeFieldRef).
func ghlFieldIndex(fields []ghlField) map[string]ghlField {
	idx := make(map[string]ghlField, 3*len(fields))
	for _, f := range fields {
		idx[normalizeFieldRef(f.Name)] = f
		idx[normalizeFieldRef(f.FieldKey)] = f
		idx[f.ID] = f
	}
	return idx
}

// resolveFields maps custom field references (id, fieldKey with or without "contact.", or name) to the
// location's fields. A reference the location lacks is a Setup fault of the destination: every contact
// would fail the same way.
func (g *goHighLevel) resolveFields(ctx context.Context, refs []string, calls *int) (map[string]ghlField, error) {
	lookup := func(idx map[string]ghlField, ref string) (ghlField, bool) {
		if f, ok := idx[ref]; ok {
			return f, true
		}
		f, ok := idx[normalizeFieldRef(ref)]
		return f, ok
	}
	g.mu.Lock()
	idx, at := g.setup.fields, g.setup.fieldsAt
	g.mu.Unlock()
	missing := idx == nil
	for _, ref := range refs {
		if _, ok := lookup(idx, ref); !ok {
			missing = true
		}
	}
	if missing && (idx == nil || g.cfg.Now().Sub(at) >= ghlSetupRecheck) {
		fields, err := g.listFields(ctx, calls)
		if err != nil {
			return nil, err
		}
		idx = ghlFieldIndex(fields)
		g.mu.Lock()
		g.setup.fields, g.setup.fieldsAt = idx, g.cfg.Now()
		g.mu.Unlock()
	}
	out := map[string]ghlField{}
	for _, ref := range refs {
		f, ok := lookup(idx, ref)
		if !ok {
			return nil, g.missingField(ref)
		}
		out[ref] = f
	}
	return out, nil
}

// missingField says in plain words which setting names a field the location lacks.
func (g *goHighLevel) missingField(ref string) *Error {
	where := "GoHighLevel (Settings > Custom Fields, contact fields)"
	var msg string
	switch ref {
	case g.cfg.LoopField, g.cfg.SyncField:
		msg = fmt.Sprintf("gohighlevel: the loop-breaker field %q does not exist in location %s. %s", ref, g.cfg.LocationID,
			loopInstructions(where, g.cfg.LoopField, g.cfg.SyncField))
	case g.cfg.StageField:
		msg = fmt.Sprintf("gohighlevel: the stage field %q does not exist in location %s: create it in %s or change stage_field",
			ref, g.cfg.LocationID, where)
	default:
		names := []string{}
		for name, to := range g.cfg.FieldMap {
			if to == ref {
				names = append(names, name)
			}
		}
		slices.Sort(names)
		msg = fmt.Sprintf("gohighlevel: the contact field %q (field_map %s) does not exist in location %s: create it in %s or change the mapping",
			ref, strings.Join(names, ", "), g.cfg.LocationID, where)
	}
	return &Error{Class: Setup, Message: msg}
}

// encodeCustom renders a value for customFields[].field_value by the field's type: multi-select and
// checkbox values are arrays of strings (leadgate holds them ";"-joined), numeric ones numbers, the rest
// strings.
func (f ghlField) encodeCustom(v string) any {
	switch {
	case f.multi():
		return splitMulti(v)
	case f.numeric():
		if n, err := strconv.ParseFloat(strings.TrimSpace(v), 64); err == nil {
			return json.Number(strconv.FormatFloat(n, 'f', -1, 64))
		}
	}
	return v
}

// splitMulti reads a ";"-joined multi value as its distinct options, sorted: GHL keeps no order that
// leadgate could rely on, so both sides compare as sets.
func splitMulti(v string) []string {
	set := []string{}
	for _, p := range strings.Split(v, ";") {
		if p = strings.TrimSpace(p); p != "" && !slices.Contains(set, p) {
			set = append(set, p)
		}
	}
	slices.Sort(set)
	return set
}

// pipelineStages checks that the deal-mode pipeline and stage exist in the location (GET
// /opportunities/pipelines?locationId=); a missing one is a Setup fault.
func (g *goHighLevel) checkStage(ctx context.Context, stage string, calls *int) error {
	g.mu.Lock()
	pipes, at := g.setup.pipelines, g.setup.pipesAt
	g.mu.Unlock()
	ok := func() bool { return slices.Contains(pipes[g.cfg.Pipeline], stage) }
	if pipes == nil || (!ok() && g.cfg.Now().Sub(at) >= ghlSetupRecheck) {
		list, err := g.listPipelines(ctx, calls)
		if err != nil {
			return err
		}
		pipes = map[string][]string{}
		for _, p := range list {
			for _, s := range p.Stages {
				pipes[p.ID] = append(pipes[p.ID], s.ID)
			}
			if pipes[p.ID] == nil {
				pipes[p.ID] = []string{}
			}
		}
		g.mu.Lock()
		g.setup.pipelines, g.setup.pipesAt = pipes, g.cfg.Now()
		g.mu.Unlock()
	}
	if _, found := pipes[g.cfg.Pipeline]; !found {
		return &Error{Class: Setup, Message: fmt.Sprintf("gohighlevel: the pipeline %q does not exist in location %s: change the destination's pipeline",
			g.cfg.Pipeline, g.cfg.LocationID)}
	}
	if !ok() {
		return &Error{Class: Setup, Message: fmt.Sprintf("gohighlevel: the pipeline stage %q (stage_map) is not a stage of pipeline %q: change stage_map",
			stage, g.cfg.Pipeline)}
	}
	return nil
}

type ghlPipeline struct {
	ID     string             `json:"id"`
	Name   string             `json:"name"`
	Stages []ghlPipelineStage `json:"stages"`
}

type ghlPipelineStage struct {
	ID       string `json:"id"`
	Name     string `json:"name"`
	Position int    `json:"position"`
}

func (g *goHighLevel) listPipelines(ctx context.Context, calls *int) ([]ghlPipeline, error) {
	var pipes struct {
		Pipelines []ghlPipeline `json:"pipelines"`
	}
	q := url.Values{"locationId": {g.cfg.LocationID}}
	if _, err := g.do(ctx, call{method: http.MethodGet, path: "/opportunities/pipelines", query: q, out: &pipes}, calls); err != nil {
		return nil, err
	}
	return pipes.Pipelines, nil
}

// Discover lists the location's contact custom fields and opportunity pipelines and checks the
// loop-breaker fields.
func (g *goHighLevel) Discover(ctx context.Context) (Discovery, error) {
	var d Discovery
	fields, err := g.listFields(ctx, nil)
	if err != nil {
		return d, err
	}
	for _, f := range fields {
		d.Fields = append(d.Fields, RemoteField{ID: f.ID, Key: f.FieldKey, Label: f.Name, Type: f.DataType})
	}
	idx := ghlFieldIndex(fields)
	have := func(ref string) bool { _, ok := idx[normalizeFieldRef(ref)]; return ok }
	pipes, err := g.listPipelines(ctx, nil)
	if err != nil {
		return d, err
	}
	for _, p := range pipes {
		pl := Pipeline{ID: p.ID, Label: p.Name}
		for _, s := range p.Stages {
			pl.Stages = append(pl.Stages, Option{Value: s.ID, Label: s.Name, Order: s.Position})
		}
		d.Pipelines = append(d.Pipelines, pl)
	}
	d.Loop = LoopCheck{
		LoopField: g.cfg.LoopField, LoopFieldFound: have(g.cfg.LoopField),
		SyncField: g.cfg.SyncField, SyncFieldFound: have(g.cfg.SyncField),
		CanCreate: true,
	}
	if !d.Loop.LoopFieldFound || !d.Loop.SyncFieldFound {
		d.Loop.Instructions = loopInstructions("GoHighLevel (Settings > Custom Fields, contact fields)", g.cfg.LoopField, g.cfg.SyncField)
	}
	return d, nil
}

// CreateLoopFields creates the missing loop-breaker fields as text custom fields of the location's
// contacts (createTextField).
func (g *goHighLevel) CreateLoopFields(ctx context.Context) error {
	d, err := g.Discover(ctx)
	if err != nil {
		return err
	}
	var errs []error
	for _, f := range []struct {
		name  string
		found bool
	}{{g.cfg.LoopField, d.Loop.LoopFieldFound}, {g.cfg.SyncField, d.Loop.SyncFieldFound}} {
		if f.found {
			continue
		}
		if err := g.createTextField(ctx, f.name); err != nil {
			errs = append(errs, err)
		}
	}
	g.mu.Lock()
	g.setup.fields = nil
	g.mu.Unlock()
	return errors.Join(errs...)
}

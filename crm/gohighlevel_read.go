package crm

import (
	"cmp"
	"context"
	"errors"
	"net/http"
	"net/url"
	"strings"
	"time"
)

type ghlContact struct {
	ID           string           `json:"id"`
	Email        string           `json:"email"`
	Phone        string           `json:"phone"`
	FirstName    string           `json:"firstName"`
	LastName     string           `json:"lastName"`
	CompanyName  string           `json:"companyName"`
	CustomFields *[]ghlCustomRead `json:"customFields"`
}

type ghlCustomRead struct {
	ID    string `json:"id"`
	Value any    `json:"value"`
}

// ghlRemote is what GHL holds for one contact, keyed like Contact.Previous.
type ghlRemote struct {
	id     string
	values map[string]string
}

// find reads the contact by remote id, else looks it up by email, then phone, with the duplicate search
// (which applies the location's duplicate rules); candidates are compared exactly here.
func (g *goHighLevel) find(ctx context.Context, c Contact, ids map[string]string, calls *int) (ghlRemote, error) {
	if c.RemoteID != "" {
		return g.get(ctx, c.RemoteID, ids, calls)
	}
	var hit *ghlContact
	if c.Email != "" {
		found, err := g.duplicate(ctx, url.Values{"email": {c.Email}}, calls)
		if err != nil {
			return ghlRemote{}, err
		}
		if found != nil && strings.EqualFold(strings.TrimSpace(found.Email), c.Email) {
			hit = found
		}
	}
	if hit == nil && c.Phone != "" {
		found, err := g.duplicate(ctx, url.Values{"number": {c.Phone}}, calls)
		if err != nil {
			return ghlRemote{}, err
		}
		if found != nil && samePhone(found.Phone, c.Phone) &&
			(c.Email == "" || found.Email == "" || strings.EqualFold(found.Email, c.Email)) {
			hit = found
		}
	}
	switch {
	case hit == nil:
		return ghlRemote{}, nil
	case hit.CustomFields == nil:
		return g.get(ctx, hit.ID, ids, calls) // the search answer lacks custom fields: read the record
	default:
		return g.remote(*hit, ids), nil
	}
}

func (g *goHighLevel) duplicate(ctx context.Context, q url.Values, calls *int) (*ghlContact, error) {
	q.Set("locationId", g.cfg.LocationID)
	var out struct {
		Contact *ghlContact `json:"contact"`
	}
	if _, err := g.api.do(ctx, call{method: http.MethodGet, path: "/contacts/search/duplicate", query: q, out: &out}, calls); err != nil {
		return nil, err
	}
	if out.Contact == nil || out.Contact.ID == "" {
		return nil, nil
	}
	return out.Contact, nil
}

func (g *goHighLevel) get(ctx context.Context, id string, ids map[string]string, calls *int) (ghlRemote, error) {
	var out struct {
		Contact ghlContact `json:"contact"`
	}
	if _, err := g.api.do(ctx, call{method: http.MethodGet, path: "/contacts/" + pathID(id), out: &out}, calls); err != nil {
		return ghlRemote{}, err
	}
	out.Contact.ID = cmp.Or(out.Contact.ID, id)
	return g.remote(out.Contact, ids), nil
}

func (g *goHighLevel) remote(c ghlContact, ids map[string]string) ghlRemote {
	r := ghlRemote{id: c.ID, values: map[string]string{
		"email": c.Email, "phone": c.Phone, "firstName": c.FirstName, "lastName": c.LastName, "companyName": c.CompanyName,
	}}
	byID := map[string][]string{}
	for ref, id := range ids {
		byID[id] = append(byID[id], ref)
	}
	if c.CustomFields != nil {
		for _, f := range *c.CustomFields {
			for _, ref := range byID[f.ID] {
				r.values[ref] = GHLCustomValue(f.Value)
			}
		}
	}
	return r
}

// GHLCustomValue renders a GoHighLevel custom field value as leadgate writes and compares it: multi-select
// values (string arrays) joined by ";", numbers as JSON numbers, absent as "". The importer and drift
// check read values through it too, so every reader agrees with the adapter.
func GHLCustomValue(v any) string {
	switch x := v.(type) {
	case nil:
		return ""
	case string:
		return x
	case []any:
		parts := make([]string, len(x))
		for i, p := range x {
			parts[i] = GHLCustomValue(p)
		}
		return strings.Join(parts, ";")
	default:
		b, _ := jsonMarshal(x)
		return string(b)
	}
}

type ghlField struct {
	ID       string `json:"id"`
	Name     string `json:"name"`
	FieldKey string `json:"fieldKey"`
	DataType string `json:"dataType"`
}

func (g *goHighLevel) listFields(ctx context.Context, calls *int) ([]ghlField, error) {
	var out struct {
		CustomFields []ghlField `json:"customFields"`
	}
	path := "/locations/" + pathID(g.cfg.LocationID) + "/customFields"
	if _, err := g.api.do(ctx, call{method: http.MethodGet, path: path, out: &out}, calls); err != nil {
		return nil, err
	}
	return out.CustomFields, nil
}

// resolveFields maps custom field references (id, fieldKey with or without "contact.", or name) to ids,
// loading the location's fields once.
func (g *goHighLevel) resolveFields(ctx context.Context, refs []string, calls *int) (map[string]string, error) {
	g.mu.Lock()
	idx := g.fieldIDs
	g.mu.Unlock()
	if idx == nil {
		fields, err := g.listFields(ctx, calls)
		if err != nil {
			return nil, err
		}
		idx = map[string]string{}
		for _, f := range fields {
			idx[normalizeFieldRef(f.Name)] = f.ID
			idx[normalizeFieldRef(f.FieldKey)] = f.ID
			idx[f.ID] = f.ID
		}
		g.mu.Lock()
		g.fieldIDs = idx
		g.mu.Unlock()
	}
	ids := map[string]string{}
	for _, ref := range refs {
		id, ok := idx[ref]
		if !ok {
			id, ok = idx[normalizeFieldRef(ref)]
		}
		if !ok {
			if ref == g.cfg.LoopField || ref == g.cfg.SyncField {
				return nil, invalidf("gohighlevel: loop-breaker field %q does not exist: %s", ref,
					loopInstructions("GoHighLevel (Settings > Custom Fields, contact fields)", g.cfg.LoopField, g.cfg.SyncField))
			}
			return nil, invalidf("gohighlevel: custom field %q does not exist in location %s", ref, g.cfg.LocationID)
		}
		ids[ref] = id
	}
	return ids, nil
}

type ghlOpportunity struct {
	ID              string `json:"id"`
	PipelineID      string `json:"pipelineId"`
	PipelineStageID string `json:"pipelineStageId"`
	CreatedAt       string `json:"createdAt"`
}

// GHLOlderOpportunity reports whether opportunity a was created before b. GoHighLevel's opportunity ids
// are not time-ordered, so the contact's first opportunity is found by createdAt (SearchOpportunitiesResponseSchema);
// the id only breaks a tie or stands in for a missing time. The adapter and the importer both use it.
func GHLOlderOpportunity(aCreated time.Time, aID string, bCreated time.Time, bID string) bool {
	if !aCreated.IsZero() && !bCreated.IsZero() && !aCreated.Equal(bCreated) {
		return aCreated.Before(bCreated)
	}
	if aCreated.IsZero() != bCreated.IsZero() {
		return !aCreated.IsZero() // a known time sorts before an unknown one
	}
	return aID < bID
}

func (o ghlOpportunity) created() time.Time {
	t, _ := time.Parse(time.RFC3339, o.CreatedAt)
	return t
}

// planOpportunity finds the contact's opportunity in the pipeline and plans its stage (deal mode).
func (g *goHighLevel) planOpportunity(ctx context.Context, contactID string, c Contact, calls *int) (dealStep, error) {
	target, err := g.cfg.remoteStage(c.Stage)
	if err != nil {
		return dealStep{}, err
	}
	var opp *ghlOpportunity
	if id := c.Previous[PrevDealID]; id != "" {
		var out struct {
			Opportunity ghlOpportunity `json:"opportunity"`
		}
		_, err := g.api.do(ctx, call{method: http.MethodGet, path: "/opportunities/" + pathID(id), out: &out}, calls)
		switch {
		case err == nil:
			opp = &out.Opportunity
		case ClassOf(err) != NotFound:
			return dealStep{}, err
		}
	}
	if opp == nil {
		// status=all: every opportunity of the contact counts (the filter has no documented default).
		q := url.Values{"location_id": {g.cfg.LocationID}, "contact_id": {contactID}, "pipeline_id": {g.cfg.Pipeline},
			"status": {"all"}, "limit": {"100"}}
		var out struct {
			Opportunities []ghlOpportunity `json:"opportunities"`
		}
		if _, err := g.api.do(ctx, call{method: http.MethodGet, path: "/opportunities/search", query: q, out: &out}, calls); err != nil {
			return dealStep{}, err
		}
		for i, o := range out.Opportunities {
			if o.PipelineID == g.cfg.Pipeline && (opp == nil || GHLOlderOpportunity(o.created(), o.ID, opp.created(), opp.ID)) {
				opp = &out.Opportunities[i]
			}
		}
	}
	if opp == nil {
		return dealStep{create: true}, nil
	}
	return decideDeal(opp.ID, opp.PipelineStageID, target, c.Previous[PrevDealStage]), nil
}

// applyOpportunity creates or moves the opportunity as planned and records it in written.
func (g *goHighLevel) applyOpportunity(ctx context.Context, contactID string, c Contact, d dealStep, written map[string]string, calls *int) error {
	target, err := g.cfg.remoteStage(c.Stage)
	if err != nil {
		return err
	}
	switch {
	case d.create:
		name := cmp.Or(strings.TrimSpace(c.FirstName+" "+c.LastName), c.Email, c.Phone)
		in := map[string]any{"pipelineId": g.cfg.Pipeline, "locationId": g.cfg.LocationID, "name": name,
			"status": "open", "contactId": contactID, "pipelineStageId": target}
		var out struct {
			Opportunity ghlOpportunity `json:"opportunity"`
		}
		if _, err := g.api.do(ctx, call{method: http.MethodPost, path: "/opportunities/", in: in, out: &out}, calls); err != nil {
			return err
		}
		written[PrevDealID], written[PrevDealStage] = out.Opportunity.ID, target
	case d.move != "":
		in := map[string]any{"pipelineId": g.cfg.Pipeline, "pipelineStageId": d.move}
		if _, err := g.api.do(ctx, call{method: http.MethodPut, path: "/opportunities/" + pathID(d.id), in: in}, calls); err != nil {
			return err
		}
		written[PrevDealID], written[PrevDealStage] = d.id, d.move
	default:
		written[PrevDealID] = d.id
		if d.current == target {
			written[PrevDealStage] = target
		}
	}
	return nil
}

// Discover lists the location's custom fields and opportunity pipelines and checks the loop-breaker fields.
func (g *goHighLevel) Discover(ctx context.Context) (Discovery, error) {
	var d Discovery
	fields, err := g.listFields(ctx, nil)
	if err != nil {
		return d, err
	}
	have := map[string]bool{}
	for _, f := range fields {
		d.Fields = append(d.Fields, RemoteField{ID: f.ID, Key: f.FieldKey, Label: f.Name, Type: f.DataType})
		have[normalizeFieldRef(f.Name)], have[normalizeFieldRef(f.FieldKey)], have[f.ID] = true, true, true
	}
	var pipes struct {
		Pipelines []struct {
			ID     string `json:"id"`
			Name   string `json:"name"`
			Stages []struct {
				ID       string `json:"id"`
				Name     string `json:"name"`
				Position int    `json:"position"`
			} `json:"stages"`
		} `json:"pipelines"`
	}
	q := url.Values{"locationId": {g.cfg.LocationID}}
	if _, err := g.api.do(ctx, call{method: http.MethodGet, path: "/opportunities/pipelines", query: q, out: &pipes}, nil); err != nil {
		return d, err
	}
	for _, p := range pipes.Pipelines {
		pl := Pipeline{ID: p.ID, Label: p.Name}
		for _, s := range p.Stages {
			pl.Stages = append(pl.Stages, Option{Value: s.ID, Label: s.Name, Order: s.Position})
		}
		d.Pipelines = append(d.Pipelines, pl)
	}
	d.Loop = LoopCheck{
		LoopField: g.cfg.LoopField, LoopFieldFound: have[normalizeFieldRef(g.cfg.LoopField)],
		SyncField: g.cfg.SyncField, SyncFieldFound: have[normalizeFieldRef(g.cfg.SyncField)],
		CanCreate: true,
	}
	if !d.Loop.LoopFieldFound || !d.Loop.SyncFieldFound {
		d.Loop.Instructions = loopInstructions("GoHighLevel (Settings > Custom Fields, contact fields)", g.cfg.LoopField, g.cfg.SyncField)
	}
	return d, nil
}

// CreateLoopFields creates the missing loop-breaker fields as text custom fields of the location.
func (g *goHighLevel) CreateLoopFields(ctx context.Context) error {
	d, err := g.Discover(ctx)
	if err != nil {
		return err
	}
	var errs []error
	for name, found := range map[string]bool{g.cfg.LoopField: d.Loop.LoopFieldFound, g.cfg.SyncField: d.Loop.SyncFieldFound} {
		if found {
			continue
		}
		in := map[string]any{"name": name, "dataType": "TEXT"}
		path := "/locations/" + pathID(g.cfg.LocationID) + "/customFields"
		if _, err := g.api.do(ctx, call{method: http.MethodPost, path: path, in: in}, nil); err != nil {
			errs = append(errs, err)
		}
	}
	g.mu.Lock()
	g.fieldIDs = nil
	g.mu.Unlock()
	return errors.Join(errs...)
}

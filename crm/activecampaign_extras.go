package crm

import (
	"cmp"
	"context"
	"errors"
	"net/http"
	"net/url"
	"strings"
)

// dealStep is the deal-mode action planned for one existing contact.
type dealStep struct {
	create   bool   // no deal in the pipeline yet
	id       string // the contact's deal in the pipeline
	current  string // its current stage id
	move     string // stage id to move it to ("" = leave it)
	conflict *FieldConflict
}

func (d dealStep) moves() bool { return d.create || d.move != "" }

// dealStageField names the deal stage in FieldConflict.
const dealStageField = "deal.stage"

type acDeal struct {
	ID    flexString `json:"id"`
	Group flexString `json:"group"`
	Stage flexString `json:"stage"`
}

// planDeal finds the contact's deal in the configured pipeline (by the id we stored, else by listing the
// contact's deals) and decides whether to create it or move its stage. A stage changed by someone else
// since our last move is a conflict and is left alone.
func (a *activeCampaign) planDeal(ctx context.Context, contactID string, c Contact, calls *int) (dealStep, error) {
	target, err := a.cfg.remoteStage(c.Stage)
	if err != nil {
		return dealStep{}, err
	}
	var deal *acDeal
	if id := c.Previous[PrevDealID]; id != "" {
		var out struct {
			Deal acDeal `json:"deal"`
		}
		_, err := a.api.do(ctx, call{method: http.MethodGet, path: "/deals/" + pathID(id), out: &out}, calls)
		switch {
		case err == nil:
			deal = &out.Deal
		case ClassOf(err) != NotFound:
			return dealStep{}, err
		}
	}
	if deal == nil {
		var out struct {
			Deals []acDeal `json:"deals"`
		}
		if _, err := a.api.do(ctx, call{method: http.MethodGet, path: "/contacts/" + pathID(contactID) + "/deals", out: &out}, calls); err != nil {
			return dealStep{}, err
		}
		for i, d := range out.Deals {
			if string(d.Group) == a.cfg.Pipeline && (deal == nil || lessID(string(d.ID), string(deal.ID))) {
				deal = &out.Deals[i]
			}
		}
	}
	if deal == nil {
		return dealStep{create: true}, nil
	}
	return decideDeal(string(deal.ID), string(deal.Stage), target, c.Previous[PrevDealStage]), nil
}

// decideDeal plans an existing deal: leave it at the target, move it there, or, when its stage changed
// since leadgate last set it (prevStage), leave it and report a conflict.
func decideDeal(id, current, target, prevStage string) dealStep {
	step := dealStep{id: id, current: current}
	switch {
	case current == target:
	case prevStage != "" && current != prevStage:
		step.conflict = &FieldConflict{Field: dealStageField, OurLast: prevStage, Remote: current}
	default:
		step.move = target
	}
	return step
}

// applyDeal creates or moves the deal as planned and records it in written.
func (a *activeCampaign) applyDeal(ctx context.Context, contactID string, c Contact, d dealStep, written map[string]string, calls *int) error {
	target, err := a.cfg.remoteStage(c.Stage)
	if err != nil {
		return err
	}
	switch {
	case d.create:
		title := strings.TrimSpace(c.FirstName + " " + c.LastName)
		if title == "" {
			title = cmp.Or(c.Email, c.Phone)
		}
		in := map[string]any{"deal": map[string]any{
			"title": title, "contact": contactID, "value": 0, "currency": "usd",
			"group": a.cfg.Pipeline, "stage": target, "status": 0,
		}}
		var out struct {
			Deal acDeal `json:"deal"`
		}
		if _, err := a.api.do(ctx, call{method: http.MethodPost, path: "/deals", in: in, out: &out}, calls); err != nil {
			return err
		}
		written[PrevDealID], written[PrevDealStage] = string(out.Deal.ID), target
	case d.move != "":
		in := map[string]any{"deal": map[string]any{"stage": d.move}}
		if _, err := a.api.do(ctx, call{method: http.MethodPut, path: "/deals/" + pathID(d.id), in: in}, calls); err != nil {
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

// applyTags attaches the tags leadgate has not applied before. AC tags are additive here: removing one
// needs the contactTag id (an extra read per tag), and a tag a human added must never be removed.
func (a *activeCampaign) applyTags(ctx context.Context, contactID string, c Contact, written map[string]string, calls *int) error {
	add, _, joined := tagChanges(c.Tags, c.Previous)
	for _, name := range add {
		tagID, err := a.tagID(ctx, name, calls)
		if err != nil {
			return err
		}
		in := map[string]any{"contactTag": map[string]any{"contact": contactID, "tag": tagID}}
		if _, err := a.api.do(ctx, call{method: http.MethodPost, path: "/contactTags", in: in}, calls); err != nil {
			return err
		}
	}
	if joined != "" || written[PrevTags] != "" {
		written[PrevTags] = joined
	}
	return nil
}

// tagID finds a tag by exact name or creates it; ids are cached. The lookup uses the documented exact
// filter (filters[search][eq]): a "contains" search returns a page of near names, and an account with
// more than a page of them (sql-1, sql-2, …) would hide the exact one and get a second tag of that name.
func (a *activeCampaign) tagID(ctx context.Context, name string, calls *int) (string, error) {
	a.mu.Lock()
	id, ok := a.tagIDs[name]
	a.mu.Unlock()
	if ok {
		return id, nil
	}
	var found struct {
		Tags []struct {
			ID  flexString `json:"id"`
			Tag string     `json:"tag"`
		} `json:"tags"`
	}
	q := url.Values{"filters[search][eq]": {name}, "limit": {"100"}}
	if _, err := a.api.do(ctx, call{method: http.MethodGet, path: "/tags", query: q, out: &found}, calls); err != nil {
		return "", err
	}
	for _, t := range found.Tags {
		if t.Tag == name {
			id = string(t.ID)
		}
	}
	if id == "" {
		in := map[string]any{"tag": map[string]any{"tag": name, "tagType": "contact", "description": ""}}
		var out struct {
			Tag struct {
				ID flexString `json:"id"`
			} `json:"tag"`
		}
		if _, err := a.api.do(ctx, call{method: http.MethodPost, path: "/tags", in: in, out: &out}, calls); err != nil {
			return "", err
		}
		id = string(out.Tag.ID)
	}
	if id == "" {
		return "", &Error{Class: Transient, Message: "activecampaign: tag " + name + ": no id in response"}
	}
	a.mu.Lock()
	a.tagIDs[name] = id
	a.mu.Unlock()
	return id, nil
}

// addNote appends the submission summary to the contact.
func (a *activeCampaign) addNote(ctx context.Context, contactID, note string, calls *int) error {
	in := map[string]any{"note": map[string]any{"note": note, "relid": contactID, "reltype": "Subscriber"}}
	_, err := a.api.do(ctx, call{method: http.MethodPost, path: "/notes", in: in}, calls)
	return err
}

// Discover lists custom fields, deal pipelines with their stages, and checks the loop-breaker fields.
func (a *activeCampaign) Discover(ctx context.Context) (Discovery, error) {
	var d Discovery
	fields, err := a.listFields(ctx, nil)
	if err != nil {
		return d, err
	}
	for _, f := range fields {
		d.Fields = append(d.Fields, RemoteField{ID: string(f.ID), Key: f.Perstag, Label: f.Title, Type: f.Type})
	}
	var groups struct {
		DealGroups []struct {
			ID    flexString `json:"id"`
			Title string     `json:"title"`
		} `json:"dealGroups"`
	}
	if _, err := a.api.do(ctx, call{method: http.MethodGet, path: "/dealGroups", query: url.Values{"limit": {"100"}}, out: &groups}, nil); err != nil {
		return d, err
	}
	var stages struct {
		DealStages []struct {
			ID    flexString `json:"id"`
			Title string     `json:"title"`
			Group flexString `json:"group"`
			Order flexString `json:"order"`
		} `json:"dealStages"`
	}
	if _, err := a.api.do(ctx, call{method: http.MethodGet, path: "/dealStages", query: url.Values{"limit": {"100"}}, out: &stages}, nil); err != nil {
		return d, err
	}
	for _, g := range groups.DealGroups {
		p := Pipeline{ID: string(g.ID), Label: g.Title}
		for _, s := range stages.DealStages {
			if s.Group == g.ID {
				p.Stages = append(p.Stages, Option{Value: string(s.ID), Label: s.Title, Order: atoiOr(string(s.Order), 0)})
			}
		}
		d.Pipelines = append(d.Pipelines, p)
	}
	idx := map[string]bool{}
	for _, f := range fields {
		idx[fieldKey(f.Perstag)], idx[fieldKey(f.Title)], idx[string(f.ID)] = true, true, true
	}
	d.Loop = LoopCheck{
		LoopField: a.cfg.LoopField, LoopFieldFound: idx[fieldKey(a.cfg.LoopField)],
		SyncField: a.cfg.SyncField, SyncFieldFound: idx[fieldKey(a.cfg.SyncField)],
		CanCreate: true,
	}
	if !d.Loop.LoopFieldFound || !d.Loop.SyncFieldFound {
		d.Loop.Instructions = loopInstructions("ActiveCampaign (Contacts > Fields)", a.cfg.LoopField, a.cfg.SyncField)
	}
	return d, nil
}

// CreateLoopFields creates the missing loop-breaker fields as text fields visible on all lists.
func (a *activeCampaign) CreateLoopFields(ctx context.Context) error {
	a.forgetFields()
	known, err := a.fieldIndex(ctx, nil)
	if err != nil {
		return err
	}
	var errs []error
	for _, name := range []string{a.cfg.LoopField, a.cfg.SyncField} {
		if _, ok := known[fieldKey(name)]; ok {
			continue
		}
		in := map[string]any{"field": map[string]any{"type": "text", "title": name, "perstag": strings.ToUpper(name)}}
		var out struct {
			Field struct {
				ID flexString `json:"id"`
			} `json:"field"`
		}
		if _, err := a.api.do(ctx, call{method: http.MethodPost, path: "/fields", in: in, out: &out}, nil); err != nil {
			errs = append(errs, err)
			continue
		}
		rel := map[string]any{"fieldRel": map[string]any{"field": string(out.Field.ID), "relid": 0}}
		if _, err := a.api.do(ctx, call{method: http.MethodPost, path: "/fieldRels", in: rel}, nil); err != nil {
			errs = append(errs, err)
		}
	}
	a.forgetFields()
	return errors.Join(errs...)
}

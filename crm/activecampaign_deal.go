package crm

import (
	"cmp"
	"context"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
)

// Deal mode: the contact's deal in Config.Pipeline carries the stage (reference/create-a-deal-new,
// reference/update-a-deal-new, reference/retrieve-a-pipeline, reference/list-all-deal-stages).

type acDeal struct {
	ID    flexString `json:"id"`
	Group flexString `json:"group"`
	Stage flexString `json:"stage"`
}

// acPipeline is what a deal created in the configured pipeline needs, read once per adapter: the
// pipeline's currency (a deal's currency is required), its stages, and the owner to name when the
// pipeline does not auto-assign one ("" when it does).
type acPipeline struct {
	currency string
	stages   []string
	owner    string
}

// pipeline reads the configured pipeline (GET /dealGroups/{id}, its stages, and GET /users/me when its
// auto-assign option is off and no DealOwner is set). A pipeline the account lacks is a Setup fault.
func (a *activeCampaign) pipeline(ctx context.Context, calls *int) (acPipeline, error) {
	a.mu.Lock()
	p := a.pipe
	a.mu.Unlock()
	if p != nil {
		return *p, nil
	}
	var g struct {
		DealGroup struct {
			Currency   string     `json:"currency"`
			AutoAssign flexString `json:"autoassign"`
		} `json:"dealGroup"`
	}
	if _, err := a.api.do(ctx, call{method: http.MethodGet, path: "/dealGroups/" + pathID(a.cfg.Pipeline), out: &g}, calls); err != nil {
		if ClassOf(err) == NotFound {
			return acPipeline{}, &Error{Class: Setup, Message: fmt.Sprintf("activecampaign: the account has no deal "+
				"pipeline %q (pipeline): pick one listed by Discover", a.cfg.Pipeline)}
		}
		return acPipeline{}, err
	}
	type stage struct {
		ID flexString `json:"id"`
	}
	stages, err := acListAll[stage](ctx, a.api, "/dealStages", url.Values{"filters[d_groupid]": {a.cfg.Pipeline}}, "dealStages", calls)
	if err != nil {
		return acPipeline{}, err
	}
	out := acPipeline{currency: strings.ToLower(cmp.Or(g.DealGroup.Currency, "usd"))}
	for _, s := range stages {
		out.stages = append(out.stages, string(s.ID))
	}
	if string(g.DealGroup.AutoAssign) == "0" {
		if out.owner = a.cfg.DealOwner; out.owner == "" {
			var me struct {
				User struct {
					ID flexString `json:"id"`
				} `json:"user"`
			}
			if _, err := a.api.do(ctx, call{method: http.MethodGet, path: "/users/me", out: &me}, calls); err != nil {
				return acPipeline{}, err
			}
			out.owner = string(me.User.ID)
		}
	}
	a.mu.Lock()
	a.pipe = &out
	a.mu.Unlock()
	return out, nil
}

// targetStage maps the contact's stage to a deal stage of the pipeline; a mapped stage the pipeline lacks
// is a Setup fault.
func (a *activeCampaign) targetStage(ctx context.Context, stage string, calls *int) (string, error) {
	target, err := a.cfg.remoteStage(stage)
	if err != nil {
		return "", err
	}
	p, err := a.pipeline(ctx, calls)
	if err != nil {
		return "", err
	}
	if !slices.Contains(p.stages, target) {
		a.mu.Lock()
		a.pipe = nil // read again next time: the stage may be added
		a.mu.Unlock()
		return "", &Error{Class: Setup, Message: fmt.Sprintf("activecampaign: deal pipeline %q has no stage %q "+
			"(stage_map[%s]): fix the stage map or add the stage", a.cfg.Pipeline, target, stage)}
	}
	return target, nil
}

// planDeal finds the contact's deal in the configured pipeline (by the id we stored, else by listing the
// contact's deals, every page) and decides whether to create it or move its stage. A stage changed by
// someone else since our last move is a conflict and is left alone.
func (a *activeCampaign) planDeal(ctx context.Context, contactID string, c Contact, calls *int) (dealStep, error) {
	target, err := a.targetStage(ctx, c.Stage, calls)
	if err != nil {
		return dealStep{}, err
	}
	byID := func(id string) (*remoteDeal, error) {
		var out struct {
			Deal acDeal `json:"deal"`
		}
		if _, err := a.api.do(ctx, call{method: http.MethodGet, path: "/deals/" + pathID(id), out: &out}, calls); err != nil {
			return nil, err
		}
		return &remoteDeal{id: string(out.Deal.ID), stage: string(out.Deal.Stage)}, nil
	}
	oldest := func() (*remoteDeal, error) {
		d, err := a.contactDeal(ctx, contactID, calls)
		if d == nil || err != nil {
			return nil, err
		}
		return &remoteDeal{id: string(d.ID), stage: string(d.Stage)}, nil
	}
	return planDealStep(c.Previous, target, byID, oldest)
}

// contactDeal is the contact's oldest deal in the configured pipeline, or nil.
func (a *activeCampaign) contactDeal(ctx context.Context, contactID string, calls *int) (*acDeal, error) {
	deals, err := acListAll[acDeal](ctx, a.api, "/contacts/"+pathID(contactID)+"/deals", nil, "deals", calls)
	if err != nil {
		return nil, err
	}
	var deal *acDeal
	for i, d := range deals {
		if string(d.Group) == a.cfg.Pipeline && (deal == nil || lessID(string(d.ID), string(deal.ID))) {
			deal = &deals[i]
		}
	}
	return deal, nil
}

// applyDeal creates or moves the deal as planned and records it in written.
func (a *activeCampaign) applyDeal(ctx context.Context, contactID string, c Contact, d dealStep, written map[string]string, calls *int) error {
	target, err := a.targetStage(ctx, c.Stage, calls)
	if err != nil {
		return err
	}
	var created string
	switch {
	case d.create:
		if created, err = a.createDeal(ctx, contactID, c, target, calls); err != nil {
			return err
		}
	case d.move != "":
		in := map[string]any{"deal": map[string]any{"stage": d.move}}
		if _, err := a.api.do(ctx, call{method: http.MethodPut, path: "/deals/" + pathID(d.id), in: in}, calls); err != nil {
			return err
		}
	}
	d.record(written, target, created)
	return nil
}

// createDeal creates the contact's deal: title, contact, value 0 (cents), the pipeline's currency, group,
// stage, status open, and an owner where the pipeline does not auto-assign one. An untrusted answer is
// checked by listing the contact's deals first: a deal that landed is not created twice.
func (a *activeCampaign) createDeal(ctx context.Context, contactID string, c Contact, stage string, calls *int) (string, error) {
	p, err := a.pipeline(ctx, calls)
	if err != nil {
		return "", err
	}
	title := strings.TrimSpace(c.FirstName + " " + c.LastName)
	if title == "" {
		title = cmp.Or(c.Email, c.Phone)
	}
	deal := map[string]any{"title": title, "contact": contactID, "value": 0, "currency": p.currency,
		"group": a.cfg.Pipeline, "stage": stage, "status": 0}
	if p.owner != "" {
		deal["owner"] = p.owner
	}
	var out struct {
		Deal acDeal `json:"deal"`
	}
	_, err = a.api.do(ctx, call{method: http.MethodPost, path: "/deals", in: map[string]any{"deal": deal}, out: &out}, calls)
	if untrusted(ctx, err) {
		if d, lerr := a.contactDeal(ctx, contactID, calls); lerr == nil && d != nil {
			return string(d.ID), nil
		}
		return "", err
	}
	if err != nil {
		return "", err
	}
	if out.Deal.ID == "" {
		return "", &Error{Class: Transient, Message: "activecampaign: create deal: response has no deal id"}
	}
	return string(out.Deal.ID), nil
}

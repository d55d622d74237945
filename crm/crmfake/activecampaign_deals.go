package crmfake

import (
	"encoding/json"
	"net/http"
	"regexp"
	"slices"
	"strconv"
	"time"
)

// Deals, pipelines (dealGroups), stages and users as the v3 reference describes them:
// reference/create-a-deal-new, reference/update-a-deal-new, reference/retrieve-a-deal,
// reference/list-all-pipelines, reference/retrieve-a-pipeline, reference/list-all-deal-stages,
// reference/retrieve-logged-in-user.
func (f *ActiveCampaign) routeDeals(mux *http.ServeMux) {
	mux.HandleFunc("GET /api/3/dealGroups", f.listDealGroups)
	mux.HandleFunc("GET /api/3/dealGroups/{id}", f.getDealGroup)
	mux.HandleFunc("GET /api/3/dealStages", f.listDealStages)
	mux.HandleFunc("POST /api/3/deals", f.createDeal)
	mux.HandleFunc("GET /api/3/deals/{id}", f.getDeal)
	mux.HandleFunc("PUT /api/3/deals/{id}", f.updateDeal)
	mux.HandleFunc("GET /api/3/contacts/{id}/deals", f.contactDeals)
	mux.HandleFunc("GET /api/3/users/me", f.usersMe)
}

func (f *ActiveCampaign) pipeline(id string) *ACPipeline {
	for i := range f.acOpts.Pipelines {
		if f.acOpts.Pipelines[i].ID == id {
			return &f.acOpts.Pipelines[i]
		}
	}
	return nil
}

func dealGroupJSON(p ACPipeline) map[string]any {
	auto := 1
	if p.NoAutoAssign {
		auto = 0
	}
	return map[string]any{"id": p.ID, "title": p.Title, "currency": cmpOr(p.Currency, "usd"), "autoassign": strconv.Itoa(auto),
		"allusers": "0", "allgroups": "1"}
}

func (f *ActiveCampaign) listDealGroups(w http.ResponseWriter, r *http.Request) {
	var out []map[string]any
	for _, p := range f.acOpts.Pipelines {
		out = append(out, dealGroupJSON(p))
	}
	acList(w, r, "dealGroups", out)
}

func (f *ActiveCampaign) getDealGroup(w http.ResponseWriter, r *http.Request) {
	p := f.pipeline(r.PathValue("id"))
	if p == nil {
		acNotFound(w, "DealGroup", r.PathValue("id"))
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"dealGroup": dealGroupJSON(*p)})
}

// GET /api/3/dealStages?filters[d_groupid]=, paged like every v3 collection.
func (f *ActiveCampaign) listDealStages(w http.ResponseWriter, r *http.Request) {
	group := r.URL.Query().Get("filters[d_groupid]")
	var out []map[string]any
	for _, p := range f.acOpts.Pipelines {
		for i, s := range p.Stages {
			if group == "" || group == p.ID {
				out = append(out, map[string]any{"id": s.ID, "title": s.Title, "group": p.ID, "order": strconv.Itoa(i + 1)})
			}
		}
	}
	acList(w, r, "dealStages", out)
}

func (f *ActiveCampaign) usersMe(w http.ResponseWriter, r *http.Request) {
	u := f.acOpts.Users[0]
	writeJSON(w, http.StatusOK, map[string]any{"user": map[string]any{"id": u.ID, "username": u.Username}})
}

// acDealIn is the {"deal":{...}} body; every attribute is kept raw so its type can be checked.
type acDealIn struct {
	Deal *struct {
		Title    json.RawMessage `json:"title"`
		Contact  json.RawMessage `json:"contact"`
		Value    json.RawMessage `json:"value"`
		Currency json.RawMessage `json:"currency"`
		Group    json.RawMessage `json:"group"`
		Stage    json.RawMessage `json:"stage"`
		Owner    json.RawMessage `json:"owner"`
		Status   json.RawMessage `json:"status"`
	} `json:"deal"`
}

var acCurrency = regexp.MustCompile(`^[a-z]{3}$`)

// POST /api/3/deals: title, contact, value (cents, an integer ≥ 0) and currency (3-letter ISO, lower case)
// are required; group or stage (the other is derived: the stage's pipeline, or the pipeline's first
// stage); owner is required where the pipeline's auto-assign option is off, and must be a user.
func (f *ActiveCampaign) createDeal(w http.ResponseWriter, r *http.Request) {
	var in acDealIn
	if !decode(w, r, &in, acBad) {
		return
	}
	bad := func(title, pointer string) {
		acError(w, http.StatusUnprocessableEntity, title, "field_invalid", "/data/attributes/"+pointer)
	}
	if in.Deal == nil {
		bad("Missing attribute", "deal")
		return
	}
	d := in.Deal
	f.mu.Lock()
	defer f.mu.Unlock()
	var title, currency string
	var value int64
	contact, _ := jsonID(d.Contact)
	group, hasGroup := jsonID(d.Group)
	stage, hasStage := jsonID(d.Stage)
	switch {
	case json.Unmarshal(d.Title, &title) != nil || title == "":
		bad("Deal title is required", "title")
		return
	case f.contacts[contact] == nil:
		bad("Contact not found", "contact")
		return
	case json.Unmarshal(d.Value, &value) != nil || value < 0:
		bad("Deal value must be an integer of cents, 0 or more", "value")
		return
	case json.Unmarshal(d.Currency, &currency) != nil || !acCurrency.MatchString(currency):
		bad("Deal currency must be a 3-letter lower-case ISO code", "currency")
		return
	case !hasGroup && !hasStage:
		bad("Deal group or stage is required", "group")
		return
	}
	if !hasGroup {
		group = f.groupOfStage(stage)
	}
	p := f.pipeline(group)
	if p == nil || len(p.Stages) == 0 {
		bad("Pipeline not found", "group")
		return
	}
	if !hasStage {
		stage = p.Stages[0].ID
	}
	if !f.stageInGroup(group, stage) {
		bad("Stage is not in the pipeline", "stage")
		return
	}
	owner, hasOwner := jsonID(d.Owner)
	switch {
	case !hasOwner && p.NoAutoAssign:
		bad("Deal owner is required: the pipeline does not auto-assign deals", "owner")
		return
	case hasOwner && !slices.ContainsFunc(f.acOpts.Users, func(u ACUser) bool { return u.ID == owner }):
		bad("Deal owner is not a user", "owner")
		return
	case !hasOwner:
		owner = f.acOpts.Users[0].ID // auto-assigned
	}
	deal := &ACDeal{ID: f.newID(), Title: title, Contact: contact, Group: group, Stage: stage, Owner: owner,
		Currency: currency, Value: value}
	f.deals[deal.ID] = deal
	writeJSON(w, http.StatusCreated, map[string]any{"deal": acDealJSON(deal)})
}

func (f *ActiveCampaign) groupOfStage(stage string) string {
	for _, p := range f.acOpts.Pipelines {
		if slices.ContainsFunc(p.Stages, func(s ACField) bool { return s.ID == stage }) {
			return p.ID
		}
	}
	return ""
}

func (f *ActiveCampaign) stageInGroup(group, stage string) bool {
	p := f.pipeline(group)
	return p != nil && slices.ContainsFunc(p.Stages, func(s ACField) bool { return s.ID == stage })
}

func (f *ActiveCampaign) getDeal(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	defer f.mu.Unlock()
	d := f.deals[r.PathValue("id")]
	if d == nil {
		acNotFound(w, "Deal", r.PathValue("id"))
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"deal": acDealJSON(d)})
}

// PUT /api/3/deals/{id} {"deal":{"stage"}}: a stage must belong to the deal's pipeline.
func (f *ActiveCampaign) updateDeal(w http.ResponseWriter, r *http.Request) {
	var in acDealIn
	if !decode(w, r, &in, acBad) {
		return
	}
	if in.Deal == nil {
		acError(w, http.StatusUnprocessableEntity, "Missing attribute", "field_missing", "/data/attributes/deal")
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	d := f.deals[r.PathValue("id")]
	if d == nil {
		acNotFound(w, "Deal", r.PathValue("id"))
		return
	}
	if len(in.Deal.Stage) > 0 {
		s, ok := jsonID(in.Deal.Stage)
		if !ok || !f.stageInGroup(d.Group, s) {
			acError(w, http.StatusUnprocessableEntity, "Stage is not in the pipeline", "invalid", "/data/attributes/stage")
			return
		}
		d.Stage = s
	}
	writeJSON(w, http.StatusOK, map[string]any{"deal": acDealJSON(d)})
}

// GET /api/3/contacts/{id}/deals, paged.
func (f *ActiveCampaign) contactDeals(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	out := []map[string]any{}
	for _, id := range sortedKeys(f.deals) {
		if d := f.deals[id]; d.Contact == r.PathValue("id") {
			out = append(out, acDealJSON(d))
		}
	}
	f.mu.Unlock()
	acList(w, r, "deals", out)
}

func acDealJSON(d *ACDeal) map[string]any {
	return map[string]any{"id": d.ID, "title": d.Title, "contact": d.Contact, "group": d.Group, "stage": d.Stage,
		"owner": d.Owner, "currency": d.Currency, "value": strconv.FormatInt(d.Value, 10),
		"status": "0", "mdate": time.Now().Format(time.RFC3339)}
}

package crmfake

import (
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"time"
)

// Opportunities and pipelines (apps/opportunities.json).
func (f *GoHighLevel) routeOpportunities(mux *http.ServeMux) {
	mux.HandleFunc("GET /opportunities/pipelines", f.listPipelines)
	mux.HandleFunc("GET /opportunities/search", f.searchOpps)
	mux.HandleFunc("POST /opportunities/", f.createOpp)
	mux.HandleFunc("GET /opportunities/{id}", f.getOpp)
	mux.HandleFunc("PUT /opportunities/{id}", f.updateOpp)
}

// newOppID returns an id that says nothing about creation order, like GHL's (a multiplicative scramble of
// a counter).
func (f *GoHighLevel) newOppID() string {
	f.oppSeq++
	return fmt.Sprintf("op%08x", f.oppSeq*2654435761)
}

// Opportunities returns a snapshot of every opportunity, oldest (createdAt) first.
func (f *GoHighLevel) Opportunities() []GHLOpportunity {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []GHLOpportunity
	for _, id := range sortedKeys(f.opps) {
		out = append(out, *f.opps[id])
	}
	slices.SortStableFunc(out, func(a, b GHLOpportunity) int { return a.CreatedAt.Compare(b.CreatedAt) })
	return out
}

// AddOpportunity stores an opportunity directly (pre-existing data; Status defaults to open, CreatedAt
// to now); it returns its id.
func (f *GoHighLevel) AddOpportunity(o GHLOpportunity) string {
	f.mu.Lock()
	defer f.mu.Unlock()
	o.ID = f.newOppID()
	o.Status = cmpOr(o.Status, "open")
	if o.CreatedAt.IsZero() {
		o.CreatedAt = time.Now()
	}
	o.UpdatedAt = o.CreatedAt
	f.opps[o.ID] = &o
	return o.ID
}

// HumanMoveOpportunity moves an opportunity's stage as a person would.
func (f *GoHighLevel) HumanMoveOpportunity(id, stage string) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	o := f.opps[id]
	if o != nil {
		o.PipelineStageID, o.UpdatedAt = stage, time.Now()
	}
	return o != nil
}

// GET /opportunities/pipelines?locationId= (required): {"pipelines": [{"id","name","stages","locationId"}]}.
func (f *GoHighLevel) listPipelines(w http.ResponseWriter, r *http.Request) {
	if !f.checkLocation(w, r.URL.Query().Get("locationId")) {
		return
	}
	out := []any{}
	for _, p := range f.ghlOpts.Pipelines {
		stages := []any{}
		for i, s := range p.Stages {
			stages = append(stages, map[string]any{"id": s, "name": s, "position": i})
		}
		out = append(out, map[string]any{"id": p.ID, "name": p.Name, "stages": stages, "locationId": f.ghlOpts.LocationID})
	}
	writeJSON(w, http.StatusOK, map[string]any{"pipelines": out})
}

func (f *GoHighLevel) stageInPipeline(pipeline, stage string) bool {
	for _, p := range f.ghlOpts.Pipelines {
		if p.ID == pipeline {
			return slices.Contains(p.Stages, stage)
		}
	}
	return false
}

// ghlOppJSON is SearchOpportunitiesResponseSchema (also the opportunity of GET/POST/PUT answers).
func ghlOppJSON(o *GHLOpportunity) map[string]any {
	return map[string]any{"id": o.ID, "name": o.Name, "contactId": o.ContactID, "pipelineId": o.PipelineID,
		"pipelineStageId": o.PipelineStageID, "status": o.Status,
		"createdAt": o.CreatedAt.UTC().Format(time.RFC3339Nano), "updatedAt": o.UpdatedAt.UTC().Format(time.RFC3339Nano)}
}

// GET /opportunities/search?location_id= (required) &contact_id &pipeline_id &pipeline_stage_id &status
// &page &limit. limit: "will allow maximum up to 100 and default will be 20"; status: open, won, lost,
// abandoned or all, with no documented default: the fake answers open ones only when it is absent, so a
// reader that means every status must say status=all. Results come in id order, which is not creation
// order.
func (f *GoHighLevel) searchOpps(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	if !f.checkLocation(w, q.Get("location_id")) {
		return
	}
	status := cmpOr(q.Get("status"), "open")
	if !slices.Contains(ghlOppStatus, status) {
		ghl422(w, "status must be one of the following values: open, won, lost, abandoned, all")
		return
	}
	limit, page := 20, 1
	if s := q.Get("limit"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 || n > 100 {
			ghl422(w, "limit must not be greater than 100", "limit must not be less than 1")
			return
		}
		limit = n
	}
	if s := q.Get("page"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 {
			ghl422(w, "page must not be less than 1")
			return
		}
		page = n
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	var hits []any
	for _, id := range sortedKeys(f.opps) {
		o := f.opps[id]
		if (q.Get("contact_id") == "" || o.ContactID == q.Get("contact_id")) && (q.Get("pipeline_id") == "" || o.PipelineID == q.Get("pipeline_id")) &&
			(q.Get("pipeline_stage_id") == "" || o.PipelineStageID == q.Get("pipeline_stage_id")) && (status == "all" || o.Status == status) {
			hits = append(hits, ghlOppJSON(o))
		}
	}
	start := min((page-1)*limit, len(hits))
	end := min(start+limit, len(hits))
	meta := map[string]any{"total": len(hits), "currentPage": page, "nextPage": nil, "prevPage": nil}
	if end < len(hits) {
		meta["nextPage"] = page + 1
	}
	if page > 1 {
		meta["prevPage"] = page - 1
	}
	writeJSON(w, http.StatusOK, map[string]any{"opportunities": nonNil(hits[start:end]), "meta": meta})
}

// POST /opportunities/ CreateDto: 201 {"opportunity"}.
func (f *GoHighLevel) createOpp(w http.ResponseWriter, r *http.Request) {
	raw, ok := checkBody(w, r, ghlCreateOppDTO)
	if !ok {
		return
	}
	s := func(k string) string { return deref(optString(raw, k)) }
	if !f.checkLocation(w, s("locationId")) {
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	switch {
	case f.contacts[s("contactId")] == nil:
		ghlNotFound(w, "Contact")
		return
	case s("pipelineStageId") != "" && !f.stageInPipeline(s("pipelineId"), s("pipelineStageId")),
		s("pipelineStageId") == "" && !slices.ContainsFunc(f.ghlOpts.Pipelines, func(p GHLPipeline) bool { return p.ID == s("pipelineId") }):
		ghlBad(w, "Pipeline or pipeline stage not found")
		return
	}
	now := time.Now()
	o := &GHLOpportunity{ID: f.newOppID(), Name: s("name"), ContactID: s("contactId"), PipelineID: s("pipelineId"),
		PipelineStageID: s("pipelineStageId"), Status: s("status"), CreatedAt: now, UpdatedAt: now}
	f.opps[o.ID] = o
	writeJSON(w, http.StatusCreated, map[string]any{"opportunity": ghlOppJSON(o)})
}

func (f *GoHighLevel) getOpp(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	defer f.mu.Unlock()
	o := f.opps[r.PathValue("id")]
	if o == nil {
		ghlNotFound(w, "Opportunity")
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"opportunity": ghlOppJSON(o)})
}

// PUT /opportunities/{id} UpdateOpportunityDto: 200 {"opportunity"}.
func (f *GoHighLevel) updateOpp(w http.ResponseWriter, r *http.Request) {
	raw, ok := checkBody(w, r, ghlUpdateOppDTO)
	if !ok {
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	o := f.opps[r.PathValue("id")]
	if o == nil {
		ghlNotFound(w, "Opportunity")
		return
	}
	pipeline := cmpOr(deref(optString(raw, "pipelineId")), o.PipelineID)
	stage := cmpOr(deref(optString(raw, "pipelineStageId")), o.PipelineStageID)
	if !f.stageInPipeline(pipeline, stage) {
		ghlBad(w, "Pipeline stage not found in the pipeline")
		return
	}
	o.PipelineID, o.PipelineStageID, o.UpdatedAt = pipeline, stage, time.Now()
	if st := optString(raw, "status"); st != nil {
		o.Status = *st
	}
	writeJSON(w, http.StatusOK, map[string]any{"opportunity": ghlOppJSON(o)})
}

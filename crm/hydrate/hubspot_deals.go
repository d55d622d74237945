package hydrate

import (
	"context"
	"encoding/json"
	"strconv"
)

// Keys of RemoteContact.Values for the contact's deal (ActiveCampaign, HubSpot) or opportunity (GoHighLevel) in the
// deal-mode pipeline, as the adapters key them in crm.Result.Written (crm.PrevDealID, crm.PrevDealStage).
const (
	DealID    = "_deal_id"
	DealStage = "_deal_stage"
)

// hsMaxBatch is HubSpot's limit of inputs per batch read.
const hsMaxBatch = 100

// addDeals sets, in deal mode, each contact's deal in the pipeline and its dealstage (DealID, DealStage):
// one v4 association batch read for the page's contacts, then deal batch reads (100 a call) of their
// deals. A contact with several deals in the pipeline gets its oldest (smallest id), the one the adapter
// moves.
func (r *hsReader) addDeals(ctx context.Context, page []RemoteContact) error {
	if r.pipeline == "" || len(page) == 0 {
		return nil
	}
	inputs := make([]map[string]string, len(page))
	for i, c := range page {
		inputs[i] = map[string]string{"id": c.ID}
	}
	// Contacts without deals come back as per-input errors of a 207 and are simply absent.
	var assoc struct {
		Results []struct {
			From struct {
				ID json.Number `json:"id"`
			} `json:"from"`
			To []struct {
				ToObjectID json.Number `json:"toObjectId"`
			} `json:"to"`
		} `json:"results"`
	}
	if err := r.c.send(ctx, "POST", "/crm/v4/associations/contacts/deals/batch/read", nil, map[string]any{"inputs": inputs}, &assoc); err != nil {
		return err
	}
	dealsOf := map[string][]string{}
	var ids []string
	seen := map[string]bool{}
	for _, a := range assoc.Results {
		for _, t := range a.To {
			id := t.ToObjectID.String()
			dealsOf[a.From.ID.String()] = append(dealsOf[a.From.ID.String()], id)
			if !seen[id] {
				seen[id] = true
				ids = append(ids, id)
			}
		}
	}
	stage := map[string]string{} // deal id -> dealstage, deals of the pipeline only
	for start := 0; start < len(ids); start += hsMaxBatch {
		chunk := ids[start:min(start+hsMaxBatch, len(ids))]
		in := make([]map[string]string, len(chunk))
		for i, id := range chunk {
			in[i] = map[string]string{"id": id}
		}
		var out struct {
			Results []hsObject `json:"results"`
		}
		if err := r.c.send(ctx, "POST", "/crm/v3/objects/deals/batch/read", nil,
			map[string]any{"properties": []string{"dealstage", "pipeline"}, "inputs": in}, &out); err != nil {
			return err
		}
		for _, d := range out.Results {
			if d.Properties["pipeline"] == r.pipeline {
				stage[d.ID] = d.Properties["dealstage"]
			}
		}
	}
	for i := range page {
		best := ""
		for _, id := range dealsOf[page[i].ID] {
			if _, ok := stage[id]; ok && (best == "" || lessNumeric(id, best)) {
				best = id
			}
		}
		if best == "" {
			continue
		}
		if page[i].Values == nil {
			page[i].Values = map[string]string{}
		}
		page[i].Values[DealID], page[i].Values[DealStage] = best, stage[best]
	}
	return nil
}

// lessNumeric orders CRM ids numerically when both are numbers.
func lessNumeric(a, b string) bool {
	x, errA := strconv.ParseInt(a, 10, 64)
	y, errB := strconv.ParseInt(b, 10, 64)
	if errA == nil && errB == nil {
		return x < y
	}
	return a < b
}

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

// hsMaxAssocPages bounds the association pages one List follows (a cursor that never ends is a fault).
const hsMaxAssocPages = 1000

// addDeals sets, in deal mode, each contact's deal in the pipeline and its dealstage (DealID, DealStage):
// v4 association batch reads for the page's contacts, following each result's own paging.next.after
// (sent back alongside the contact's id, PublicFetchAssociationsBatchRequest in PublicApiSpecs/CRM/
// Associations/Rollouts/130902/v4/associations.json), then deal batch reads (100 a call) of their deals
// (object type 0-3; BatchReadInputSimplePublicObjectId requires properties and propertiesWithHistory). A
// contact with several deals in the pipeline gets its oldest (smallest id), the one the adapter moves.
func (r *hsReader) addDeals(ctx context.Context, page []RemoteContact) error {
	if r.pipeline == "" || len(page) == 0 {
		return nil
	}
	dealsOf, ids, err := r.dealAssociations(ctx, page)
	if err != nil {
		return err
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
		if err := r.c.send(ctx, "POST", "/crm/v3/objects/0-3/batch/read", nil,
			map[string]any{"properties": []string{"dealstage", "pipeline"}, "propertiesWithHistory": []string{}, "inputs": in}, &out); err != nil {
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

// dealAssociations returns each contact's deal ids and every deal id once. Contacts without deals come
// back as per-input errors of a 207 and are simply absent.
func (r *hsReader) dealAssociations(ctx context.Context, page []RemoteContact) (map[string][]string, []string, error) {
	type input struct {
		ID    string `json:"id"`
		After string `json:"after,omitempty"`
	}
	todo := make([]input, len(page))
	for i, c := range page {
		todo[i] = input{ID: c.ID}
	}
	dealsOf := map[string][]string{}
	var ids []string
	seen := map[string]bool{}
	for pages := 0; len(todo) > 0; pages++ {
		if pages > hsMaxAssocPages {
			return nil, nil, &Error{Provider: r.c.provider, Retry: true, Message: "deal associations: the paging did not end"}
		}
		chunk := todo[:min(hsMaxBatch, len(todo))]
		todo = todo[len(chunk):]
		var assoc struct {
			Results []struct {
				From struct {
					ID json.Number `json:"id"`
				} `json:"from"`
				To []struct {
					ToObjectID json.Number `json:"toObjectId"` // a string in the description; a number is read too
				} `json:"to"`
				Paging *struct {
					Next *struct {
						After string `json:"after"`
					} `json:"next"`
				} `json:"paging"`
			} `json:"results"`
		}
		if err := r.c.send(ctx, "POST", "/crm/v4/associations/contacts/deals/batch/read", nil, map[string]any{"inputs": chunk}, &assoc); err != nil {
			return nil, nil, err
		}
		for _, a := range assoc.Results {
			from := a.From.ID.String()
			for _, t := range a.To {
				id := t.ToObjectID.String()
				dealsOf[from] = append(dealsOf[from], id)
				if !seen[id] {
					seen[id] = true
					ids = append(ids, id)
				}
			}
			if a.Paging != nil && a.Paging.Next != nil && a.Paging.Next.After != "" {
				todo = append(todo, input{ID: from, After: a.Paging.Next.After})
			}
		}
	}
	return dealsOf, ids, nil
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

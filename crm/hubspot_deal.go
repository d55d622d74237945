package crm

import (
	"cmp"
	"context"
	"net/http"
	"strings"
)

// HubSpot deal mode: the contact's first deal in Config.Pipeline carries its stage (the dealstage property).
// A batch costs at most one deal batch read (the deals leadgate created, by id), one v4 association batch
// read plus one deal batch read (contacts whose deal id leadgate does not know yet), one deal batch create
// and one deal batch update, whatever the batch size.

// hsDealToContact is HubSpot's HUBSPOT_DEFINED association type id for deal -> contact.
const hsDealToContact = 3

// hsMaxAssocPages bounds the association pages one batch follows (a cursor that never ends is a fault).
const hsMaxAssocPages = 1000

// hsDeal is the deal-mode state of one contact in a batch.
type hsDeal struct {
	target string    // remote stage id to reach
	found  *hsObject // the contact's deal in the pipeline, when it exists
	step   dealStep
}

// deals creates or moves each contact's deal after the contact writes. Rate-limit and auth failures are
// returned for the whole batch; others fail the contact (its next sync finds the deal again, so a deal
// created before a failure is never duplicated).
func (h *hubSpot) deals(ctx context.Context, items []*hsItem) error {
	if h.cfg.StageMode != StageModeDeal {
		return nil
	}
	var todo []*hsItem
	for _, it := range live(items) {
		if it.c.Stage == "" || it.id == "" {
			continue
		}
		target, err := h.cfg.remoteStage(it.c.Stage)
		if err != nil {
			it.fail(err)
			continue
		}
		it.deal = &hsDeal{target: target}
		todo = append(todo, it)
	}
	if len(todo) == 0 {
		return nil
	}
	if err := h.findDeals(ctx, todo); err != nil {
		return err
	}
	var creates, moves []*hsItem
	for _, it := range live(todo) {
		d := it.deal
		if d.found == nil {
			d.step = dealStep{create: true}
			creates = append(creates, it)
			continue
		}
		d.step = decideDeal(string(d.found.ID), d.found.values()["dealstage"], d.target, it.c.Previous[PrevDealStage])
		if d.step.conflict != nil {
			it.p.conflicts = append(it.p.conflicts, *d.step.conflict)
		}
		if d.step.move != "" {
			moves = append(moves, it)
		}
	}
	if err := h.createDeals(ctx, creates); err != nil {
		return err
	}
	if err := h.moveDeals(ctx, moves); err != nil {
		return err
	}
	for _, it := range live(todo) {
		if !it.deal.step.create { // a created deal is recorded by createDeals, which learns its id
			it.deal.step.record(it.p.written, it.deal.target, "")
		}
	}
	return nil
}

// findDeals sets each item's deal in the pipeline: by the id leadgate stored, else (for contacts that
// existed before this sync) through the contact's deal associations. A new contact has no deal.
func (h *hubSpot) findDeals(ctx context.Context, todo []*hsItem) error {
	var known []*hsItem
	for _, it := range todo {
		if id := it.c.Previous[PrevDealID]; id != "" && !it.res.Created {
			known = append(known, it)
		}
	}
	if len(known) > 0 {
		ids := map[string]string{}
		for _, it := range known {
			ids[it.c.Previous[PrevDealID]] = ""
		}
		found, err := h.readDeals(ctx, known, sortedKeys(ids))
		if err != nil {
			return err
		}
		for _, it := range known {
			if o, ok := found[it.c.Previous[PrevDealID]]; ok && o.values()["pipeline"] == h.cfg.Pipeline {
				it.deal.found = &o
			}
		}
	}
	var search []*hsItem
	for _, it := range todo {
		if it.deal.found == nil && !it.res.Created {
			search = append(search, it)
		}
	}
	if len(search) == 0 {
		return nil
	}
	assoc, err := h.dealAssociations(ctx, search)
	if err != nil {
		return err
	}
	var dealIDs []string
	seen := map[string]bool{}
	for _, it := range search {
		for _, id := range assoc[it.id] {
			if !seen[id] {
				seen[id] = true
				dealIDs = append(dealIDs, id)
			}
		}
	}
	if len(dealIDs) == 0 {
		return nil
	}
	found, err := h.readDeals(ctx, search, dealIDs)
	if err != nil {
		return err
	}
	for _, it := range search {
		for _, id := range assoc[it.id] {
			o, ok := found[id]
			if !ok || o.values()["pipeline"] != h.cfg.Pipeline {
				continue
			}
			if it.deal.found == nil || lessID(id, string(it.deal.found.ID)) {
				it.deal.found = &o // the oldest deal in the pipeline is the contact's first deal
			}
		}
	}
	return nil
}

// readDeals reads deals by id (at most 100 per call) with their pipeline and stage; missing ones are absent.
func (h *hubSpot) readDeals(ctx context.Context, items []*hsItem, ids []string) (map[string]hsObject, error) {
	found := map[string]hsObject{}
	for start := 0; start < len(ids); start += hsMaxBatch {
		chunk := ids[start:min(start+hsMaxBatch, len(ids))]
		inputs := make([]hsInput, len(chunk))
		for i, id := range chunk {
			inputs[i] = hsInput{ID: id}
		}
		var out hsBatchOut
		calls := 0
		_, err := h.do(ctx, call{method: http.MethodPost, path: "/crm/v3/objects/0-3/batch/read",
			in: map[string]any{"properties": []string{"dealstage", "pipeline"}, "propertiesWithHistory": []string{}, "inputs": inputs}, out: &out}, &calls)
		addCalls(items, calls)
		if err != nil {
			return nil, err
		}
		for _, o := range out.Results {
			found[string(o.ID)] = o
		}
	}
	return found, nil
}

// dealAssociations lists the deal ids associated to each contact (v4 associations batch read, at most 100
// inputs a call). Each result may carry paging.next.after when the contact has more deals than one page;
// that cursor goes back alongside the contact's id until its last page (PublicFetchAssociationsBatchRequest
// {id, after}, PublicApiSpecs/CRM/Associations/Rollouts/130902/v4/associations.json). Contacts without
// deals come back as per-input errors of a 207 and are simply absent.
func (h *hubSpot) dealAssociations(ctx context.Context, items []*hsItem) (map[string][]string, error) {
	assoc := map[string][]string{}
	type page struct{ id, after string }
	var todo []page
	for _, it := range items {
		todo = append(todo, page{id: it.id})
	}
	for pages := 0; len(todo) > 0; pages++ {
		if pages > hsMaxAssocPages {
			return nil, &Error{Class: Transient, Message: "hubspot: deal associations: the paging did not end"}
		}
		chunk := todo[:min(hsMaxBatch, len(todo))]
		todo = todo[len(chunk):]
		inputs := make([]map[string]string, len(chunk))
		for i, p := range chunk {
			inputs[i] = map[string]string{"id": p.id}
			if p.after != "" {
				inputs[i]["after"] = p.after
			}
		}
		var out struct {
			Results []struct {
				From struct {
					ID flexString `json:"id"`
				} `json:"from"`
				To []struct {
					ToObjectID flexString `json:"toObjectId"`
				} `json:"to"`
				Paging *struct {
					Next *struct {
						After string `json:"after"`
					} `json:"next"`
				} `json:"paging"`
			} `json:"results"`
		}
		calls := 0
		_, err := h.do(ctx, call{method: http.MethodPost, path: "/crm/v4/associations/contacts/deals/batch/read",
			in: map[string]any{"inputs": inputs}, out: &out}, &calls)
		addCalls(items, calls)
		if err != nil {
			return nil, err
		}
		for _, r := range out.Results {
			from := string(r.From.ID)
			for _, t := range r.To {
				assoc[from] = append(assoc[from], string(t.ToObjectID))
			}
			if r.Paging != nil && r.Paging.Next != nil && r.Paging.Next.After != "" {
				todo = append(todo, page{id: from, after: r.Paging.Next.After})
			}
		}
	}
	return assoc, nil
}

// createDeals creates the first deal of each contact in one batch, associated to the contact at creation.
// Results are matched by objectWriteTraceId (the leadgate id), else by position.
func (h *hubSpot) createDeals(ctx context.Context, items []*hsItem) error {
	if len(items) == 0 {
		return nil
	}
	inputs := make([]any, len(items))
	for i, it := range items {
		name := cmp.Or(strings.TrimSpace(it.c.FirstName+" "+it.c.LastName), it.c.Email, it.c.Phone, it.c.LeadgateID)
		inputs[i] = map[string]any{
			"properties": map[string]string{"dealname": name, "pipeline": h.cfg.Pipeline, "dealstage": it.deal.target},
			"associations": []any{map[string]any{
				"to":    map[string]string{"id": it.id},
				"types": []any{map[string]any{"associationCategory": "HUBSPOT_DEFINED", "associationTypeId": hsDealToContact}},
			}},
			"objectWriteTraceId": it.c.LeadgateID,
		}
	}
	var out hsBatchOut
	calls := 0
	_, err := h.do(ctx, call{method: http.MethodPost, path: "/crm/v3/objects/0-3/batch/create",
		in: map[string]any{"inputs": inputs}, out: &out}, &calls)
	addCalls(items, calls)
	if err := batchLevel(items, err); err != nil {
		return err
	}
	byTrace := map[string]*hsItem{}
	for _, it := range items {
		byTrace[it.c.LeadgateID] = it
	}
	done := map[*hsItem]bool{}
	for i, o := range out.Results {
		it := byTrace[o.TraceID]
		if it == nil && o.TraceID == "" && len(out.Results) == len(items) {
			it = items[i]
		}
		if it == nil || done[it] {
			continue
		}
		done[it] = true
		it.p.written[PrevDealID], it.p.written[PrevDealStage] = string(o.ID), it.deal.target
	}
	for _, e := range out.Errors {
		for _, it := range matchErr(e, byTrace) {
			done[it] = true
			it.fail(h.batchErrClass(e))
		}
	}
	for _, it := range items {
		if !done[it] {
			it.fail(&Error{Class: Transient, Status: http.StatusMultiStatus, Message: "hubspot: deal batch create: no result for contact " + it.c.LeadgateID})
		}
	}
	return nil
}

// moveDeals sets the planned stage of each deal in one batch update.
func (h *hubSpot) moveDeals(ctx context.Context, items []*hsItem) error {
	if len(items) == 0 {
		return nil
	}
	inputs := make([]hsInput, len(items))
	byID := map[string]*hsItem{}
	for i, it := range items {
		inputs[i] = hsInput{ID: it.deal.step.id, Properties: map[string]string{"dealstage": it.deal.step.move}}
		byID[it.deal.step.id] = it
	}
	var out hsBatchOut
	calls := 0
	_, err := h.do(ctx, call{method: http.MethodPost, path: "/crm/v3/objects/0-3/batch/update",
		in: map[string]any{"inputs": inputs}, out: &out}, &calls)
	addCalls(items, calls)
	if err := batchLevel(items, err); err != nil {
		return err
	}
	for _, e := range out.Errors {
		for _, it := range matchErr(e, byID) {
			it.fail(h.batchErrClass(e))
		}
	}
	return nil
}

// batchLevel returns a fault of the destination for the whole batch and records others on each item.
func batchLevel(items []*hsItem, err error) error {
	if err == nil {
		return nil
	}
	if destinationFault(err) {
		return err
	}
	for _, it := range items {
		it.fail(err)
	}
	return nil
}

func addCalls(items []*hsItem, calls int) {
	for _, it := range items {
		it.res.Calls += calls
	}
}

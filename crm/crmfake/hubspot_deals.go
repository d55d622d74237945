package crmfake

import (
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"
)

// HSPipeline is a deal pipeline with its dealstage ids in order.
type HSPipeline struct {
	ID, Label string
	Stages    []string
}

// hsDefaultPipelines is HubSpot's default deal pipeline.
var hsDefaultPipelines = []HSPipeline{{ID: "default", Label: "Sales Pipeline", Stages: []string{"appointmentscheduled",
	"qualifiedtobuy", "presentationscheduled", "decisionmakerboughtin", "contractsent", "closedwon", "closedlost"}}}

// HSDeal is a deal as the fake stores it.
type HSDeal struct {
	ID, Name, Pipeline, Stage string
	ContactIDs                []string // associated contacts
	UpdatedAt                 time.Time
}

// HSMerge is one call of the contact merge endpoint.
type HSMerge struct {
	PrimaryID, MergedID, NewID string
}

// Deals returns a snapshot of every deal, oldest first.
func (f *HubSpot) Deals() []HSDeal {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []HSDeal
	for _, id := range sortedKeys(f.deals) {
		d := *f.deals[id]
		d.ContactIDs = slices.Clone(d.ContactIDs)
		out = append(out, d)
	}
	return out
}

// AddDeal stores a deal directly (pre-existing data, or one a person created), associated to contactID.
func (f *HubSpot) AddDeal(contactID, pipeline, stage string) string {
	f.mu.Lock()
	defer f.mu.Unlock()
	d := &HSDeal{ID: f.newID(), Name: "existing deal", Pipeline: pipeline, Stage: stage, ContactIDs: []string{contactID}, UpdatedAt: time.Now()}
	f.deals[d.ID] = d
	return d.ID
}

// HumanMoveDeal sets a deal's stage as a person in the HubSpot UI would.
func (f *HubSpot) HumanMoveDeal(id, stage string) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	d := f.deals[id]
	if d != nil {
		d.Stage, d.UpdatedAt = stage, time.Now()
	}
	return d != nil
}

// Merges returns every merge the fake carried out.
func (f *HubSpot) Merges() []HSMerge {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.merges)
}

// Deleted returns the ids of the contacts deleted (archived) through the API, in order.
func (f *HubSpot) Deleted() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.deleted)
}

func (f *HubSpot) pipeline(id string) *HSPipeline {
	for i := range f.hsOpts.Pipelines {
		if f.hsOpts.Pipelines[i].ID == id {
			return &f.hsOpts.Pipelines[i]
		}
	}
	return nil
}

func (f *HubSpot) listPipelines(w http.ResponseWriter, r *http.Request) {
	var out []any
	for _, p := range f.hsOpts.Pipelines {
		var stages []any
		for i, s := range p.Stages {
			stages = append(stages, map[string]any{"id": s, "label": s, "displayOrder": i})
		}
		out = append(out, map[string]any{"id": p.ID, "label": p.Label, "displayOrder": 0, "stages": stages})
	}
	writeJSON(w, http.StatusOK, map[string]any{"results": nonNil(out)})
}

func (f *HubSpot) dealJSON(d *HSDeal, traceID string) map[string]any {
	o := map[string]any{"id": d.ID, "properties": map[string]any{"dealname": d.Name, "pipeline": d.Pipeline, "dealstage": d.Stage,
		"hs_object_id": d.ID}, "createdAt": d.UpdatedAt.Format(time.RFC3339Nano), "updatedAt": d.UpdatedAt.Format(time.RFC3339Nano),
		"archived": false}
	if traceID != "" {
		o["objectWriteTraceId"] = traceID
	}
	return o
}

// checkDealProps validates pipeline/dealstage like HubSpot: the stage must belong to the deal's pipeline.
func (f *HubSpot) checkDealProps(pipeline, stage string) []hsPropErr {
	p := f.pipeline(pipeline)
	if p == nil {
		return []hsPropErr{{Message: pipeline + " is not a valid pipeline", Error: "INVALID_OPTION", Name: "pipeline"}}
	}
	if !slices.Contains(p.Stages, stage) {
		return []hsPropErr{{Message: stage + " is not a valid dealstage for pipeline " + pipeline, Error: "INVALID_OPTION", Name: "dealstage"}}
	}
	return nil
}

// POST /crm/v3/objects/0-3/batch/create (PublicApiSpecs/CRM/Deals/Rollouts/424/v3/deals.json):
// SimplePublicObjectBatchInputForCreate inputs, properties and associations required; 201. The deal's
// pipeline and dealstage must exist (INVALID_OPTION otherwise) and associations must name existing contacts
// with the deal-to-contact type (HUBSPOT_DEFINED 3).
func (f *HubSpot) createDeals(w http.ResponseWriter, r *http.Request) {
	var in hsBatchCreateIn
	if !hsDecode(w, r, &in) || !hsRequired(w, "BatchInputSimplePublicObjectBatchInputForCreate", missing("inputs", in.Inputs == nil)...) ||
		!hsBatchSize(w, len(*in.Inputs)) {
		return
	}
	for _, x := range *in.Inputs {
		if !hsRequired(w, "SimplePublicObjectBatchInputForCreate", missing("associations", x.Associations == nil, "properties", x.Properties == nil)...) {
			return
		}
		if msg := checkAssociations(*x.Associations); msg != "" {
			hsBad(w, msg)
			return
		}
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, x := range *in.Inputs {
		props := *x.Properties
		if errs := f.checkDealProps(props["pipeline"], props["dealstage"]); len(errs) > 0 {
			hsInvalidProperties(w, errs)
			return
		}
		for _, a := range *x.Associations {
			if f.contacts[*a.To.ID] == nil {
				hsBad(w, "One or more associations are invalid: contact "+*a.To.ID+" does not exist")
				return
			}
			for _, t := range *a.Types {
				if *t.Category != "HUBSPOT_DEFINED" || *t.TypeID != 3 {
					hsBad(w, "invalid association type "+strconv.Itoa(*t.TypeID)+" from deal to contact")
					return
				}
			}
		}
	}
	var results []map[string]any
	for _, x := range *in.Inputs {
		props := *x.Properties
		d := &HSDeal{ID: f.newID(), Name: props["dealname"], Pipeline: props["pipeline"], Stage: props["dealstage"], UpdatedAt: time.Now()}
		for _, a := range *x.Associations {
			d.ContactIDs = append(d.ContactIDs, *a.To.ID)
		}
		f.deals[d.ID] = d
		results = append(results, f.dealJSON(d, x.TraceID))
	}
	hsBatchAnswerStatus(w, http.StatusCreated, results, nil)
}

// POST /crm/v3/objects/0-3/batch/read: BatchReadInputSimplePublicObjectId, like the contacts' one.
func (f *HubSpot) readDeals(w http.ResponseWriter, r *http.Request) {
	in := decodeRead(w, r)
	if in == nil {
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	var results, errs []map[string]any
	var notFound []string
	for _, x := range *in.Inputs {
		if d := f.deals[*x.ID]; d != nil {
			results = append(results, f.dealJSON(d, ""))
		} else {
			notFound = append(notFound, *x.ID)
		}
	}
	if len(notFound) > 0 {
		errs = append(errs, hsStandardError("OBJECT_NOT_FOUND", "Could not get some DEAL objects, they may be deleted or not exist.",
			map[string][]string{"ids": notFound}))
	}
	hsBatchAnswer(w, results, errs)
}

// POST /crm/v3/objects/0-3/batch/update: SimplePublicObjectBatchInput inputs (id and properties required).
func (f *HubSpot) updateDeals(w http.ResponseWriter, r *http.Request) {
	var in hsBatchWriteIn
	if !hsDecode(w, r, &in) || !hsRequired(w, "BatchInputSimplePublicObjectBatchInput", missing("inputs", in.Inputs == nil)...) ||
		!hsBatchSize(w, len(*in.Inputs)) {
		return
	}
	for _, x := range *in.Inputs {
		if !hsRequired(w, "SimplePublicObjectBatchInput", missing("id", x.ID == nil, "properties", x.Properties == nil)...) {
			return
		}
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, x := range *in.Inputs {
		d := f.deals[*x.ID]
		if d == nil {
			continue
		}
		props := *x.Properties
		if errs := f.checkDealProps(cmpOr(props["pipeline"], d.Pipeline), cmpOr(props["dealstage"], d.Stage)); len(errs) > 0 {
			hsInvalidProperties(w, errs)
			return
		}
	}
	var results, errs []map[string]any
	var notFound []string
	for _, x := range *in.Inputs {
		d := f.deals[*x.ID]
		if d == nil {
			notFound = append(notFound, *x.ID)
			continue
		}
		props := *x.Properties
		d.Pipeline, d.Stage, d.UpdatedAt = cmpOr(props["pipeline"], d.Pipeline), cmpOr(props["dealstage"], d.Stage), time.Now()
		results = append(results, f.dealJSON(d, ""))
	}
	if len(notFound) > 0 {
		errs = append(errs, hsStandardError("OBJECT_NOT_FOUND", "Could not find some DEAL objects", map[string][]string{"ids": notFound}))
	}
	hsBatchAnswer(w, results, errs)
}

// POST /crm/v4/associations/contacts/deals/batch/read (PublicApiSpecs/CRM/Associations/Rollouts/130902/v4/
// associations.json): BatchInputPublicFetchAssociationsBatchRequest, each input {id, after?}. Each result is
// PublicAssociationMultiWithLabel {from, to[], paging?}: toObjectId is a string, and a result carries
// paging.next.after when the input has more associations than one page; the "after" goes back alongside the
// id for the next page. A contact without deals is an error of a 207.
func (f *HubSpot) contactDealAssociations(w http.ResponseWriter, r *http.Request) {
	var in struct {
		Inputs *[]struct {
			ID    *string `json:"id"`
			After string  `json:"after"`
		} `json:"inputs"`
	}
	if !hsDecode(w, r, &in) || !hsRequired(w, "BatchInputPublicFetchAssociationsBatchRequest", missing("inputs", in.Inputs == nil)...) ||
		!hsBatchSize(w, len(*in.Inputs)) {
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	var results, errs []map[string]any
	for _, x := range *in.Inputs {
		if x.ID == nil {
			hsRequired(w, "PublicFetchAssociationsBatchRequest", "id")
			return
		}
		start := 0
		if x.After != "" {
			n, err := strconv.Atoi(x.After)
			if err != nil || n < 0 {
				hsBad(w, "after "+x.After+" is not a valid paging cursor")
				return
			}
			start = n
		}
		var ids []string
		for _, id := range sortedKeys(f.deals) {
			if slices.Contains(f.deals[id].ContactIDs, *x.ID) {
				ids = append(ids, id)
			}
		}
		if len(ids) == 0 {
			e := hsStandardError("OBJECT_NOT_FOUND", "No deals are associated with contact "+*x.ID, map[string][]string{"fromObjectId": {*x.ID}})
			errs = append(errs, e)
			continue
		}
		to := []any{}
		end := min(start+f.hsOpts.AssociationPageSize, len(ids))
		for _, id := range ids[min(start, len(ids)):end] {
			to = append(to, map[string]any{"toObjectId": id, "associationTypes": []any{
				map[string]any{"category": "HUBSPOT_DEFINED", "typeId": 4, "label": nil}}})
		}
		res := map[string]any{"from": map[string]any{"id": *x.ID}, "to": to}
		if end < len(ids) {
			res["paging"] = map[string]any{"next": map[string]any{"after": strconv.Itoa(end), "link": nil}}
		}
		results = append(results, res)
	}
	hsBatchAnswer(w, results, errs)
}

// DELETE /crm/v3/objects/contacts/{id}: archives the contact (204). An unknown id is a 404.
func (f *HubSpot) deleteContact(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	defer f.mu.Unlock()
	id := r.PathValue("id")
	if f.contacts[id] == nil {
		hsError(w, http.StatusNotFound, "OBJECT_NOT_FOUND", "resource not found")
		return
	}
	f.remove(id)
	f.deleted = append(f.deleted, id)
	w.WriteHeader(http.StatusNoContent)
}

// POST /crm/v3/objects/contacts/merge PublicMergeInput {primaryObjectId, objectIdToMerge} (both required): the two records become one
// under a new id (HubSpot may mint one); the primary's values win and empty ones are filled from the other;
// deals and notes follow. The old ids no longer resolve here.
func (f *HubSpot) mergeContacts(w http.ResponseWriter, r *http.Request) {
	var in struct {
		PrimaryObjectID string `json:"primaryObjectId"`
		ObjectIDToMerge string `json:"objectIdToMerge"`
	}
	if !hsDecode(w, r, &in) {
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if in.PrimaryObjectID == "" || in.ObjectIDToMerge == "" || in.PrimaryObjectID == in.ObjectIDToMerge {
		hsBad(w, "primaryObjectId and objectIdToMerge must be two different object ids")
		return
	}
	p, m := f.contacts[in.PrimaryObjectID], f.contacts[in.ObjectIDToMerge]
	if p == nil || m == nil {
		hsError(w, http.StatusNotFound, "OBJECT_NOT_FOUND", "Object not found. objectId are usually numeric.")
		return
	}
	props := cloneMap(p.Properties)
	for k, v := range m.Properties {
		if strings.TrimSpace(props[k]) == "" {
			props[k] = v
		}
	}
	props["hs_merged_object_ids"] = m.ID + ";" + p.ID
	notes := append(slices.Clone(p.Notes), m.Notes...)
	f.remove(p.ID)
	f.remove(m.ID)
	c := f.insert(props)
	c.Notes = notes
	for _, d := range f.deals {
		for i, cid := range d.ContactIDs {
			if cid == p.ID || cid == m.ID {
				d.ContactIDs[i] = c.ID
			}
		}
		d.ContactIDs = slices.Compact(d.ContactIDs)
	}
	f.merges = append(f.merges, HSMerge{PrimaryID: p.ID, MergedID: m.ID, NewID: c.ID})
	writeJSON(w, http.StatusOK, f.objectJSON(c, nil))
}

// remove drops a contact from the store.
func (f *HubSpot) remove(id string) {
	delete(f.contacts, id)
	f.order = slices.DeleteFunc(f.order, func(x string) bool { return x == id })
}

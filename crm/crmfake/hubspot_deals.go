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
		"hs_object_id": d.ID}, "updatedAt": d.UpdatedAt.Format(time.RFC3339Nano), "archived": false}
	if traceID != "" {
		o["objectWriteTraceId"] = traceID
	}
	return o
}

// checkDealProps validates pipeline/dealstage like HubSpot: the stage must belong to the deal's pipeline.
func (f *HubSpot) checkDealProps(pipeline, stage string) string {
	p := f.pipeline(pipeline)
	if p == nil {
		return "Property values were not valid: [{\"isValid\":false,\"message\":\"" + pipeline + " is not a valid pipeline\",\"error\":\"INVALID_OPTION\",\"name\":\"pipeline\"}]"
	}
	if !slices.Contains(p.Stages, stage) {
		return "Property values were not valid: [{\"isValid\":false,\"message\":\"" + stage + " is not a valid dealstage for pipeline " + pipeline + "\",\"error\":\"INVALID_OPTION\",\"name\":\"dealstage\"}]"
	}
	return ""
}

// POST /crm/v3/objects/deals/batch/create: inputs with properties and associations (to contacts).
func (f *HubSpot) createDeals(w http.ResponseWriter, r *http.Request) {
	var in struct {
		Inputs []struct {
			Properties   map[string]string `json:"properties"`
			TraceID      string            `json:"objectWriteTraceId"`
			Associations []struct {
				To struct {
					ID string `json:"id"`
				} `json:"to"`
				Types []struct {
					Category string `json:"associationCategory"`
					TypeID   int    `json:"associationTypeId"`
				} `json:"types"`
			} `json:"associations"`
		} `json:"inputs"`
	}
	if !decode(w, r, &in, hsBad) || !hsBatchSize(w, len(in.Inputs)) {
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, x := range in.Inputs {
		if msg := f.checkDealProps(x.Properties["pipeline"], x.Properties["dealstage"]); msg != "" {
			hsBad(w, msg)
			return
		}
		for _, a := range x.Associations {
			if f.contacts[a.To.ID] == nil {
				hsBad(w, "association target contact "+a.To.ID+" does not exist")
				return
			}
			for _, t := range a.Types {
				if t.Category != "HUBSPOT_DEFINED" || t.TypeID != 3 {
					hsBad(w, "invalid association type "+strconv.Itoa(t.TypeID)+" from deal to contact")
					return
				}
			}
		}
	}
	var results []map[string]any
	for _, x := range in.Inputs {
		d := &HSDeal{ID: f.newID(), Name: x.Properties["dealname"], Pipeline: x.Properties["pipeline"], Stage: x.Properties["dealstage"], UpdatedAt: time.Now()}
		for _, a := range x.Associations {
			d.ContactIDs = append(d.ContactIDs, a.To.ID)
		}
		f.deals[d.ID] = d
		results = append(results, f.dealJSON(d, x.TraceID))
	}
	now := time.Now().Format(time.RFC3339Nano)
	writeJSON(w, http.StatusCreated, map[string]any{"status": "COMPLETE", "results": nonNil(results), "startedAt": now, "completedAt": now})
}

func (f *HubSpot) readDeals(w http.ResponseWriter, r *http.Request) {
	var in hsBatchIn
	if !decode(w, r, &in, hsBad) || !hsBatchSize(w, len(in.Inputs)) {
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	var results, errs []map[string]any
	var missing []string
	for _, x := range in.Inputs {
		if d := f.deals[x.ID]; d != nil {
			results = append(results, f.dealJSON(d, ""))
		} else {
			missing = append(missing, x.ID)
		}
	}
	if len(missing) > 0 {
		errs = append(errs, map[string]any{"status": "error", "category": "OBJECT_NOT_FOUND",
			"message": "Could not get some DEAL objects, they may be deleted or not exist.", "context": map[string][]string{"ids": missing}})
	}
	hsBatchAnswer(w, results, errs)
}

func (f *HubSpot) updateDeals(w http.ResponseWriter, r *http.Request) {
	var in hsBatchIn
	if !decode(w, r, &in, hsBad) || !hsBatchSize(w, len(in.Inputs)) {
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, x := range in.Inputs {
		d := f.deals[x.ID]
		if d == nil {
			continue
		}
		if msg := f.checkDealProps(cmpOr(x.Properties["pipeline"], d.Pipeline), cmpOr(x.Properties["dealstage"], d.Stage)); msg != "" {
			hsBad(w, msg)
			return
		}
	}
	var results, errs []map[string]any
	var missing []string
	for _, x := range in.Inputs {
		d := f.deals[x.ID]
		if d == nil {
			missing = append(missing, x.ID)
			continue
		}
		d.Pipeline, d.Stage, d.UpdatedAt = cmpOr(x.Properties["pipeline"], d.Pipeline), cmpOr(x.Properties["dealstage"], d.Stage), time.Now()
		results = append(results, f.dealJSON(d, ""))
	}
	if len(missing) > 0 {
		errs = append(errs, map[string]any{"status": "error", "category": "OBJECT_NOT_FOUND",
			"message": "Could not find some DEAL objects", "context": map[string][]string{"ids": missing}})
	}
	hsBatchAnswer(w, results, errs)
}

// POST /crm/v4/associations/contacts/deals/batch/read: each contact's deals; a contact without any is a
// per-input error of a 207.
func (f *HubSpot) contactDealAssociations(w http.ResponseWriter, r *http.Request) {
	var in hsBatchIn
	if !decode(w, r, &in, hsBad) || !hsBatchSize(w, len(in.Inputs)) {
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	var results, errs []map[string]any
	for _, x := range in.Inputs {
		var to []any
		for _, id := range sortedKeys(f.deals) {
			if slices.Contains(f.deals[id].ContactIDs, x.ID) {
				n, _ := strconv.Atoi(id)
				to = append(to, map[string]any{"toObjectId": n, "associationTypes": []any{
					map[string]any{"category": "HUBSPOT_DEFINED", "typeId": 4, "label": nil}}})
			}
		}
		if len(to) == 0 {
			errs = append(errs, map[string]any{"status": "error", "category": "OBJECT_NOT_FOUND", "subCategory": "crm.associations.NO_ASSOCIATIONS_FOUND",
				"message": "No deals are associated with contact " + x.ID, "context": map[string][]string{"fromObjectId": {x.ID}}})
			continue
		}
		results = append(results, map[string]any{"from": map[string]any{"id": x.ID}, "to": to})
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

// POST /crm/v3/objects/contacts/merge {primaryObjectId, objectIdToMerge}: the two records become one
// under a new id (HubSpot may mint one); the primary's values win and empty ones are filled from the other;
// deals and notes follow. The old ids no longer resolve here.
func (f *HubSpot) mergeContacts(w http.ResponseWriter, r *http.Request) {
	var in struct {
		PrimaryObjectID string `json:"primaryObjectId"`
		ObjectIDToMerge string `json:"objectIdToMerge"`
	}
	if !decode(w, r, &in, hsBad) {
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

package crmfake

import (
	"encoding/json"
	"net/http"
	"slices"
	"strings"
)

// ghlContactFields are the properties UpsertContactDto / UpdateContactDto accept; anything else is a 422.
var ghlContactFields = []string{"locationId", "firstName", "lastName", "name", "email", "phone", "address1", "city",
	"state", "postalCode", "country", "website", "timezone", "dnd", "dndSettings", "tags", "customFields", "source",
	"dateOfBirth", "companyName", "assignedTo", "createNewIfDuplicateAllowed"}

type ghlContactIn struct {
	LocationID   string   `json:"locationId"`
	Email        *string  `json:"email"`
	Phone        *string  `json:"phone"`
	FirstName    *string  `json:"firstName"`
	LastName     *string  `json:"lastName"`
	CompanyName  *string  `json:"companyName"`
	Tags         []string `json:"tags"`
	CustomFields []struct {
		ID         string `json:"id"`
		Key        string `json:"key"`
		FieldValue any    `json:"field_value"`
	} `json:"customFields"`
	CreateNew bool `json:"createNewIfDuplicateAllowed"`
}

// decodeContact rejects unknown properties like the NestJS validation of GHL does.
func (f *GoHighLevel) decodeContact(w http.ResponseWriter, r *http.Request, allowLocation bool) (ghlContactIn, bool) {
	var raw map[string]json.RawMessage
	var in ghlContactIn
	body, _ := readAll(r)
	if err := json.Unmarshal(body, &raw); err != nil {
		ghlBad(w, "invalid JSON body")
		return in, false
	}
	var bad []string
	for k := range raw {
		if !slices.Contains(ghlContactFields, k) || (k == "locationId" && !allowLocation) {
			bad = append(bad, "property "+k+" should not exist")
		}
	}
	if len(bad) > 0 {
		slices.Sort(bad)
		ghl422(w, bad...)
		return in, false
	}
	if err := json.Unmarshal(body, &in); err != nil {
		ghl422(w, err.Error())
		return in, false
	}
	for _, cf := range in.CustomFields {
		if cf.ID == "" && cf.Key == "" {
			ghl422(w, "customFields.id or key must be provided")
			return in, false
		}
		if f.fieldID(cf.ID, cf.Key) == "" {
			ghl422(w, "custom field "+cf.ID+cf.Key+" does not exist")
			return in, false
		}
	}
	return in, true
}

func (f *GoHighLevel) fieldID(id, key string) string {
	for _, x := range f.ghlOpts.Fields {
		if (id != "" && x.ID == id) || (key != "" && x.FieldKey == key) {
			return x.ID
		}
	}
	return ""
}

// apply copies the body onto c; tags given in the body replace all tags (the documented upsert behaviour).
func (f *GoHighLevel) apply(r *http.Request, c *GHLContact, in ghlContactIn) {
	set := func(dst *string, v *string) {
		if v != nil {
			*dst = *v
		}
	}
	set(&c.Email, in.Email)
	c.Email = strings.ToLower(c.Email)
	set(&c.Phone, in.Phone)
	set(&c.FirstName, in.FirstName)
	set(&c.LastName, in.LastName)
	set(&c.CompanyName, in.CompanyName)
	m := GHLMutation{Path: r.URL.Path, ContactID: c.ID, CustomFields: map[string]string{}, SentTags: in.Tags != nil}
	if in.Tags != nil {
		c.Tags = slices.Clone(in.Tags)
	}
	for _, cf := range in.CustomFields {
		v := anyString(cf.FieldValue)
		c.CustomFields[f.fieldID(cf.ID, cf.Key)] = v
		m.CustomFields[f.fieldID(cf.ID, cf.Key)] = v
	}
	c.DateUpdated = timeNow()
	m.Time = c.DateUpdated
	f.mutations = append(f.mutations, m)
}

func (f *GoHighLevel) checkLocation(w http.ResponseWriter, loc string) bool {
	if loc != f.ghlOpts.LocationID {
		writeJSON(w, http.StatusForbidden, map[string]any{"statusCode": 403, "message": "The token does not have access to this location."})
		return false
	}
	return true
}

// GET /contacts/search/duplicate?locationId=&email=&number=
func (f *GoHighLevel) duplicate(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	if !f.checkLocation(w, q.Get("locationId")) {
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	c, _ := f.match(q.Get("email"), q.Get("number"))
	if c == nil {
		writeJSON(w, http.StatusOK, map[string]any{"contact": nil})
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"contact": f.contactJSON(c)})
}

func (f *GoHighLevel) upsert(w http.ResponseWriter, r *http.Request) {
	in, ok := f.decodeContact(w, r, true)
	if !ok || !f.checkLocation(w, in.LocationID) {
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	c, _ := f.match(deref(in.Email), deref(in.Phone))
	isNew := c == nil || (in.CreateNew && f.ghlOpts.AllowDuplicates)
	if isNew {
		c = f.insert(GHLContact{})
	}
	if !isNew && c.Email != "" && in.Email != nil && !strings.EqualFold(c.Email, *in.Email) {
		in.Email = nil // matched by phone to a contact with another email: the second field is ignored
	}
	f.apply(r, c, in)
	writeJSON(w, http.StatusOK, map[string]any{"new": isNew, "contact": f.contactJSON(c), "traceId": "fake-trace"})
}

// POST /contacts/: rejects duplicates unless the location allows them.
func (f *GoHighLevel) create(w http.ResponseWriter, r *http.Request) {
	in, ok := f.decodeContact(w, r, true)
	if !ok || !f.checkLocation(w, in.LocationID) {
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if c, by := f.match(deref(in.Email), deref(in.Phone)); c != nil && !f.ghlOpts.AllowDuplicates {
		writeJSON(w, http.StatusBadRequest, map[string]any{"statusCode": 400, "message": "This location does not allow duplicated contacts.",
			"meta": map[string]any{"contactId": c.ID, "contactName": strings.TrimSpace(c.FirstName + " " + c.LastName), "matchingField": by}})
		return
	}
	c := f.insert(GHLContact{})
	f.apply(r, c, in)
	writeJSON(w, http.StatusCreated, map[string]any{"contact": f.contactJSON(c)})
}

func (f *GoHighLevel) get(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	defer f.mu.Unlock()
	c := f.contacts[r.PathValue("id")]
	if c == nil {
		writeJSON(w, http.StatusNotFound, map[string]any{"statusCode": 404, "message": "Contact not found"})
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"contact": f.contactJSON(c)})
}

func (f *GoHighLevel) update(w http.ResponseWriter, r *http.Request) {
	in, ok := f.decodeContact(w, r, false)
	if !ok {
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	c := f.contacts[r.PathValue("id")]
	if c == nil {
		writeJSON(w, http.StatusNotFound, map[string]any{"statusCode": 404, "message": "Contact not found"})
		return
	}
	f.apply(r, c, in)
	writeJSON(w, http.StatusOK, map[string]any{"succeded": true, "contact": f.contactJSON(c)})
}

func (f *GoHighLevel) tagBody(w http.ResponseWriter, r *http.Request) (*GHLContact, []string, bool) {
	var in struct {
		Tags []string `json:"tags"`
	}
	if !decode(w, r, &in, ghlBad) {
		return nil, nil, false
	}
	if len(in.Tags) == 0 {
		ghl422(w, "tags should not be empty")
		return nil, nil, false
	}
	c := f.contacts[r.PathValue("id")]
	if c == nil {
		writeJSON(w, http.StatusNotFound, map[string]any{"statusCode": 404, "message": "Contact not found"})
		return nil, nil, false
	}
	return c, in.Tags, true
}

func (f *GoHighLevel) addTags(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	defer f.mu.Unlock()
	c, tags, ok := f.tagBody(w, r)
	if !ok {
		return
	}
	for _, t := range tags {
		if !slices.Contains(c.Tags, t) {
			c.Tags = append(c.Tags, t)
		}
	}
	writeJSON(w, http.StatusCreated, map[string]any{"tags": c.Tags})
}

func (f *GoHighLevel) removeTags(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	defer f.mu.Unlock()
	c, tags, ok := f.tagBody(w, r)
	if !ok {
		return
	}
	c.Tags = slices.DeleteFunc(c.Tags, func(t string) bool { return slices.Contains(tags, t) })
	writeJSON(w, http.StatusOK, map[string]any{"tags": nonNil(c.Tags)})
}

func (f *GoHighLevel) addNote(w http.ResponseWriter, r *http.Request) {
	var in struct {
		Body string `json:"body"`
	}
	if !decode(w, r, &in, ghlBad) {
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	c := f.contacts[r.PathValue("id")]
	if c == nil {
		writeJSON(w, http.StatusNotFound, map[string]any{"statusCode": 404, "message": "Contact not found"})
		return
	}
	c.Notes = append(c.Notes, in.Body)
	writeJSON(w, http.StatusCreated, map[string]any{"note": map[string]any{"id": "n" + f.newID(), "body": in.Body, "contactId": c.ID}})
}

func (f *GoHighLevel) listFields(w http.ResponseWriter, r *http.Request) {
	if !f.checkLocation(w, r.PathValue("loc")) {
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []any
	for _, x := range f.ghlOpts.Fields {
		out = append(out, map[string]any{"id": x.ID, "name": x.Name, "fieldKey": x.FieldKey, "dataType": "TEXT", "locationId": f.ghlOpts.LocationID})
	}
	writeJSON(w, http.StatusOK, map[string]any{"customFields": nonNil(out)})
}

func (f *GoHighLevel) createField(w http.ResponseWriter, r *http.Request) {
	var in struct {
		Name     string `json:"name"`
		DataType string `json:"dataType"`
	}
	if !f.checkLocation(w, r.PathValue("loc")) || !decode(w, r, &in, ghlBad) {
		return
	}
	if in.Name == "" || in.DataType == "" {
		ghl422(w, "name should not be empty", "dataType should not be empty")
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	x := GHLField{ID: "cf" + f.newID(), Name: in.Name, FieldKey: "contact." + strings.ToLower(strings.ReplaceAll(in.Name, " ", "_"))}
	f.ghlOpts.Fields = append(f.ghlOpts.Fields, x)
	writeJSON(w, http.StatusCreated, map[string]any{"customField": map[string]any{"id": x.ID, "name": x.Name, "fieldKey": x.FieldKey}})
}

func (f *GoHighLevel) listPipelines(w http.ResponseWriter, r *http.Request) {
	if !f.checkLocation(w, r.URL.Query().Get("locationId")) {
		return
	}
	var out []any
	for _, p := range f.ghlOpts.Pipelines {
		var stages []any
		for i, s := range p.Stages {
			stages = append(stages, map[string]any{"id": s, "name": s, "position": i})
		}
		out = append(out, map[string]any{"id": p.ID, "name": p.Name, "stages": stages, "locationId": f.ghlOpts.LocationID})
	}
	writeJSON(w, http.StatusOK, map[string]any{"pipelines": nonNil(out)})
}

func (f *GoHighLevel) stageInPipeline(pipeline, stage string) bool {
	for _, p := range f.ghlOpts.Pipelines {
		if p.ID == pipeline {
			return slices.Contains(p.Stages, stage)
		}
	}
	return false
}

func ghlOppJSON(o *GHLOpportunity) map[string]any {
	return map[string]any{"id": o.ID, "name": o.Name, "contactId": o.ContactID, "pipelineId": o.PipelineID,
		"pipelineStageId": o.PipelineStageID, "status": o.Status}
}

func (f *GoHighLevel) searchOpps(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	if !f.checkLocation(w, q.Get("location_id")) {
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []any
	for _, id := range sortedKeys(f.opps) {
		o := f.opps[id]
		if (q.Get("contact_id") == "" || o.ContactID == q.Get("contact_id")) && (q.Get("pipeline_id") == "" || o.PipelineID == q.Get("pipeline_id")) {
			out = append(out, ghlOppJSON(o))
		}
	}
	out, meta := pageOf(out, q.Get("limit"), q.Get("page"))
	writeJSON(w, http.StatusOK, map[string]any{"opportunities": nonNil(out), "meta": meta})
}

func (f *GoHighLevel) createOpp(w http.ResponseWriter, r *http.Request) {
	var in struct {
		PipelineID, LocationID, Name, Status, ContactID, PipelineStageID string
	}
	if !decode(w, r, &in, ghlBad) || !f.checkLocation(w, in.LocationID) {
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if in.Name == "" || in.Status == "" || f.contacts[in.ContactID] == nil || !f.stageInPipeline(in.PipelineID, in.PipelineStageID) {
		ghl422(w, "pipelineId, name, status, contactId must be valid")
		return
	}
	o := &GHLOpportunity{ID: "op" + f.newID(), Name: in.Name, ContactID: in.ContactID, PipelineID: in.PipelineID,
		PipelineStageID: in.PipelineStageID, Status: in.Status}
	f.opps[o.ID] = o
	writeJSON(w, http.StatusCreated, map[string]any{"opportunity": ghlOppJSON(o)})
}

func (f *GoHighLevel) getOpp(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	defer f.mu.Unlock()
	o := f.opps[r.PathValue("id")]
	if o == nil {
		writeJSON(w, http.StatusNotFound, map[string]any{"statusCode": 404, "message": "Opportunity not found"})
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"opportunity": ghlOppJSON(o)})
}

func (f *GoHighLevel) updateOpp(w http.ResponseWriter, r *http.Request) {
	var in struct {
		PipelineID, PipelineStageID string
	}
	if !decode(w, r, &in, ghlBad) {
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	o := f.opps[r.PathValue("id")]
	if o == nil {
		writeJSON(w, http.StatusNotFound, map[string]any{"statusCode": 404, "message": "Opportunity not found"})
		return
	}
	if !f.stageInPipeline(cmpOr(in.PipelineID, o.PipelineID), in.PipelineStageID) {
		ghl422(w, "pipelineStageId is not in the pipeline")
		return
	}
	o.PipelineID, o.PipelineStageID = cmpOr(in.PipelineID, o.PipelineID), in.PipelineStageID
	writeJSON(w, http.StatusOK, map[string]any{"opportunity": ghlOppJSON(o)})
}

// HumanMoveOpportunity moves an opportunity's stage as a person would.
func (f *GoHighLevel) HumanMoveOpportunity(id, stage string) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	o := f.opps[id]
	if o != nil {
		o.PipelineStageID = stage
	}
	return o != nil
}

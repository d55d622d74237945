package crmfake

import (
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Request bodies of the contacts endpoints, from HubSpot-public-api-spec-collection PublicApiSpecs/CRM/
// Contacts/Rollouts/424/v3/contacts.json. Pointers mark required members, so an absent one is told from an
// empty one; hsDecode refuses members a schema does not declare.

// hsUpsertInput is SimplePublicObjectBatchInputUpsert (id and properties required) and, with the same
// members, SimplePublicObjectBatchInput of batch update.
type hsUpsertInput struct {
	ID         *string            `json:"id"`
	IDProperty string             `json:"idProperty"`
	TraceID    string             `json:"objectWriteTraceId"`
	Properties *map[string]string `json:"properties"`
}

// hsBatchWriteIn is BatchInputSimplePublicObjectBatchInputUpsert / BatchInputSimplePublicObjectBatchInput.
type hsBatchWriteIn struct {
	Inputs *[]hsUpsertInput `json:"inputs"`
}

// hsReadIn is BatchReadInputSimplePublicObjectId: inputs, properties and propertiesWithHistory required.
type hsReadIn struct {
	IDProperty            string    `json:"idProperty"`
	Inputs                *[]hsID   `json:"inputs"`
	Properties            *[]string `json:"properties"`
	PropertiesWithHistory *[]string `json:"propertiesWithHistory"`
}

// hsID is SimplePublicObjectId / PublicObjectId (id required).
type hsID struct {
	ID *string `json:"id"`
}

// hsAssociation is PublicAssociationsForObject (to and types required) with AssociationSpec types.
type hsAssociation struct {
	To    *hsID `json:"to"`
	Types *[]struct {
		Category *string `json:"associationCategory"`
		TypeID   *int    `json:"associationTypeId"`
	} `json:"types"`
}

// hsCreateInput is SimplePublicObjectInputForCreate / SimplePublicObjectBatchInputForCreate: properties
// and associations required (associations may be empty).
type hsCreateInput struct {
	Properties   *map[string]string `json:"properties"`
	Associations *[]hsAssociation   `json:"associations"`
	TraceID      string             `json:"objectWriteTraceId"`
}

type hsBatchCreateIn struct {
	Inputs *[]hsCreateInput `json:"inputs"`
}

const hsMaxInputs = 100

// checkAssociations validates PublicAssociationsForObject entries; "" when they are well formed.
func checkAssociations(as []hsAssociation) string {
	for _, a := range as {
		if a.To == nil || a.To.ID == nil || a.Types == nil {
			return "Invalid input JSON: Cannot build PublicAssociationsForObject, some of required attributes are not set [to, types]"
		}
		for _, t := range *a.Types {
			if t.Category == nil || t.TypeID == nil {
				return "Invalid input JSON: Cannot build AssociationSpec, some of required attributes are not set [associationCategory, associationTypeId]"
			}
			if !slices.Contains([]string{"HUBSPOT_DEFINED", "INTEGRATOR_DEFINED", "USER_DEFINED", "WORK"}, *t.Category) {
				return "Invalid input JSON: associationCategory " + *t.Category + " is not one of HUBSPOT_DEFINED, INTEGRATOR_DEFINED, USER_DEFINED, WORK"
			}
		}
	}
	return ""
}

// queryList reads an array query parameter (style form, explode true: properties=a&properties=b); a
// comma-separated value is split as HubSpot also accepts it.
func queryList(r *http.Request, name string) []string {
	var out []string
	for _, v := range r.URL.Query()[name] {
		for _, p := range strings.Split(v, ",") {
			if p = strings.TrimSpace(p); p != "" {
				out = append(out, p)
			}
		}
	}
	return out
}

// GET /crm/v3/objects/contacts?limit&after&properties: CollectionResponseSimplePublicObjectWithAssociations
// ForwardPaging. limit defaults to 10 (at most 100); after is the cursor of paging.next.after.
func (f *HubSpot) list(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	limit := 10
	if v := q.Get("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			hsBad(w, "limit must be a positive integer")
			return
		}
		limit = min(n, 100)
	}
	after := 0
	if v := q.Get("after"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 {
			hsBad(w, "after is not a valid paging cursor")
			return
		}
		after = n
	}
	props := queryList(r, "properties")
	if props == nil {
		props = []string{"createdate", "email", "firstname", "hs_object_id", "lastmodifieddate", "lastname"}
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	out := []map[string]any{}
	for i := after; i < len(f.order) && len(out) < limit; i++ {
		out = append(out, f.objectJSON(f.contacts[f.order[i]], props))
	}
	resp := map[string]any{"results": out}
	if next := after + len(out); next < len(f.order) {
		resp["paging"] = map[string]any{"next": map[string]any{"after": strconv.Itoa(next), "link": "?after=" + strconv.Itoa(next)}}
	}
	writeJSON(w, http.StatusOK, resp)
}

// GET /crm/v3/objects/contacts/{contactId}?properties&idProperty: SimplePublicObjectWithAssociations.
func (f *HubSpot) getContact(w http.ResponseWriter, r *http.Request) {
	props := queryList(r, "properties")
	if props == nil {
		props = []string{"createdate", "email", "firstname", "hs_object_id", "lastmodifieddate", "lastname"}
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	var c *HSContact
	switch idProp := r.URL.Query().Get("idProperty"); idProp {
	case "":
		c = f.contacts[r.PathValue("id")]
	case "email":
		c = f.byEmail(r.PathValue("id"))
	default:
		hsBad(w, "idProperty "+idProp+" is not a unique property")
		return
	}
	if c == nil {
		hsError(w, http.StatusNotFound, "OBJECT_NOT_FOUND", "Object not found.  objectId are usually numeric.")
		return
	}
	writeJSON(w, http.StatusOK, f.objectJSON(c, props))
}

// POST /crm/v3/objects/contacts SimplePublicObjectInputForCreate: 201 SimplePublicObject; 409 CONFLICT
// "Existing ID: N" when the email exists.
func (f *HubSpot) create(w http.ResponseWriter, r *http.Request) {
	var in hsCreateInput
	if !hsDecode(w, r, &in) || !hsRequired(w, "SimplePublicObjectInputForCreate", missing("associations", in.Associations == nil, "properties", in.Properties == nil)...) {
		return
	}
	if msg := checkAssociations(*in.Associations); msg != "" {
		hsBad(w, msg)
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if errs := f.checkProperties(*in.Properties); len(errs) > 0 {
		hsInvalidProperties(w, errs)
		return
	}
	if c := f.byEmail((*in.Properties)["email"]); c != nil {
		hsError(w, http.StatusConflict, "CONFLICT", "Contact already exists. Existing ID: "+c.ID)
		return
	}
	c := f.insert(map[string]string{})
	f.set(c, r.URL.Path, *in.Properties)
	writeJSON(w, http.StatusCreated, f.objectJSON(c, nil))
}

// decodeRead decodes and checks a BatchReadInputSimplePublicObjectId; nil when it answered an error.
func decodeRead(w http.ResponseWriter, r *http.Request) *hsReadIn {
	var in hsReadIn
	if !hsDecode(w, r, &in) || !hsRequired(w, "BatchReadInputSimplePublicObjectId", missing("inputs", in.Inputs == nil,
		"properties", in.Properties == nil, "propertiesWithHistory", in.PropertiesWithHistory == nil)...) {
		return nil
	}
	if !hsBatchSize(w, len(*in.Inputs)) {
		return nil
	}
	for _, x := range *in.Inputs {
		if x.ID == nil {
			hsRequired(w, "SimplePublicObjectId", "id")
			return nil
		}
	}
	return &in
}

// POST /crm/v3/objects/contacts/batch/read: 200, or 207 with an OBJECT_NOT_FOUND error naming the ids
// that do not exist.
func (f *HubSpot) batchRead(w http.ResponseWriter, r *http.Request) {
	in := decodeRead(w, r)
	if in == nil {
		return
	}
	if in.IDProperty != "" && in.IDProperty != "email" {
		hsBad(w, "idProperty "+in.IDProperty+" is not a unique property")
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	var results []map[string]any
	var notFound []string
	for _, x := range *in.Inputs {
		var c *HSContact
		if in.IDProperty == "email" {
			c = f.byEmail(*x.ID)
		} else {
			c = f.contacts[*x.ID]
		}
		if c == nil {
			notFound = append(notFound, *x.ID)
			continue
		}
		results = append(results, f.objectJSON(c, *in.Properties))
	}
	var errs []map[string]any
	if len(notFound) > 0 {
		errs = append(errs, hsStandardError("OBJECT_NOT_FOUND",
			"Could not get some CONTACT objects, they may be deleted or not exist. Check that ids are valid.", map[string][]string{"ids": notFound}))
	}
	hsBatchAnswer(w, results, errs)
}

// decodeWrite decodes and checks a batch upsert/update body; nil when it answered an error. Property values
// are checked for the whole batch first: one invalid property fails the request with a 400.
func (f *HubSpot) decodeWrite(w http.ResponseWriter, r *http.Request, schema string) []hsUpsertInput {
	var in hsBatchWriteIn
	if !hsDecode(w, r, &in) || !hsRequired(w, "BatchInput"+schema, missing("inputs", in.Inputs == nil)...) || !hsBatchSize(w, len(*in.Inputs)) {
		return nil
	}
	for _, x := range *in.Inputs {
		if !hsRequired(w, schema, missing("id", x.ID == nil, "properties", x.Properties == nil)...) {
			return nil
		}
	}
	for _, x := range *in.Inputs {
		if errs := f.checkProperties(*x.Properties); len(errs) > 0 {
			hsInvalidProperties(w, errs)
			return nil
		}
	}
	return *in.Inputs
}

// POST /crm/v3/objects/contacts/batch/update: by record id (or an idProperty value); unknown ids come back
// as an OBJECT_NOT_FOUND error of a 207, the rest are written.
func (f *HubSpot) batchUpdate(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	defer f.mu.Unlock()
	inputs := f.decodeWrite(w, r, "SimplePublicObjectBatchInput")
	if inputs == nil {
		return
	}
	var results []map[string]any
	var notFound []string
	for _, x := range inputs {
		c := f.contacts[*x.ID]
		if x.IDProperty == "email" {
			c = f.byEmail(*x.ID)
		}
		if c == nil {
			notFound = append(notFound, *x.ID)
			continue
		}
		if fault, ok := f.omitted(r.URL.Path, []string{*x.ID}); ok {
			if fault.apply {
				f.set(c, r.URL.Path, *x.Properties)
			}
			continue
		}
		f.set(c, r.URL.Path, *x.Properties)
		results = append(results, f.objectJSON(c, nil))
	}
	var errs []map[string]any
	if len(notFound) > 0 {
		errs = append(errs, hsStandardError("OBJECT_NOT_FOUND", "Could not find some CONTACT objects", map[string][]string{"ids": notFound}))
	}
	hsBatchAnswer(w, results, errs)
}

// POST /crm/v3/objects/contacts/batch/upsert matches inputs by idProperty email (a unique property). An
// invalid email or a registered conflict is a per-input error of a 207; the other inputs are written.
func (f *HubSpot) batchUpsert(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	defer f.mu.Unlock()
	inputs := f.decodeWrite(w, r, "SimplePublicObjectBatchInputUpsert")
	if inputs == nil {
		return
	}
	for _, x := range inputs {
		if x.IDProperty != "email" {
			hsBad(w, "idProperty must name a property with unique values, such as email")
			return
		}
	}
	var results, errs []map[string]any
	for _, x := range inputs {
		email := strings.ToLower(strings.TrimSpace(*x.ID))
		ctx := map[string][]string{"ids": {*x.ID}}
		if x.TraceID != "" {
			ctx["objectWriteTraceId"] = []string{x.TraceID}
		}
		if id, ok := f.conflicts[email]; ok {
			errs = append(errs, hsStandardError("CONFLICT", "Contact already exists. Existing ID: "+id, ctx))
			continue
		}
		if !strings.Contains(email, "@") || strings.ContainsAny(email, " ,") {
			errs = append(errs, hsStandardError("VALIDATION_ERROR", hsPropertyMessage([]hsPropErr{{
				Message: "Email address " + *x.ID + " is invalid", Error: "INVALID_EMAIL", Name: "email"}}), ctx))
			continue
		}
		fault, omit := f.omitted(r.URL.Path, []string{*x.ID, email})
		if omit && !fault.apply {
			continue
		}
		c := f.byEmail(email)
		isNew := c == nil
		if isNew {
			c = f.insert(map[string]string{"email": email})
		}
		f.set(c, r.URL.Path, *x.Properties)
		if omit {
			continue
		}
		o := f.objectJSON(c, nil)
		o["new"] = isNew
		if x.TraceID != "" {
			o["objectWriteTraceId"] = x.TraceID
		}
		results = append(results, o)
	}
	hsBatchAnswer(w, results, errs)
}

func hsBatchSize(w http.ResponseWriter, n int) bool {
	if n > hsMaxInputs {
		hsBad(w, "Too many inputs: at most 100 are allowed")
		return false
	}
	return true
}

// hsBatchAnswer is BatchResponseSimplePublicObject (200) when every input succeeded, else
// BatchResponseSimplePublicObjectWithErrors (207) with errors[] and numErrors.
func hsBatchAnswer(w http.ResponseWriter, results, errs []map[string]any) {
	hsBatchAnswerStatus(w, http.StatusOK, results, errs)
}

func hsBatchAnswerStatus(w http.ResponseWriter, ok int, results, errs []map[string]any) {
	now := time.Now().UTC().Format(time.RFC3339Nano)
	body := map[string]any{"status": "COMPLETE", "results": nonNil(results), "requestedAt": now, "startedAt": now, "completedAt": now}
	status := ok
	if len(errs) > 0 {
		body["errors"], body["numErrors"] = errs, len(errs)
		status = http.StatusMultiStatus
	}
	writeJSON(w, status, body)
}

// POST /crm/v3/objects/notes/batch/create (PublicApiSpecs/CRM/Notes/Rollouts/424/v3/notes.json):
// SimplePublicObjectBatchInputForCreate inputs (properties and associations required; a note needs its
// hs_timestamp, "Required" in HubSpot's notes guide, crm-notes-v3); 201.
func (f *HubSpot) createNotes(w http.ResponseWriter, r *http.Request) {
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
		if (*x.Properties)["hs_timestamp"] == "" {
			hsInvalidProperties(w, []hsPropErr{{Message: "hs_timestamp is required", Error: "REQUIRED", Name: "hs_timestamp"}})
			return
		}
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, x := range *in.Inputs {
		for _, a := range *x.Associations {
			if f.contacts[*a.To.ID] == nil {
				hsBad(w, "One or more associations are invalid: contact "+*a.To.ID+" does not exist")
				return
			}
		}
	}
	var results []map[string]any
	for _, x := range *in.Inputs {
		for _, a := range *x.Associations {
			c := f.contacts[*a.To.ID]
			c.Notes = append(c.Notes, (*x.Properties)["hs_note_body"])
		}
		now := time.Now().UTC().Format(time.RFC3339Nano)
		results = append(results, map[string]any{"id": f.newID(), "properties": *x.Properties, "createdAt": now, "updatedAt": now, "archived": false})
	}
	hsBatchAnswerStatus(w, http.StatusCreated, results, nil)
}

// propertyJSON is Property (PublicApiSpecs/CRM/Properties/Rollouts/145899/v3/properties.json: name, label,
// type, fieldType, groupName, description and options required).
func (f *HubSpot) propertyJSON(name string) map[string]any {
	p := map[string]any{"name": name, "label": name, "type": "string", "fieldType": "text", "groupName": "contactinformation",
		"description": "", "options": []any{}}
	if opts := f.options(name); opts != nil {
		var out []any
		for i, s := range opts {
			out = append(out, map[string]any{"value": s, "label": s, "displayOrder": i, "hidden": false})
		}
		p["type"], p["fieldType"], p["options"] = "enumeration", "radio", out
	}
	return p
}

func (f *HubSpot) listProperties(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []map[string]any
	for _, name := range sortedKeys(f.props) {
		out = append(out, f.propertyJSON(name))
	}
	writeJSON(w, http.StatusOK, map[string]any{"results": out})
}

func (f *HubSpot) getProperty(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if !f.props[r.PathValue("name")] {
		hsError(w, http.StatusNotFound, "OBJECT_NOT_FOUND", "property "+r.PathValue("name")+" does not exist")
		return
	}
	writeJSON(w, http.StatusOK, f.propertyJSON(r.PathValue("name")))
}

// POST /crm/v3/properties/contacts PropertyCreate: name, label, type, fieldType and groupName required;
// type and fieldType from their enums. 201 Property; 409 when the name is taken.
func (f *HubSpot) createProperty(w http.ResponseWriter, r *http.Request) {
	var in struct {
		Name        *string `json:"name"`
		Label       *string `json:"label"`
		Type        *string `json:"type"`
		FieldType   *string `json:"fieldType"`
		GroupName   *string `json:"groupName"`
		Description string  `json:"description"`
		FormField   bool    `json:"formField"`
	}
	if !hsDecode(w, r, &in) || !hsRequired(w, "PropertyCreate", missing("fieldType", in.FieldType == nil, "groupName", in.GroupName == nil,
		"label", in.Label == nil, "name", in.Name == nil, "type", in.Type == nil)...) {
		return
	}
	if !slices.Contains([]string{"bool", "date", "datetime", "enumeration", "number", "phone_number", "string"}, *in.Type) ||
		!slices.Contains([]string{"booleancheckbox", "calculation_equation", "checkbox", "date", "file", "html", "number", "phonenumber",
			"radio", "select", "text", "textarea"}, *in.FieldType) {
		hsBad(w, "type or fieldType is not one of the allowed values")
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if *in.Name == "" || f.props[*in.Name] {
		hsError(w, http.StatusConflict, "OBJECT_ALREADY_EXISTS", "A property named '"+*in.Name+"' already exists.")
		return
	}
	f.props[*in.Name] = true
	writeJSON(w, http.StatusCreated, f.propertyJSON(*in.Name))
}

package crmfake

import (
	"net/http"
	"strings"
	"time"
)

type hsBatchIn struct {
	Properties []string `json:"properties"`
	IDProperty string   `json:"idProperty"`
	Inputs     []struct {
		ID         string            `json:"id"`
		IDProperty string            `json:"idProperty"`
		Properties map[string]string `json:"properties"`
		TraceID    string            `json:"objectWriteTraceId"`
	} `json:"inputs"`
}

const hsMaxInputs = 100

func (f *HubSpot) list(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	var out []map[string]any
	for _, id := range f.order {
		out = append(out, f.objectJSON(f.contacts[id], nil))
	}
	f.mu.Unlock()
	writeJSON(w, http.StatusOK, map[string]any{"results": nonNil(page(out, r.URL.Query().Get("limit"), ""))})
}

// POST /crm/v3/objects/contacts: 409 CONFLICT "Existing ID: N" when the email exists.
func (f *HubSpot) create(w http.ResponseWriter, r *http.Request) {
	var in struct {
		Properties map[string]string `json:"properties"`
	}
	if !decode(w, r, &in, hsBad) {
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if p := f.unknownProperty(in.Properties); p != "" {
		hsBad(w, "Property values were not valid: [{\"isValid\":false,\"message\":\"Property \\\""+p+"\\\" does not exist\",\"error\":\"PROPERTY_DOESNT_EXIST\",\"name\":\""+p+"\"}]")
		return
	}
	if c := f.byEmail(in.Properties["email"]); c != nil {
		hsError(w, http.StatusConflict, "CONFLICT", "Contact already exists. Existing ID: "+c.ID)
		return
	}
	c := f.insert(map[string]string{})
	f.set(c, r.URL.Path, in.Properties)
	writeJSON(w, http.StatusCreated, f.objectJSON(c, nil))
}

func (f *HubSpot) batchRead(w http.ResponseWriter, r *http.Request) {
	var in hsBatchIn
	if !decode(w, r, &in, hsBad) || !hsBatchSize(w, len(in.Inputs)) {
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	var results []map[string]any
	var missing []string
	for _, x := range in.Inputs {
		var c *HSContact
		if in.IDProperty == "email" {
			c = f.byEmail(x.ID)
		} else {
			c = f.contacts[x.ID]
		}
		if c == nil {
			missing = append(missing, x.ID)
			continue
		}
		results = append(results, f.objectJSON(c, in.Properties))
	}
	var errs []map[string]any
	if len(missing) > 0 {
		errs = append(errs, map[string]any{"status": "error", "category": "OBJECT_NOT_FOUND",
			"message": "Could not get some CONTACT objects, they may be deleted or not exist. Check that ids are valid.",
			"context": map[string][]string{"ids": missing}})
	}
	hsBatchAnswer(w, results, errs)
}

func (f *HubSpot) batchUpdate(w http.ResponseWriter, r *http.Request) {
	var in hsBatchIn
	if !decode(w, r, &in, hsBad) || !hsBatchSize(w, len(in.Inputs)) {
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, x := range in.Inputs {
		if p := f.unknownProperty(x.Properties); p != "" {
			hsBad(w, "Property values were not valid: [{\"isValid\":false,\"message\":\"Property \\\""+p+"\\\" does not exist\",\"error\":\"PROPERTY_DOESNT_EXIST\",\"name\":\""+p+"\"}]")
			return
		}
	}
	var results []map[string]any
	var missing []string
	for _, x := range in.Inputs {
		c := f.contacts[x.ID]
		if c == nil {
			missing = append(missing, x.ID)
			continue
		}
		f.set(c, r.URL.Path, x.Properties)
		results = append(results, f.objectJSON(c, nil))
	}
	var errs []map[string]any
	if len(missing) > 0 {
		errs = append(errs, map[string]any{"status": "error", "category": "OBJECT_NOT_FOUND",
			"message": "Could not find some CONTACT objects", "context": map[string][]string{"ids": missing}})
	}
	hsBatchAnswer(w, results, errs)
}

// batchUpsert matches inputs by email. An invalid email or a registered conflict is a per-input error
// in a 207; the other inputs are written.
func (f *HubSpot) batchUpsert(w http.ResponseWriter, r *http.Request) {
	var in hsBatchIn
	if !decode(w, r, &in, hsBad) || !hsBatchSize(w, len(in.Inputs)) {
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, x := range in.Inputs {
		if x.IDProperty != "email" {
			hsBad(w, "idProperty must be a unique property such as email")
			return
		}
		if p := f.unknownProperty(x.Properties); p != "" {
			hsBad(w, "Property values were not valid: [{\"isValid\":false,\"error\":\"PROPERTY_DOESNT_EXIST\",\"name\":\""+p+"\"}]")
			return
		}
	}
	var results, errs []map[string]any
	for _, x := range in.Inputs {
		email := strings.ToLower(strings.TrimSpace(x.ID))
		ctx := map[string][]string{"ids": {x.ID}}
		if x.TraceID != "" {
			ctx["objectWriteTraceId"] = []string{x.TraceID}
		}
		if id, ok := f.conflicts[email]; ok {
			errs = append(errs, map[string]any{"status": "error", "category": "CONFLICT",
				"message": "Contact already exists. Existing ID: " + id, "context": ctx})
			continue
		}
		if !strings.Contains(email, "@") || strings.ContainsAny(email, " ,") {
			errs = append(errs, map[string]any{"status": "error", "category": "VALIDATION_ERROR",
				"message": "Property values were not valid: [{\"isValid\":false,\"message\":\"Email address " + x.ID + " is invalid\",\"error\":\"INVALID_EMAIL\",\"name\":\"email\"}]",
				"context": ctx})
			continue
		}
		c := f.byEmail(email)
		isNew := c == nil
		if isNew {
			c = f.insert(map[string]string{"email": email})
		}
		f.set(c, r.URL.Path, x.Properties)
		o := f.objectJSON(c, nil)
		o["new"], o["objectWriteTraceId"] = isNew, x.TraceID
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

// hsBatchAnswer is 200 when every input succeeded, else 207 with errors and numErrors.
func hsBatchAnswer(w http.ResponseWriter, results, errs []map[string]any) {
	now := time.Now().Format(time.RFC3339Nano)
	body := map[string]any{"status": "COMPLETE", "results": nonNil(results), "startedAt": now, "completedAt": now}
	status := http.StatusOK
	if len(errs) > 0 {
		body["errors"], body["numErrors"] = errs, len(errs)
		status = http.StatusMultiStatus
	}
	writeJSON(w, status, body)
}

// search supports filterGroups of EQ filters (each group ANDs its filters; groups OR).
func (f *HubSpot) search(w http.ResponseWriter, r *http.Request) {
	var in struct {
		FilterGroups []struct {
			Filters []struct {
				PropertyName string `json:"propertyName"`
				Operator     string `json:"operator"`
				Value        string `json:"value"`
			} `json:"filters"`
		} `json:"filterGroups"`
		Properties []string `json:"properties"`
	}
	if !decode(w, r, &in, hsBad) {
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []map[string]any
	for _, id := range f.order {
		c := f.contacts[id]
		for _, g := range in.FilterGroups {
			match := len(g.Filters) > 0
			for _, fl := range g.Filters {
				if fl.Operator != "EQ" || !strings.EqualFold(c.Properties[fl.PropertyName], fl.Value) {
					match = false
				}
			}
			if match {
				out = append(out, f.objectJSON(c, in.Properties))
				break
			}
		}
	}
	writeJSON(w, http.StatusOK, map[string]any{"total": len(out), "results": nonNil(out)})
}

func (f *HubSpot) createNotes(w http.ResponseWriter, r *http.Request) {
	var in struct {
		Inputs []struct {
			Properties   map[string]string `json:"properties"`
			Associations []struct {
				To struct {
					ID string `json:"id"`
				} `json:"to"`
			} `json:"associations"`
		} `json:"inputs"`
	}
	if !decode(w, r, &in, hsBad) || !hsBatchSize(w, len(in.Inputs)) {
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, x := range in.Inputs {
		for _, a := range x.Associations {
			if f.contacts[a.To.ID] == nil {
				hsBad(w, "association target "+a.To.ID+" does not exist")
				return
			}
		}
	}
	var results []map[string]any
	for _, x := range in.Inputs {
		for _, a := range x.Associations {
			c := f.contacts[a.To.ID]
			c.Notes = append(c.Notes, x.Properties["hs_note_body"])
		}
		results = append(results, map[string]any{"id": f.newID(), "properties": x.Properties})
	}
	writeJSON(w, http.StatusCreated, map[string]any{"status": "COMPLETE", "results": nonNil(results)})
}

func (f *HubSpot) propertyJSON(name string) map[string]any {
	p := map[string]any{"name": name, "label": name, "type": "string", "fieldType": "text"}
	if name == "lifecyclestage" {
		var opts []any
		for i, s := range f.hsOpts.LifecycleStages {
			opts = append(opts, map[string]any{"value": s, "label": s, "displayOrder": i})
		}
		p["type"], p["fieldType"], p["options"] = "enumeration", "radio", opts
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

func (f *HubSpot) createProperty(w http.ResponseWriter, r *http.Request) {
	var in struct {
		Name string `json:"name"`
	}
	if !decode(w, r, &in, hsBad) {
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if in.Name == "" || f.props[in.Name] {
		hsError(w, http.StatusConflict, "CONFLICT", "property "+in.Name+" already exists or has no name")
		return
	}
	f.props[in.Name] = true
	writeJSON(w, http.StatusCreated, f.propertyJSON(in.Name))
}

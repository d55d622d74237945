package crmfake

import (
	"encoding/json"
	"net/http"
	"slices"
	"strconv"
	"strings"
)

// GHLField is a custom field of the location (apps/locations.json CustomFieldSchema).
type GHLField struct {
	ID, Name, FieldKey string
	// DataType is one of ghlDataTypes; "" is TEXT. CHECKBOX and MULTIPLE_OPTIONS values are arrays of
	// strings (CheckboxField / MultiSelectField field_value), NUMERICAL and MONETORY numbers.
	DataType string
	// Model is "contact" (the default) or "opportunity": an opportunity field cannot be written on a contact.
	Model   string
	Options []string // picklistOptions
}

func (x GHLField) dataType() string { return cmpOr(x.DataType, "TEXT") }
func (x GHLField) model() string    { return cmpOr(x.Model, "contact") }

// multi reports whether the field holds an array of strings.
func (x GHLField) multi() bool {
	return x.dataType() == "CHECKBOX" || x.dataType() == "MULTIPLE_OPTIONS"
}

func (x GHLField) numeric() bool { return x.dataType() == "NUMERICAL" || x.dataType() == "MONETORY" }

// value checks a field_value against the field's type (the typed variants of the contact DTOs'
// customFields: TextField … FileField) and returns what to store: one string, or the array of a multi-valued
// field. A "a;b" string for a checkbox or multi-select field is refused, as its schema wants an array.
func (x GHLField) value(at string, raw json.RawMessage) (scalar string, arr []string, msg string) {
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		return "", nil, at + "field_value must be a valid JSON value"
	}
	switch {
	case x.multi():
		items, ok := v.([]any)
		if !ok {
			return "", nil, at + "field_value must be an array of strings for a " + x.dataType() + " field"
		}
		for _, it := range items {
			s, ok := it.(string)
			if !ok {
				return "", nil, at + "field_value must be an array of strings for a " + x.dataType() + " field"
			}
			arr = append(arr, s)
		}
		return "", nonNil(arr), ""
	case x.numeric():
		switch n := v.(type) {
		case float64:
			return strconv.FormatFloat(n, 'f', -1, 64), nil, ""
		case string:
			if _, err := strconv.ParseFloat(strings.TrimSpace(n), 64); err == nil {
				return strings.TrimSpace(n), nil, ""
			}
		}
		return "", nil, at + "field_value must be a number for a " + x.dataType() + " field"
	case x.dataType() == "FILE_UPLOAD":
		if _, ok := v.(map[string]any); !ok {
			return "", nil, at + "field_value must be an object for a FILE_UPLOAD field"
		}
		return string(raw), nil, ""
	default:
		s, ok := v.(string)
		if !ok {
			return "", nil, at + "field_value must be a string for a " + x.dataType() + " field"
		}
		return s, nil, ""
	}
}

// contactField finds a contact custom field by id or by fieldKey ("contact.x" or "x").
func (f *GoHighLevel) contactField(id, key string) (GHLField, bool) {
	for _, x := range f.ghlOpts.Fields {
		if x.model() != "contact" {
			continue
		}
		if (id != "" && x.ID == id) || (key != "" && (x.FieldKey == key || x.FieldKey == "contact."+key)) {
			return x, true
		}
	}
	return GHLField{}, false
}

// ghlCFWrite is one checked custom field value of a contact write.
type ghlCFWrite struct {
	id     string
	scalar string
	arr    []string
	isArr  bool
}

// checkContactCFs reads a contact body's customFields against the location's contact fields.
func (f *GoHighLevel) checkContactCFs(raw map[string]json.RawMessage) ([]ghlCFWrite, []string) {
	v, ok := raw["customFields"]
	if !ok || isNull(v) {
		return nil, nil
	}
	items, msgs := parseCFItems("customFields", v, true)
	if len(msgs) > 0 {
		return nil, msgs
	}
	var out []ghlCFWrite
	for i, it := range items {
		at := "customFields." + strconv.Itoa(i) + "."
		x, ok := f.contactField(it.ID, it.Key)
		if !ok {
			msgs = append(msgs, at+"custom field "+cmpOr(it.ID, it.Key)+" does not exist for contacts of this location")
			continue
		}
		if it.FieldValue == nil {
			continue
		}
		s, arr, msg := x.value(at, it.FieldValue)
		if msg != "" {
			msgs = append(msgs, msg)
			continue
		}
		out = append(out, ghlCFWrite{id: x.ID, scalar: s, arr: arr, isArr: x.multi()})
	}
	return out, msgs
}

// GET /locations/{locationId}/customFields?model=contact|opportunity|all (apps/locations.json): the model
// query is optional and its default is not documented; the fake answers every field when it is absent, so
// an adapter that leaves it out meets the opportunity fields too.
func (f *GoHighLevel) listFields(w http.ResponseWriter, r *http.Request) {
	if !f.checkLocation(w, r.PathValue("loc")) {
		return
	}
	model := r.URL.Query().Get("model")
	if model != "" && !slices.Contains([]string{"contact", "opportunity", "all"}, model) {
		ghl422(w, "model must be one of the following values: contact, opportunity, all")
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	out := []any{}
	for i, x := range f.ghlOpts.Fields {
		if model != "" && model != "all" && x.model() != model {
			continue
		}
		out = append(out, ghlFieldJSON(x, i, f.ghlOpts.LocationID))
	}
	writeJSON(w, http.StatusOK, map[string]any{"customFields": out})
}

func ghlFieldJSON(x GHLField, position int, loc string) map[string]any {
	return map[string]any{"id": x.ID, "name": x.Name, "fieldKey": x.FieldKey, "dataType": x.dataType(), "model": x.model(),
		"position": position, "picklistOptions": nonNil(x.Options), "locationId": loc}
}

// POST /locations/{locationId}/customFields CreateCustomFieldsDTO: 201 {"customField": {...}}. The model
// property is optional and its default undocumented; the fake files a field without one as a contact field.
func (f *GoHighLevel) createField(w http.ResponseWriter, r *http.Request) {
	if !f.checkLocation(w, r.PathValue("loc")) {
		return
	}
	raw, ok := checkBody(w, r, ghlCreateFieldDTO)
	if !ok {
		return
	}
	name, dataType := deref(optString(raw, "name")), deref(optString(raw, "dataType"))
	model := cmpOr(deref(optString(raw, "model")), "contact")
	f.mu.Lock()
	defer f.mu.Unlock()
	key := model + "." + strings.ToLower(strings.ReplaceAll(strings.TrimSpace(name), " ", "_"))
	for _, x := range f.ghlOpts.Fields {
		if x.FieldKey == key {
			writeJSON(w, http.StatusBadRequest, map[string]any{"statusCode": 400, "message": "Custom field with the same name already exists"})
			return
		}
	}
	x := GHLField{ID: "cf" + f.newID(), Name: name, FieldKey: key, DataType: dataType, Model: model}
	f.ghlOpts.Fields = append(f.ghlOpts.Fields, x)
	writeJSON(w, http.StatusCreated, map[string]any{"customField": ghlFieldJSON(x, len(f.ghlOpts.Fields)-1, f.ghlOpts.LocationID)})
}

// customJSON renders a contact's custom field values as GET /contacts/{id} does: [{"id","value"}], an
// array for multi-valued fields and a number for numeric ones.
func (f *GoHighLevel) customJSON(c *GHLContact) []any {
	out := []any{}
	ids := slices.Concat(sortedKeys(c.CustomFields), sortedKeys(c.CustomArrays))
	slices.Sort(ids)
	for _, id := range slices.Compact(ids) {
		if arr, ok := c.CustomArrays[id]; ok {
			out = append(out, map[string]any{"id": id, "value": slices.Clone(arr)})
			continue
		}
		v := c.CustomFields[id]
		if x, ok := f.contactField(id, ""); ok && x.numeric() {
			if n, err := strconv.ParseFloat(v, 64); err == nil {
				out = append(out, map[string]any{"id": id, "value": n})
				continue
			}
		}
		out = append(out, map[string]any{"id": id, "value": v})
	}
	return out
}

// Fields returns the location's custom fields, the created ones included.
func (f *GoHighLevel) Fields() []GHLField {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.ghlOpts.Fields)
}

package crmfake

import (
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strings"
)

// The request bodies the GoHighLevel fake accepts, property by property, as the v2 OpenAPI description
// declares them (GoHighLevel/highlevel-api-docs apps/contacts.json, apps/opportunities.json,
// apps/locations.json; components.schemas named in each table). GHL validates bodies with NestJS's
// ValidationPipe: a property the schema does not declare is refused with 422
// {"statusCode":422,"message":["property X should not exist"],"error":"Unprocessable Entity"} (seen for
// UpsertContactDto in the docs repository's issue 262), a missing required one or one of the wrong type
// with 422 and class-validator's messages.

type ghlKind int

const (
	ghlString ghlKind = iota
	ghlBool
	ghlNumber
	ghlStrings // array of strings
	ghlObject
	ghlAny            // the schema allows several shapes (dateOfBirth: object or string)
	ghlArray          // an array of objects the fake does not look into
	ghlContactCFs     // contacts' customFields: anyOf TextField … FileField, each with a required id
	ghlOpportunityCFs // opportunities' customFields: customFieldsInput{String,Array,Object}Schema
)

type ghlProp struct {
	kind     ghlKind
	nullable bool     // the schema marks it nullable: JSON null is accepted
	enum     []string // allowed values of a string
}

type ghlDTO struct {
	name     string
	props    map[string]ghlProp
	required []string
}

func str() ghlProp                  { return ghlProp{kind: ghlString} }
func nstr() ghlProp                 { return ghlProp{kind: ghlString, nullable: true} }
func kind(k ghlKind) ghlProp        { return ghlProp{kind: k} }
func enum(values ...string) ghlProp { return ghlProp{kind: ghlString, enum: values} }
func withProps(base map[string]ghlProp, extra map[string]ghlProp, drop ...string) map[string]ghlProp {
	out := map[string]ghlProp{}
	for k, v := range base {
		if !slices.Contains(drop, k) {
			out[k] = v
		}
	}
	for k, v := range extra {
		out[k] = v
	}
	return out
}

// ghlCreateContactProps: CreateContactDto (required: locationId).
var ghlCreateContactProps = map[string]ghlProp{
	"firstName": nstr(), "lastName": nstr(), "name": nstr(), "email": nstr(), "locationId": str(), "gender": str(),
	"phone": nstr(), "address1": nstr(), "city": nstr(), "state": nstr(), "postalCode": str(), "website": nstr(),
	"timezone": nstr(), "dnd": kind(ghlBool), "dndSettings": kind(ghlObject), "inboundDndSettings": kind(ghlObject),
	"tags": kind(ghlStrings), "customFields": kind(ghlContactCFs), "source": str(),
	"dateOfBirth": {kind: ghlAny, nullable: true}, "country": str(), "companyName": nstr(), "assignedTo": str(),
}

var (
	ghlCreateContactDTO = ghlDTO{name: "CreateContactDto", props: ghlCreateContactProps, required: []string{"locationId"}}
	// UpsertContactDto: CreateContactDto's properties plus createNewIfDuplicateAllowed.
	ghlUpsertContactDTO = ghlDTO{name: "UpsertContactDto", required: []string{"locationId"},
		props: withProps(ghlCreateContactProps, map[string]ghlProp{"createNewIfDuplicateAllowed": kind(ghlBool)})}
	// UpdateContactDto declares neither locationId, gender nor companyName: PUT /contacts/{id} cannot set the
	// company (only create and upsert can).
	ghlUpdateContactDTO = ghlDTO{name: "UpdateContactDto",
		props: withProps(ghlCreateContactProps, map[string]ghlProp{"source": nstr(), "assignedTo": nstr()},
			"locationId", "gender", "companyName")}
	ghlTagsDTO  = ghlDTO{name: "TagsDTO", props: map[string]ghlProp{"tags": kind(ghlStrings)}, required: []string{"tags"}}
	ghlNotesDTO = ghlDTO{name: "NotesDTO", required: []string{"body"},
		props: map[string]ghlProp{"userId": str(), "body": str(), "title": str(), "color": str(), "pinned": kind(ghlBool)}}
	ghlCreateTaskDTO = ghlDTO{name: "CreateTaskParams", required: []string{"title", "dueDate", "completed"},
		props: map[string]ghlProp{"title": str(), "body": str(), "dueDate": str(), "completed": kind(ghlBool), "assignedTo": str()}}
	ghlWorkflowDTO = ghlDTO{name: "CreateWorkflowDto", props: map[string]ghlProp{"eventStartTime": str()}}

	// Opportunity status: CreateDto / UpdateOpportunityDto status enum.
	ghlOppStatus = []string{"open", "won", "lost", "abandoned", "all"}
	// CreateDto (POST /opportunities/): pipelineId, locationId, name, status and contactId are required.
	ghlCreateOppDTO = ghlDTO{name: "CreateDto", required: []string{"pipelineId", "locationId", "name", "status", "contactId"},
		props: map[string]ghlProp{"pipelineId": str(), "locationId": str(), "name": str(), "pipelineStageId": str(),
			"status": enum(ghlOppStatus...), "contactId": str(), "monetaryValue": kind(ghlNumber), "assignedTo": str(),
			"customFields": kind(ghlOpportunityCFs)}}
	// UpdateOpportunityDto (PUT /opportunities/{id}): nothing is required; there is no contactId or locationId.
	ghlUpdateOppDTO = ghlDTO{name: "UpdateOpportunityDto",
		props: map[string]ghlProp{"pipelineId": str(), "name": str(), "pipelineStageId": str(), "status": enum(ghlOppStatus...),
			"monetaryValue": kind(ghlNumber), "assignedTo": str(), "customFields": kind(ghlOpportunityCFs)}}
	// CreateCustomFieldsDTO (POST /locations/{id}/customFields, apps/locations.json): name and dataType
	// required; dataType's values are custom-fields.json's ICustomField enum plus EMAIL.
	ghlCreateFieldDTO = ghlDTO{name: "CreateCustomFieldsDTO", required: []string{"name", "dataType"},
		props: map[string]ghlProp{"name": str(), "dataType": enum(ghlDataTypes...), "placeholder": str(),
			"acceptedFormat": kind(ghlStrings), "isMultipleFile": kind(ghlBool), "maxNumberOfFiles": kind(ghlNumber),
			"textBoxListOptions": kind(ghlArray), "position": kind(ghlNumber), "model": enum("contact", "opportunity")}}
)

// ghlDataTypes are the custom field types (apps/custom-fields.json ICustomField.dataType, apps/locations.json
// CreateCustomFieldsDTO).
var ghlDataTypes = []string{"TEXT", "LARGE_TEXT", "NUMERICAL", "PHONE", "MONETORY", "CHECKBOX", "SINGLE_OPTIONS",
	"MULTIPLE_OPTIONS", "DATE", "TEXTBOX_LIST", "FILE_UPLOAD", "RADIO", "EMAIL"}

// ghlCFItem is one entry of a customFields array. The contact variants (TextField, …, MultiSelectField,
// FileField) all declare id, key and field_value and require id; the opportunity variants
// (customFieldsInput*Schema) declare the same three.
type ghlCFItem struct {
	ID, Key    string
	FieldValue json.RawMessage
}

// checkBody validates a JSON body against dto and returns its properties, or writes GHL's answer (400 for
// a body that is not a JSON object, 422 with every message otherwise) and returns false.
func checkBody(w http.ResponseWriter, r *http.Request, dto ghlDTO) (map[string]json.RawMessage, bool) {
	body, _ := readAll(r)
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(body, &raw); err != nil || raw == nil {
		ghlBad(w, "Unexpected token in JSON body")
		return nil, false
	}
	var msgs []string
	for _, k := range slices.Sorted(maps.Keys(raw)) {
		p, ok := dto.props[k]
		if !ok {
			msgs = append(msgs, "property "+k+" should not exist")
			continue
		}
		msgs = append(msgs, checkValue(k, p, raw[k])...)
	}
	for _, k := range dto.required {
		if v, ok := raw[k]; !ok || isNull(v) || string(v) == `""` {
			msgs = append(msgs, k+" should not be empty")
		}
	}
	if len(msgs) > 0 {
		ghl422(w, msgs...)
		return nil, false
	}
	return raw, true
}

func isNull(v json.RawMessage) bool { return strings.TrimSpace(string(v)) == "null" }

// checkValue returns class-validator's messages for one property value.
func checkValue(name string, p ghlProp, v json.RawMessage) []string {
	if isNull(v) {
		if p.nullable || p.kind == ghlAny {
			return nil
		}
		return []string{name + " should not be null"}
	}
	var x any
	_ = json.Unmarshal(v, &x)
	switch p.kind {
	case ghlString:
		s, ok := x.(string)
		if !ok {
			return []string{name + " must be a string"}
		}
		if len(p.enum) > 0 && !slices.Contains(p.enum, s) {
			return []string{name + " must be one of the following values: " + strings.Join(p.enum, ", ")}
		}
	case ghlBool:
		if _, ok := x.(bool); !ok {
			return []string{name + " must be a boolean value"}
		}
	case ghlNumber:
		if _, ok := x.(float64); !ok {
			return []string{name + " must be a number conforming to the specified constraints"}
		}
	case ghlObject:
		if _, ok := x.(map[string]any); !ok {
			return []string{name + " must be an object"}
		}
	case ghlStrings:
		arr, ok := x.([]any)
		if !ok {
			return []string{name + " must be an array"}
		}
		for _, e := range arr {
			if _, ok := e.(string); !ok {
				return []string{"each value in " + name + " must be a string"}
			}
		}
	case ghlArray:
		if _, ok := x.([]any); !ok {
			return []string{name + " must be an array"}
		}
	case ghlContactCFs, ghlOpportunityCFs:
		_, msgs := parseCFItems(name, v, p.kind == ghlContactCFs)
		return msgs
	}
	return nil
}

// parseCFItems reads a customFields array: each entry an object of id, key and field_value only; contact
// entries need an id (every contact variant requires it), opportunity entries an id or a key.
func parseCFItems(name string, v json.RawMessage, needID bool) ([]ghlCFItem, []string) {
	var arr []map[string]json.RawMessage
	if err := json.Unmarshal(v, &arr); err != nil {
		return nil, []string{name + " must be an array of objects"}
	}
	var items []ghlCFItem
	var msgs []string
	for i, e := range arr {
		at := fmt.Sprintf("%s.%d.", name, i)
		var it ghlCFItem
		for _, k := range slices.Sorted(maps.Keys(e)) {
			switch k {
			case "id", "key":
				var s string
				if json.Unmarshal(e[k], &s) != nil {
					msgs = append(msgs, at+k+" must be a string")
				}
				if k == "id" {
					it.ID = s
				} else {
					it.Key = s
				}
			case "field_value":
				it.FieldValue = e[k]
			default:
				msgs = append(msgs, at+"property "+k+" should not exist")
			}
		}
		if needID && it.ID == "" {
			msgs = append(msgs, at+"id should not be empty")
		}
		if !needID && it.ID == "" && it.Key == "" {
			msgs = append(msgs, at+"id or key should not be empty")
		}
		items = append(items, it)
	}
	return items, msgs
}

// optString decodes an optional string property: nil when absent or null.
func optString(raw map[string]json.RawMessage, k string) *string {
	v, ok := raw[k]
	if !ok || isNull(v) {
		return nil
	}
	var s string
	if json.Unmarshal(v, &s) != nil {
		return nil
	}
	return &s
}

func optBool(raw map[string]json.RawMessage, k string) bool {
	var b bool
	_ = json.Unmarshal(raw[k], &b)
	return b
}

func optStrings(raw map[string]json.RawMessage, k string) []string {
	v, ok := raw[k]
	if !ok || isNull(v) {
		return nil
	}
	var out []string
	_ = json.Unmarshal(v, &out)
	if out == nil {
		out = []string{}
	}
	return out
}

package crmfake

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
)

// HubSpot's error bodies, from HubSpot-public-api-spec-collection PublicApiSpecs/CRM/Contacts/Rollouts/424/v3/
// contacts.json: a failed request answers `Error` (category, correlationId and message required; context maps
// names to arrays of strings; subCategory a string), and each failed input of a batch is a `StandardError` in
// the 207 answer's errors[] (status, category, message, context, links and errors required; subCategory is an
// OBJECT, often {}).

// hsError answers a whole request with HubSpot's Error shape.
func hsError(w http.ResponseWriter, status int, category, msg string) {
	hsErrorWith(w, status, category, msg, nil, nil)
}

// hsErrorWith is hsError with context and ErrorDetail entries.
func hsErrorWith(w http.ResponseWriter, status int, category, msg string, ctx map[string][]string, details []map[string]any) {
	body := map[string]any{"status": "error", "message": msg, "correlationId": "aeb5f871-7f07-4993-9211-075dc63e7cbf",
		"category": category, "links": map[string]string{"knowledge-base": "https://www.hubspot.com/products/service/knowledge-base"}}
	if ctx != nil {
		body["context"] = ctx
	}
	if details != nil {
		body["errors"] = details
	}
	writeJSON(w, status, body)
}

// hsStandardError is one input's error in a 207 answer.
func hsStandardError(category, msg string, ctx map[string][]string) map[string]any {
	if ctx == nil {
		ctx = map[string][]string{}
	}
	return map[string]any{"status": "error", "category": category, "subCategory": map[string]any{}, "message": msg,
		"context": ctx, "links": map[string]string{}, "errors": []any{}}
}

func hsBad(w http.ResponseWriter, msg string) {
	hsError(w, http.StatusBadRequest, "VALIDATION_ERROR", msg)
}

// hsPropErr is one property that failed validation, as HubSpot lists them in "Property values were not
// valid: [...]" (error PROPERTY_DOESNT_EXIST, INVALID_OPTION, READ_ONLY_VALUE, INVALID_EMAIL).
type hsPropErr struct {
	IsValid bool   `json:"isValid"`
	Message string `json:"message"`
	Error   string `json:"error"`
	Name    string `json:"name"`
}

// hsPropertyMessage is the message of a property validation failure.
func hsPropertyMessage(errs []hsPropErr) string {
	b, _ := json.Marshal(errs)
	return "Property values were not valid: " + string(b)
}

// hsInvalidProperties answers 400 VALIDATION_ERROR for property values, with one ErrorDetail per property.
func hsInvalidProperties(w http.ResponseWriter, errs []hsPropErr) {
	details := make([]map[string]any, len(errs))
	for i, e := range errs {
		details[i] = map[string]any{"message": e.Message, "code": e.Error, "context": map[string][]string{"propertyName": {e.Name}}}
	}
	hsErrorWith(w, http.StatusBadRequest, "VALIDATION_ERROR", hsPropertyMessage(errs), nil, details)
}

// hsDecode reads a request body the way HubSpot's JSON binding does: a field the schema does not declare, a
// value of the wrong type or trailing data is a 400 "Invalid input JSON".
func hsDecode(w http.ResponseWriter, r *http.Request, v any) bool {
	raw, err := readAll(r)
	if err == nil {
		dec := json.NewDecoder(bytes.NewReader(raw))
		dec.DisallowUnknownFields()
		if err = dec.Decode(v); err == nil && dec.More() {
			err = errors.New("unexpected data after the JSON value")
		}
	}
	if err != nil {
		hsBad(w, "Invalid input JSON on line 1: "+err.Error())
		return false
	}
	return true
}

// hsRequired answers 400 naming the required attributes that are not set; false when some are missing.
func hsRequired(w http.ResponseWriter, schema string, missing ...string) bool {
	if len(missing) == 0 {
		return true
	}
	hsBad(w, fmt.Sprintf("Invalid input JSON: Cannot build %s, some of required attributes are not set [%s]", schema, strings.Join(missing, ", ")))
	return false
}

// missing lists the names whose flag is true.
func missing(pairs ...any) []string {
	var out []string
	for i := 0; i+1 < len(pairs); i += 2 {
		if pairs[i+1].(bool) {
			out = append(out, pairs[i].(string))
		}
	}
	return out
}

package crm

import (
	"cmp"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
)

// HubSpot's error bodies (HubSpot-public-api-spec-collection PublicApiSpecs/CRM/Contacts/Rollouts/424/v3/
// contacts.json): a failed request answers Error; each failed input of a batch is a StandardError in the 207
// answer's errors[]. Every member is treated as optional, as HubSpot's error-handling guide asks, and
// subCategory is read whatever its type: the description declares it an object in StandardError (often {})
// and a string in Error and ErrorDetail.

// hsBatchErr is one StandardError of a 207 answer.
type hsBatchErr struct {
	Status      string              `json:"status"`
	Category    string              `json:"category"`
	SubCategory json.RawMessage     `json:"subCategory"`
	Message     string              `json:"message"`
	Context     map[string][]string `json:"context"`
	ID          string              `json:"id"`
	Errors      []hsErrDetail       `json:"errors"`
}

// hsErrDetail is ErrorDetail.
type hsErrDetail struct {
	Message     string              `json:"message"`
	Code        string              `json:"code"`
	In          string              `json:"in"`
	Context     map[string][]string `json:"context"`
	SubCategory json.RawMessage     `json:"subCategory"`
}

// UnmarshalJSON keeps one malformed member from failing the whole 207 answer: a context whose values are
// not arrays of strings is dropped rather than making the written inputs look unwritten.
func (e *hsBatchErr) UnmarshalJSON(b []byte) error {
	type plain hsBatchErr
	var p plain
	if err := json.Unmarshal(b, &p); err == nil {
		*e = hsBatchErr(p)
		return nil
	}
	var loose struct {
		Status   any    `json:"status"`
		Category string `json:"category"`
		Message  string `json:"message"`
		ID       any    `json:"id"`
	}
	if err := json.Unmarshal(b, &loose); err != nil {
		return err
	}
	*e = hsBatchErr{Category: loose.Category, Message: loose.Message}
	if loose.Status != nil {
		e.Status = fmt.Sprint(loose.Status)
	}
	if loose.ID != nil {
		e.ID = fmt.Sprint(loose.ID)
	}
	return nil
}

// hsPropertyError is one entry of HubSpot's "Property values were not valid: [...]" list, or an ErrorDetail
// with a code naming a property.
type hsPropertyError struct {
	Error string `json:"error"`
	Name  string `json:"name"`
}

// hsPropertyErrors reads the property failures of an error: the JSON list HubSpot embeds in the message and
// the codes of errors[] with a propertyName in their context.
func hsPropertyErrors(message string, details []hsErrDetail) []hsPropertyError {
	var out []hsPropertyError
	if i := strings.Index(message, "["); i >= 0 && strings.Contains(message[:i], "not valid") {
		var list []hsPropertyError
		if json.Unmarshal([]byte(message[i:]), &list) == nil {
			out = append(out, list...)
		}
	}
	for _, d := range details {
		for _, name := range d.Context["propertyName"] {
			if d.Code != "" {
				out = append(out, hsPropertyError{Error: d.Code, Name: name})
			}
		}
	}
	return out
}

// classify refines HubSpot's non-2xx answers: a 429 of the daily policy is the account's daily quota (Quota,
// its RetryAfter set by do), a property the account lacks or a stage value that is not one of the stage
// property's options is a fault of the destination's setup (Setup).
func (h *hubSpot) classify(e *Error, header http.Header, body []byte) {
	var b struct {
		Category   string        `json:"category"`
		Message    string        `json:"message"`
		PolicyName string        `json:"policyName"`
		Errors     []hsErrDetail `json:"errors"`
	}
	_ = jsonUnmarshal(body, &b)
	switch {
	case e.Status == http.StatusTooManyRequests:
		if strings.EqualFold(b.PolicyName, "DAILY") || strings.TrimSpace(header.Get("X-HubSpot-RateLimit-Daily-Remaining")) == "0" {
			e.Class, e.RetryAfter = Quota, 0
			e.Message = "HubSpot's daily API limit for this account is used up (" + cmp.Or(b.Message, "policy DAILY") + ")"
		}
	case e.Status == http.StatusBadRequest:
		if msg, ok := h.setupFault(hsPropertyErrors(b.Message, b.Errors)); ok {
			e.Class, e.Message = Setup, msg
		}
	}
}

// batchErrClass classifies one input's error in a 207 answer.
func (h *hubSpot) batchErrClass(e hsBatchErr) *Error {
	msg := "hubspot: " + strings.TrimSpace(e.Category+" "+e.Message)
	if m, ok := h.setupFault(hsPropertyErrors(e.Message, e.Errors)); ok {
		return &Error{Class: Setup, Status: http.StatusBadRequest, Message: m}
	}
	switch strings.ToUpper(e.Category) {
	case "VALIDATION_ERROR", "INVALID_EMAIL", "CONFLICT":
		return &Error{Class: Invalid, Status: http.StatusBadRequest, Message: msg}
	case "OBJECT_NOT_FOUND":
		return &Error{Class: NotFound, Status: http.StatusNotFound, Message: msg}
	case "RATE_LIMITS":
		return &Error{Class: RateLimited, Status: http.StatusTooManyRequests, RetryAfter: defaultRateLimitWait, Message: msg}
	default:
		return &Error{Class: Transient, Status: http.StatusMultiStatus, Message: msg}
	}
}

// setupFault reports whether property failures are faults of the destination's setup rather than of one
// contact's data: a property leadgate writes that the account lacks (every property leadgate writes is
// named by the destination's configuration), or a stage value that is not one of the stage property's
// options. It returns the plain message the destination is paused with.
func (h *hubSpot) setupFault(errs []hsPropertyError) (string, bool) {
	var missingProps, badStage []string
	for _, e := range errs {
		switch strings.ToUpper(e.Error) {
		case "PROPERTY_DOESNT_EXIST":
			missingProps = append(missingProps, h.propertyRole(e.Name))
		case "INVALID_OPTION":
			if e.Name == h.cfg.StageField || (h.cfg.StageMode == StageModeDeal && (e.Name == "dealstage" || e.Name == "pipeline")) {
				badStage = append(badStage, e.Name)
			}
		}
	}
	slices.Sort(missingProps)
	missingProps = slices.Compact(missingProps)
	switch {
	case len(missingProps) > 0:
		return "HubSpot has no contact property " + strings.Join(missingProps, ", ") +
			": create it in HubSpot (Settings > Properties), or let Test connection create the loop-breaker fields, or change the destination's mapping", true
	case len(badStage) > 0:
		return "HubSpot refused a stage value for " + strings.Join(slices.Compact(badStage), ", ") +
			": the destination's stage map names a value that is not one of the property's options (or the pipeline's stages)", true
	}
	return "", false
}

// propertyRole names a property with the configuration that names it.
func (h *hubSpot) propertyRole(name string) string {
	role := ""
	switch {
	case name == h.cfg.LoopField:
		role = "the loop-breaker field"
	case name == h.cfg.SyncField:
		role = "the sync-timestamp field"
	case name == h.cfg.StageField:
		role = "the stage field"
	default:
		for _, lg := range sortedKeys(h.cfg.FieldMap) {
			if h.cfg.FieldMap[lg] == name {
				role = "mapped from " + lg
				break
			}
		}
	}
	if role == "" {
		return fmt.Sprintf("%q", name)
	}
	return fmt.Sprintf("%q (%s)", name, role)
}

// destinationFault reports whether err is a fault of the whole destination (its rate, quota, credentials or
// setup) rather than of one contact: the batch stops and every contact not yet written gets it.
func destinationFault(err error) bool {
	switch ClassOf(err) {
	case RateLimited, Auth, Setup, Quota:
		return err != nil
	}
	return false
}

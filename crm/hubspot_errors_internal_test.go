package crm

import (
	"encoding/json"
	"net/http"
	"testing"
)

// HubSpot error bodies are read whatever their shape: a 207 decodes when subCategory is an object or a
// string, and when one error's context is malformed the others (and the results) still decode.
func TestHubSpotBatchErrorsDecodeWhateverSubCategoryIs(t *testing.T) {
	t.Parallel()
	body := `{"status":"COMPLETE","results":[{"id":"1","properties":{}}],"errors":[
		{"status":"error","category":"VALIDATION_ERROR","subCategory":{},"message":"a","context":{"ids":["x"]}},
		{"status":"error","category":"OBJECT_NOT_FOUND","subCategory":"crm.NOT_FOUND","message":"b","context":{"ids":["y"]}},
		{"status":"error","category":"CONFLICT","subCategory":{"code":7},"message":"c","context":{"ids":"z"},"id":9}]}`
	var out hsBatchOut
	if err := json.Unmarshal([]byte(body), &out); err != nil {
		t.Fatalf("decode: %v", err)
	}
	if len(out.Results) != 1 || len(out.Errors) != 3 || out.Errors[0].Context["ids"][0] != "x" || out.Errors[1].Context["ids"][0] != "y" {
		t.Fatalf("decoded %+v", out)
	}
	if e := out.Errors[2]; e.Category != "CONFLICT" || e.Message != "c" || e.ID != "9" || e.Context != nil {
		t.Errorf("malformed error decoded as %+v, want its category, message and id kept and its context dropped", e)
	}
}

// FuzzHubSpotErrorBody: any answer body is classified without a panic, into one of the known classes,
// and a 207 body either decodes or fails cleanly.
func FuzzHubSpotErrorBody(f *testing.F) {
	f.Add(429, []byte(`{"status":"error","message":"You have reached your daily limit.","policyName":"DAILY"}`))
	f.Add(400, []byte(`{"status":"error","category":"VALIDATION_ERROR","message":"Property values were not valid: [{\"isValid\":false,\"error\":\"PROPERTY_DOESNT_EXIST\",\"name\":\"x\"}]"}`))
	f.Add(400, []byte(`{"category":"VALIDATION_ERROR","message":"not valid: [","errors":[{"code":"INVALID_OPTION","context":{"propertyName":["lifecyclestage"]}}]}`))
	f.Add(207, []byte(`{"status":"COMPLETE","results":[],"errors":[{"subCategory":{},"context":{"ids":["1"]}}]}`))
	h, err := newHubSpot(Config{Kind: KindHubSpot, APIToken: "t", LoopField: DefaultLoopField, SyncField: DefaultSyncField,
		FieldMap: map[string]string{"budget": "budget"}})
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, status int, body []byte) {
		if status < 400 || status > 599 {
			status = 400 + (status%200+200)%200
		}
		e := classifyStatus(status, http.Header{}, body)
		h.classify(e, http.Header{}, body)
		if e.Class < RateLimited || e.Class > Quota {
			t.Fatalf("class %d for status %d", e.Class, status)
		}
		var out hsBatchOut
		_ = json.Unmarshal(body, &out)
		for _, be := range out.Errors {
			_ = h.batchErrClass(be)
		}
	})
}

// A read-back holds a write when HubSpot echoes its values in its own notation (times with milliseconds,
// numbers with decimals, emails in lower case), and not when a value differs.
func TestHubSpotReadBackHoldsValuesInHubSpotsNotation(t *testing.T) {
	t.Parallel()
	written := map[string]string{"sync_timestamp": "2026-12-01T10:00:00Z", "submission_count": "3", "email": "Jane@Example.com", "lifecyclestage": ""}
	remote := map[string]string{"sync_timestamp": "2026-12-01T10:00:00.000Z", "submission_count": "3.0", "email": "jane@example.com"}
	if !holds(remote, written) {
		t.Errorf("holds(%v, %v) = false, want true", remote, written)
	}
	remote["submission_count"] = "2"
	if holds(remote, written) {
		t.Errorf("holds with a different count = true, want false")
	}
}

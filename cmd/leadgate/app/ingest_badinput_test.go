package app_test

import (
	"bytes"
	"net/http"
	"strings"
	"testing"
)

// TestIngestBadInput: malformed, oversized, mistyped and hostile bodies get
// a clear JSON error, store nothing, and leave the server healthy.
func TestIngestBadInput(t *testing.T) {
	t.Parallel()
	h := newHarness(t, opts{})
	src := h.createSource(map[string]any{"kind": "standard-webhooks"})
	signedAs := func(ct string, body []byte) delivery { return h.signed(src, ct, body, sign{}) }
	deep := strings.Repeat(`{"a":`, 1000) + `1` + strings.Repeat(`}`, 1000)
	big := append([]byte(`{"email":"big@example.com","pad":"`), bytes.Repeat([]byte("x"), 2<<20)...)
	big = append(big, `"}`...)

	cases := []struct {
		name string
		d    delivery
		want int
	}{
		{"malformed JSON", signedAs(jsonCT, []byte(`{"email":"a@example.com",`)), http.StatusBadRequest},
		{"JSON that is not an object", signedAs(jsonCT, []byte(`["a@example.com"]`)), http.StatusBadRequest},
		{"empty body", signedAs(jsonCT, nil), http.StatusBadRequest},
		{"wrong content type", signedAs("text/plain", []byte(`{"email":"a@example.com"}`)), http.StatusUnsupportedMediaType},
		{"no content type", signedAs("", []byte(`{"email":"a@example.com"}`)), http.StatusUnsupportedMediaType},
		{"2 MiB body", signedAs(jsonCT, big), http.StatusRequestEntityTooLarge},
		{"unknown token", delivery{URL: h.srv.URL + "/hooks/src_doesnotexist", ContentType: jsonCT, Body: []byte(`{}`)}, http.StatusNotFound},
		{"invalid UTF-8", signedAs(jsonCT, []byte("{\"email\":\"a\xff\xfe@example.com\"}")), http.StatusBadRequest},
		{"1000-deep nesting", signedAs(jsonCT, []byte(deep)), http.StatusBadRequest},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			h := h.with(t)
			r := h.send(c.d)
			if r.Status != c.want || r.str("error") == "" {
				t.Fatalf("got %s, want %d with a JSON error", r, c.want)
			}
			if n := h.inboxCount(); n != 0 {
				t.Fatalf("bad input stored %d events", n)
			}
			if code := h.get("/healthz").Status; code != http.StatusOK {
				t.Fatalf("healthz after bad input: %d", code)
			}
		})
	}
	h.flushDeliveries()
	// Every refusal reached a known source except the unknown token's.
	if st := h.stats(); st.Received != int64(len(cases)-1) || st.Refused != st.Received || st.Accepted != 0 {
		t.Fatalf("stats %+v: each refused delivery to a known source counts in received and refused, nothing accepted", st)
	}
	// The server still does its job.
	if r := h.send(h.swDelivery(src, "after-bad", `{"email":"fine@example.com"}`)); r.Status != http.StatusOK || r.str("status") != "queued" {
		t.Fatalf("good delivery after bad input: %s", r)
	}
}

// TestIngestIdentityProblems: a bad phone beside a good email is kept raw and
// flagged; a payload with no usable identity is stored as rejected (visible,
// never applied) and answered 200 so the sender does not retry it.
func TestIngestIdentityProblems(t *testing.T) {
	t.Parallel()
	h := newHarness(t, opts{})
	src := h.createSource(map[string]any{"kind": "standard-webhooks", "default_region": "US"})

	r := h.send(h.swDelivery(src, "absurd-phone", `{"email":"Ok@Example.com","phone":"12345678901234567890"}`))
	if r.Status != http.StatusOK || r.str("status") != "queued" {
		t.Fatalf("absurd phone beside a valid email: %s, want 200 queued", r)
	}
	e := h.api(http.MethodGet, "/events/"+r.str("event_id"), nil)
	if e.str("email") != "ok@example.com" || e.JSON["phone"] != nil || e.str("phone_raw") != "12345678901234567890" || e.str("phone_problem") == "" {
		t.Fatalf("stored event %s: want normalized email, phone null, raw phone kept and flagged", e)
	}

	r = h.send(h.swDelivery(src, "no-identity", `{"email":"not-an-email","phone":"42","first_name":"nobody"}`))
	if r.Status != http.StatusOK || r.str("status") != "rejected" || r.str("reason") == "" || r.str("event_id") == "" {
		t.Fatalf("no usable identity: %s, want 200 rejected with a reason", r)
	}
	rejected := h.events("status=rejected")
	if len(rejected) != 1 || rejected[0]["id"] != r.str("event_id") || rejected[0]["reason"] == "" {
		t.Fatalf("GET /events?status=rejected = %v, want the rejected event with its reason", rejected)
	}
	if r := h.send(h.swDelivery(src, "no-identity", `{"email":"not-an-email","phone":"42","first_name":"nobody"}`)); r.str("status") != "duplicate" {
		t.Fatalf("redelivered rejected payload: %s, want duplicate", r)
	}
	tasks := h.applyTasks()
	if len(tasks) != 1 {
		t.Fatalf("apply tasks %v, want one (the rejected event is never applied)", tasks)
	}
	if st := h.stats(); st.Received != 3 || st.Accepted != 2 || st.Rejected != 1 || st.Duplicates != 1 || st.Unresolved != 1 {
		t.Fatalf("stats %+v, want received=3 accepted=2 rejected=1 duplicates=1 unresolved=1", st)
	}
}

// TestIngestSourceLifecycle: a disabled source answers 503 (the sender keeps
// the data), an enabled one accepts again, a deleted one answers 410.
func TestIngestSourceLifecycle(t *testing.T) {
	t.Parallel()
	h := newHarness(t, opts{})
	src := h.createSource(map[string]any{"kind": "standard-webhooks"})
	path := "/sources/" + itoa(src.ID)
	d := h.swDelivery(src, "life-1", `{"email":"life@example.com"}`)

	if r := h.api(http.MethodPatch, path, map[string]any{"enabled": false}); r.Status != http.StatusOK {
		t.Fatalf("disable: %s", r)
	}
	r := h.send(d)
	if r.Status != http.StatusServiceUnavailable || r.Header.Get("Retry-After") == "" || r.str("error") == "" {
		t.Fatalf("disabled source: %s, want 503 with Retry-After", r)
	}
	if n := h.inboxCount(); n != 0 {
		t.Fatalf("disabled source stored %d events", n)
	}
	if r := h.api(http.MethodPatch, path, map[string]any{"enabled": true}); r.Status != http.StatusOK {
		t.Fatalf("enable: %s", r)
	}
	if r := h.send(d); r.Status != http.StatusOK || r.str("status") != "queued" {
		t.Fatalf("re-enabled source: %s, want 200 queued", r)
	}
	if r := h.api(http.MethodDelete, path, nil); r.Status != http.StatusNoContent {
		t.Fatalf("delete: %s", r)
	}
	if r := h.send(h.swDelivery(src, "life-2", `{"email":"life@example.com"}`)); r.Status != http.StatusGone || r.str("error") == "" {
		t.Fatalf("deleted source: %s, want 410", r)
	}
	if n := h.inboxCount(); n != 1 {
		t.Fatalf("inbox holds %d rows, want 1", n)
	}
}

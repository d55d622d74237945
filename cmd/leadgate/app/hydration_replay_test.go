package app_test

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"net/http/httptest"
	"strconv"
	"testing"

	"github.com/leadgate/leadgate/ingest/signature"
)

// graphLeads fakes the Graph API's lead read (GET /{leadgen-id}?access_token=…&fields=…)
// and refuses any token but the page's, as Graph does (code 190).
func graphLeads(t *testing.T, token *string) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		switch {
		case r.URL.Query().Get("access_token") != *token:
			w.WriteHeader(http.StatusBadRequest)
			_, _ = w.Write([]byte(`{"error":{"message":"Error validating access token: Session has expired","type":"OAuthException","code":190,"error_subcode":463}}`))
		case r.URL.Path == "/444444444444":
			_, _ = w.Write([]byte(`{"created_time":"2019-01-10T18:07:38+0000","id":"444444444444","ad_id":"444444444","form_id":"444444444444",
				"field_data":[{"name":"email","values":["Lena.Lead@Example.com"]},{"name":"full_name","values":["Lena Lead"]}]}`))
		default:
			w.WriteHeader(http.StatusBadRequest)
			_, _ = w.Write([]byte(`{"error":{"message":"Unsupported get request.","type":"GraphMethodException","code":100}}`))
		}
	}))
	t.Cleanup(srv.Close)
	return srv
}

// TestReplayedHydrationDeadLetterReachesTheCRMOnceWithItsIdentity drives Meta's
// published leadgen notification through HTTP while the page token is expired
// (a hydration_failed dead letter), renews the token, replays the dead letter
// through the API and syncs to the sandbox CRM: exactly one CRM contact, with
// the lead's email, and none without an identity.
func TestReplayedHydrationDeadLetterReachesTheCRMOnceWithItsIdentity(t *testing.T) {
	t.Parallel()
	h := newHarness(t, opts{})
	ctx := context.Background()
	pageToken := "page-token-renewed"
	graph := graphLeads(t, &pageToken)
	if r := h.api(http.MethodPut, "/hydration-providers/meta", map[string]any{"token": "page-token-expired", "base_url": graph.URL}); r.Status != http.StatusOK {
		t.Fatalf("hydration provider: %s", r)
	}
	secret, _ := signature.NewSecret("facebook-leads")
	src := h.createSource(map[string]any{"kind": "facebook-leads", "secret": secret})
	body := fixture(t, "published/facebook-leads.json")
	m := hmac.New(sha256.New, []byte(secret))
	m.Write(body)
	rep := h.send(delivery{URL: src.URL, ContentType: jsonCT, Header: http.Header{"X-Hub-Signature-256": {"sha256=" + hex.EncodeToString(m.Sum(nil))}}, Body: body})
	if rep.Status != http.StatusOK {
		t.Fatalf("delivery: %s", rep)
	}
	id := rep.str("event_id")
	if err := h.app.Applier.Apply(ctx, id); err != nil {
		t.Fatalf("apply: %v", err)
	}
	dls := h.api(http.MethodGet, "/dead-letters", nil)
	list, _ := dls.JSON["dead_letters"].([]any)
	if len(list) != 1 || list[0].(map[string]any)["kind"] != "hydration_failed" {
		t.Fatalf("dead letters %s, want one hydration_failed", dls.Raw)
	}
	dlID := strconv.Itoa(int(list[0].(map[string]any)["id"].(float64)))

	if r := h.api(http.MethodPut, "/hydration-providers/meta", map[string]any{"token": pageToken, "base_url": graph.URL}); r.Status != http.StatusOK {
		t.Fatalf("renew token: %s", r)
	}
	if r := h.api(http.MethodPost, "/dead-letters/"+dlID+"/replay", map[string]any{"mode": "apply_as_is"}); r.Status != http.StatusOK {
		t.Fatalf("replay: %s", r)
	}
	if _, err := h.app.Sync.Relay.FanOut(ctx); err != nil {
		t.Fatal(err)
	}
	dests, err := h.store.DestinationList(ctx, h.wsID())
	if err != nil || len(dests) == 0 {
		t.Fatalf("destinations %v, %v", dests, err)
	}
	for _, d := range dests {
		if _, err := h.app.Sync.Relay.Drain(ctx, d.ID); err != nil {
			t.Fatal(err)
		}
	}
	var total, withEmail int64
	if err := h.store.DB().Raw(`SELECT count(*), count(*) FILTER (WHERE email = 'lena.lead@example.com') FROM sandbox_contacts`).Row().Scan(&total, &withEmail); err != nil {
		t.Fatal(err)
	}
	if total != 1 || withEmail != 1 {
		t.Fatalf("the sandbox CRM holds %d contacts (%d with the lead's email), want exactly one with its identity", total, withEmail)
	}
	if st := h.stats(); st.Applied != 1 || st.Quarantined != 0 {
		t.Fatalf("stats %+v, want the one event applied", st)
	}
}

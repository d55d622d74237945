package app_test

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/leadgate/leadgate/crm/crmfake"
)

// TestPingPongWithAFakeCRM runs the loop through the real pipeline: ingest →
// apply → CRM sync → a fake ActiveCampaign whose automation answers every
// update with a webhook back to leadgate (issue 5).
//   - A plain echo of leadgate's own write (loop flag, same values) is dropped.
//   - An automation that keeps rewriting a field leadgate manages is a loop:
//     the circuit breaker holds it after breaker_max applied events, so the
//     contact sees at most 3 CRM writes and exactly one loop alert is raised.
//   - A rep's genuine stage change in the CRM (no loop flag) is applied.
func TestPingPongWithAFakeCRM(t *testing.T) {
	t.Parallel()
	h := newHarness(t, opts{})
	ctx := context.Background()
	fake := crmfake.NewActiveCampaign(crmfake.ACOptions{Options: crmfake.Options{Token: "ac-token"}, Fields: []crmfake.ACField{
		{ID: "1", Title: "Last automation source", Perstag: "LAST_AUTOMATION_SOURCE"}, {ID: "2", Title: "Sync timestamp", Perstag: "SYNC_TIMESTAMP"},
		{ID: "3", Title: "Lifecycle stage", Perstag: "STAGE"}, {ID: "4", Title: "Budget", Perstag: "BUDGET"}}})
	defer fake.Close()
	// Only the fake CRM: the default workspace's sandbox is paused.
	dests, err := h.store.DestinationList(ctx, 1)
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range dests {
		if r := h.api(http.MethodPatch, fmt.Sprintf("/destinations/%d", d.ID), map[string]any{"paused": true}); r.Status != http.StatusOK {
			t.Fatalf("pause sandbox: %s", r)
		}
	}
	r := h.api(http.MethodPost, "/destinations", map[string]any{"name": "AC", "kind": "activecampaign", "base_url": fake.URL, "api_token": "ac-token",
		"stage_field": "3", "field_map": map[string]string{"budget": "4"}, "rate_limit_rps": 50, "batch_size": 20})
	if r.Status != http.StatusCreated {
		t.Fatalf("create destination: %s", r)
	}
	destID := int64(r.JSON["id"].(float64))
	if r := h.api(http.MethodPut, "/guards/loop", map[string]any{"breaker_max": 2, "breaker_window_seconds": 600}); r.Status != http.StatusOK {
		t.Fatalf("loop settings: %s", r)
	}
	form := h.createSource(map[string]any{"kind": "standard-webhooks", "event_stages": map[string]string{"form_submitted": "Discovered"}})
	crmSrc := h.createSource(map[string]any{"kind": "activecampaign"})

	apply := func(rep reply) string {
		t.Helper()
		if rep.Status != http.StatusOK {
			t.Fatalf("delivery: %s", rep)
		}
		id := rep.str("event_id")
		if err := h.app.Applier.Apply(ctx, id); err != nil {
			t.Fatalf("apply: %v", err)
		}
		return id
	}
	sync := func() {
		t.Helper()
		if _, err := h.app.Sync.Relay.FanOut(ctx); err != nil {
			t.Fatal(err)
		}
		if _, err := h.app.Sync.Relay.Drain(ctx, destID); err != nil {
			t.Fatal(err)
		}
	}
	// webhook is the CRM's contact_update webhook, as an automation or a rep triggers it.
	sent := 0
	webhook := func(email string, fields map[string]string) string {
		sent++ // ActiveCampaign dates its webhooks to the second: each change here is a second apart
		at := time.Now().UTC().Add(time.Duration(sent) * time.Second)
		v := url.Values{"type": {"contact_update"}, "date_time": {at.Format(time.RFC3339)}, "contact[email]": {email}}
		for k, val := range fields {
			v.Set("contact[fields]["+k+"]", val)
		}
		return apply(h.send(h.signed(crmSrc, "application/x-www-form-urlencoded", []byte(v.Encode()), sign{})))
	}
	status := func(eventID string) (string, string) {
		e := h.api(http.MethodGet, "/events/"+eventID, nil)
		return e.str("status"), e.str("reason")
	}
	writesTo := func(email string) int {
		c, ok := fake.Contact(email)
		if !ok {
			return 0
		}
		n := 0
		for _, m := range fake.Mutations() {
			if m.ContactID == c.ID {
				n++
			}
		}
		return n
	}

	const looping = "loop.contact@example.com"
	apply(h.send(h.swDelivery(form, "msg_pp_1", `{"event_type":"form_submitted","email":"`+looping+`","fields":{"budget":"10k"}}`)))
	sync()
	c, ok := fake.Contact(looping)
	if !ok || c.Fields["1"] != "leadgate" {
		t.Fatalf("fake CRM contact after the first sync: %+v (loop flag in field 1 expected)", c)
	}
	// 1. The CRM reports leadgate's own write back: an echo, dropped.
	echo := webhook(looping, map[string]string{"last_automation_source": c.Fields["1"], "sync_timestamp": c.Fields["2"], "stage": c.Fields["3"], "budget": c.Fields["4"]})
	if st, reason := status(echo); st != "dropped" || !strings.Contains(reason, "loop_suppressed") {
		t.Fatalf("echo event: %s (%s), want dropped as an echo", st, reason)
	}
	// 2. A CRM automation fights leadgate over the budget field, round after round.
	for i := range 6 {
		sync()
		c, _ := fake.Contact(looping)
		id := webhook(looping, map[string]string{"last_automation_source": c.Fields["1"], "sync_timestamp": c.Fields["2"], "stage": c.Fields["3"],
			"budget": fmt.Sprintf("auto-%d", i)})
		st, reason := status(id)
		t.Logf("automation round %d: %s (%s); CRM budget was %q", i, st, reason, c.Fields["4"])
	}
	sync()
	if w := writesTo(looping); w > 3 {
		t.Errorf("the looping contact got %d CRM writes; the breaker must stop it at 3", w)
	}
	var alerts, held int64
	h.store.DB().Raw(`SELECT count(*) FROM outbox WHERE kind = 'alert' AND payload->>'type' = 'loop_suspected'`).Scan(&alerts)
	h.store.DB().Raw(`SELECT count(*) FROM dead_letters WHERE kind = 'loop_suspected'`).Scan(&held)
	if alerts != 1 || held == 0 {
		t.Errorf("loop alerts = %d (want 1), loop_suspected dead letters = %d (want > 0)", alerts, held)
	}

	// 3. A rep moves another contact's stage in the CRM: applied in leadgate.
	const rep = "rep.moved@example.com"
	apply(h.send(h.swDelivery(form, "msg_pp_2", `{"event_type":"form_submitted","email":"`+rep+`"}`)))
	sync()
	moved := webhook(rep, map[string]string{"stage": "SQL"})
	if st, reason := status(moved); st != "applied" {
		t.Fatalf("rep's change: %s (%s), want applied", st, reason)
	}
	list := h.api(http.MethodGet, "/contacts?email="+rep, nil)
	if cs, _ := list.JSON["contacts"].([]any); len(cs) != 1 || cs[0].(map[string]any)["stage"] != "SQL" {
		t.Fatalf("after the rep's change: %s", list)
	}
}

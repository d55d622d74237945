package app_test

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/leadgate/leadgate/models"
)

// flushDeliveries writes the refused-delivery counts ingest keeps off the
// answer path (a timer does it every second in a running process).
func (h *harness) flushDeliveries() {
	h.t.Helper()
	if err := h.app.Ingest.Deliveries.Flush(context.Background()); err != nil {
		h.t.Fatalf("flush delivery counts: %v", err)
	}
}

func TestStatsCountRefusedDeliveriesSoReceivedIsAcceptedPlusDuplicatesPlusRefused(t *testing.T) {
	t.Parallel()
	h := newHarness(t, opts{maxBody: 4096})
	src := h.createSource(map[string]any{"kind": "standard-webhooks", "name": "Web form"})
	send := func(what string, d delivery, want int) {
		t.Helper()
		if r := h.send(d); r.Status != want {
			t.Fatalf("%s: %s, want %d", what, r, want)
		}
	}
	for i := range 3 {
		send("good", h.swDelivery(src, "msg_good_"+strconv.Itoa(i), `{"email":"lead`+strconv.Itoa(i)+`@example.com"}`), http.StatusOK)
	}
	send("retry of the first", h.swDelivery(src, "msg_good_0", `{"email":"lead0@example.com"}`), http.StatusOK)
	for i := range 2 {
		send("bad signature", h.signed(src, jsonCT, []byte(`{"email":"x@example.com"}`), sign{secret: "whsec_" + strings.Repeat("QUJD", 8), id: "msg_bad_" + strconv.Itoa(i)}), http.StatusUnauthorized)
	}
	send("malformed", h.signed(src, jsonCT, []byte(`{"email":`), sign{id: "msg_malformed"}), http.StatusBadRequest)
	send("oversized", h.signed(src, jsonCT, append([]byte(`{"email":"big@example.com","pad":"`), append(bytes.Repeat([]byte("x"), 5000), `"}`...)...), sign{id: "msg_big"}), http.StatusRequestEntityTooLarge)
	h.flushDeliveries()

	st := h.stats()
	if st.Received != 8 || st.Accepted != 3 || st.Duplicates != 1 || st.Refused != 4 {
		t.Fatalf("stats %+v, want received 8 = accepted 3 + duplicates 1 + refused 4", st)
	}
	r := h.api(http.MethodGet, "/sources/"+itoa(src.ID), nil)
	var got struct {
		Deliveries struct {
			Refused          int64 `json:"refused"`
			RefusedSignature int64 `json:"refused_signature"`
			RefusedMalformed int64 `json:"refused_malformed"`
			RefusedTooLarge  int64 `json:"refused_too_large"`
		} `json:"deliveries"`
	}
	if err := json.Unmarshal(r.Raw, &got); err != nil || got.Deliveries.Refused != 4 || got.Deliveries.RefusedSignature != 2 ||
		got.Deliveries.RefusedMalformed != 1 || got.Deliveries.RefusedTooLarge != 1 {
		t.Fatalf("source deliveries %s (%v), want 4 refused: 2 signature, 1 malformed, 1 too large", r.Raw, err)
	}
}

func TestSignatureRefusalAlarmFiresOnceAndClearsWhenGoodDeliveriesResume(t *testing.T) {
	t.Parallel()
	h := newHarness(t, opts{})
	src := h.createSource(map[string]any{"kind": "standard-webhooks", "name": "Typeform"})
	oldSecret := "whsec_" + strings.Repeat("T0xE", 8) // the sender still signs with a secret that was changed
	badBatch := func(n, from int) {
		for i := range n {
			d := h.signed(src, jsonCT, []byte(`{"email":"a@example.com"}`), sign{secret: oldSecret, id: "msg_" + strconv.Itoa(from+i)})
			if r := h.send(d); r.Status != http.StatusUnauthorized {
				t.Fatalf("bad delivery: %s", r)
			}
		}
		h.flushDeliveries()
	}
	alerts := func(action string) int64 {
		var n int64
		if err := h.store.DB().Raw(`SELECT count(*) FROM outbox WHERE kind = ? AND payload->>'type' = 'signature_refused' AND payload->>'action' = ?`,
			models.OutboxAlert, action).Scan(&n).Error; err != nil {
			t.Fatal(err)
		}
		return n
	}
	firing := func() []models.FiringAlarm {
		all, err := h.store.AlarmsFiring(context.Background(), h.wsID())
		if err != nil {
			t.Fatal(err)
		}
		return all
	}

	badBatch(4, 0)
	if len(firing()) != 0 {
		t.Fatalf("4 refusals fired the alarm; the default threshold is 5 of the last 20")
	}
	badBatch(3, 4)
	got := firing()
	want := "7 of the last 7 deliveries to source Typeform were refused: signature mismatch"
	if len(got) != 1 || got[0].Kind != models.SourceAlarmSignatureRefused || got[0].Message != want || got[0].Link != "sources/"+itoa(src.ID) {
		t.Fatalf("firing alarms %+v, want one: %q", got, want)
	}
	badBatch(5, 7)
	if n := alerts("trigger"); n != 1 {
		t.Fatalf("%d trigger alerts, want exactly one for the episode", n)
	}
	r := h.api(http.MethodGet, "/sources/"+itoa(src.ID), nil)
	if !strings.Contains(string(r.Raw), "12 of the last 12 deliveries to source Typeform were refused") {
		t.Fatalf("the source shows no refusal alarm: %s", r.Raw)
	}

	for i := range 5 {
		if r := h.send(h.swDelivery(src, "msg_ok_"+strconv.Itoa(i), `{"email":"ok`+strconv.Itoa(i)+`@example.com"}`)); r.Status != http.StatusOK {
			t.Fatalf("good delivery: %s", r)
		}
	}
	h.flushDeliveries()
	if got := firing(); len(got) != 0 {
		t.Fatalf("still firing after good deliveries resumed: %+v", got)
	}
	if n := alerts("resolve"); n != 1 {
		t.Fatalf("%d resolve alerts, want one", n)
	}
	badBatch(1, 100) // one stray refusal after recovery does not fire again
	if got := firing(); len(got) != 0 || alerts("trigger") != 1 {
		t.Fatalf("a single refusal after recovery fired again: %+v", got)
	}
}

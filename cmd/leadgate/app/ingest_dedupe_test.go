package app_test

import (
	"context"
	"net/http"
	"sync"
	"testing"
	"time"
)

// burst sends the same delivery from n goroutines at once.
func (h *harness) burst(d delivery, n int) []reply {
	h.t.Helper()
	out := make([]reply, n)
	start := make(chan struct{})
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			<-start
			out[i] = h.send(d)
		})
	}
	close(start)
	wg.Wait()
	return out
}

// tally counts answers by status and collects the event ids they carry.
func tally(t testing.TB, answers []reply) (byStatus map[string]int, ids map[string]int) {
	t.Helper()
	byStatus, ids = map[string]int{}, map[string]int{}
	for _, r := range answers {
		if r.Status != http.StatusOK {
			t.Fatalf("concurrent delivery answered %s", r)
		}
		byStatus[r.str("status")]++
		ids[r.str("event_id")]++
	}
	return byStatus, ids
}

// TestIngestConcurrentDuplicates: 50 concurrent deliveries of one event
// become one inbox row and wake the apply drainers once (one batch trigger);
// 49 answers are duplicates that carry the original's id. Postgres alone
// still dedupes after Redis lost every key (FLUSHDB).
func TestIngestConcurrentDuplicates(t *testing.T) {
	t.Parallel()
	h := newHarness(t, opts{})
	src := h.createSource(map[string]any{"kind": "standard-webhooks"})
	d := h.swDelivery(src, "msg_concurrent_1", `{"event_type":"form_submitted","email":"crowd@example.com"}`)

	byStatus, ids := tally(t, h.burst(d, 50))
	if byStatus["queued"] != 1 || byStatus["duplicate"] != 49 || len(ids) != 1 {
		t.Fatalf("answers %v with ids %v; want 1 queued + 49 duplicate, all one event id", byStatus, ids)
	}
	var id string
	for k := range ids {
		id = k
	}
	if n := h.inboxCount(); n != 1 {
		t.Fatalf("inbox holds %d rows, want 1", n)
	}
	if tasks := h.applyTasks(); len(tasks) != 1 || tasks[0] != applyTrigger {
		t.Fatalf("apply tasks %v, want exactly [%s]", tasks, applyTrigger)
	}
	if st := h.stats(); st.Received != 50 || st.Accepted != 1 || st.Duplicates != 49 {
		t.Fatalf("stats %+v, want received=50 accepted=1 duplicates=49", st)
	}

	// Redis forgets everything: the fast gate and the queued task.
	if err := h.rdb.FlushDB(context.Background()).Err(); err != nil {
		t.Fatal(err)
	}
	byStatus, ids = tally(t, h.burst(d, 50))
	if byStatus["duplicate"] != 50 || len(ids) != 1 || ids[id] != 50 {
		t.Fatalf("after FLUSHDB: answers %v with ids %v; want 50 duplicates of %s", byStatus, ids, id)
	}
	if n := h.inboxCount(); n != 1 {
		t.Fatalf("after FLUSHDB: inbox holds %d rows, want 1", n)
	}
	if tasks := h.applyTasks(); len(tasks) != 0 {
		t.Fatalf("after FLUSHDB: duplicates enqueued %v", tasks)
	}
	if st := h.stats(); st.Received != 100 || st.Accepted != 1 || st.Duplicates != 99 {
		t.Fatalf("after FLUSHDB: stats %+v, want received=100 accepted=1 duplicates=99", st)
	}
	// The lost trigger comes back through the stranded sweep, once.
	h.sweep()
	h.sweep()
	if tasks := h.applyTasks(); len(tasks) != 1 || tasks[0] != applyTrigger {
		t.Fatalf("after sweeps: apply tasks %v, want exactly [%s] for %s", tasks, applyTrigger, id)
	}
}

// TestIngestContentHashWindow: a sender without delivery ids (kind token) is
// deduplicated on a hash of its normalized content within a sliding window;
// the same content after the window is a new event.
func TestIngestContentHashWindow(t *testing.T) {
	t.Parallel()
	const window = 1500 * time.Millisecond
	h := newHarness(t, opts{window: window})
	src := h.createSource(map[string]any{"kind": "token"})
	send := func(body string) reply {
		t.Helper()
		r := h.send(delivery{URL: src.URL, ContentType: jsonCT, Body: []byte(body)})
		if r.Status != http.StatusOK {
			t.Fatalf("token delivery: %s", r)
		}
		return r
	}
	const lead = `{"event_type":"form_submitted","occurred_at":"2026-11-30T08:00:00Z","email":"Hash@Example.com"}`
	start := time.Now()
	first := send(lead)
	if first.str("status") != "queued" {
		t.Fatalf("first delivery: %s", first)
	}
	id := first.str("event_id")

	// The same lead again, differently spelled (case, spacing, key order):
	// normalization makes it the same key.
	again := send(`{"email":" hash@example.COM ","occurred_at":"2026-11-30T08:00:00Z","event_type":"form_submitted"}`)
	if again.str("status") != "duplicate" || again.str("event_id") != id {
		t.Fatalf("retry within the window: %s, want duplicate of %s", again, id)
	}
	// Postgres decides when Redis has forgotten the key.
	if err := h.rdb.FlushDB(context.Background()).Err(); err != nil {
		t.Fatal(err)
	}
	if r := send(lead); r.str("status") != "duplicate" || r.str("event_id") != id {
		t.Fatalf("retry within the window after FLUSHDB: %s, want duplicate of %s", r, id)
	}
	// Another event of the same person is not a duplicate.
	if r := send(`{"event_type":"form_submitted","occurred_at":"2026-11-30T08:05:00Z","email":"hash@example.com"}`); r.str("status") != "queued" {
		t.Fatalf("a later event of the same lead: %s, want queued", r)
	}
	if elapsed := time.Since(start); elapsed >= window {
		t.Fatalf("test too slow (%s) to check the window", elapsed)
	}

	time.Sleep(window - time.Since(start) + 100*time.Millisecond)
	late := send(lead)
	if late.str("status") != "queued" || late.str("event_id") == id {
		t.Fatalf("same content after the window: %s, want a new event", late)
	}
	if r := send(lead); r.str("status") != "duplicate" || r.str("event_id") != late.str("event_id") {
		t.Fatalf("retry of the new event: %s, want duplicate of %s", r, late.str("event_id"))
	}
	if n := h.inboxCount(); n != 3 {
		t.Fatalf("inbox holds %d rows, want 3", n)
	}
	if st := h.stats(); st.Received != 6 || st.Accepted != 3 || st.Duplicates != 3 {
		t.Fatalf("stats %+v, want received=6 accepted=3 duplicates=3", st)
	}
}

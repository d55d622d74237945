package app_test

import (
	"context"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/hibiken/asynq"

	"github.com/leadgate/leadgate/internal/testkit"
	"github.com/leadgate/leadgate/jobs"
)

// ready reads /readyz.
func (h *harness) ready() (int, string) {
	h.t.Helper()
	r := h.get("/readyz")
	return r.Status, r.str("status")
}

// accept sends a standard-webhooks delivery and requires 200 with status.
func (h *harness) accept(d delivery, status string) string {
	h.t.Helper()
	r := h.send(d)
	if r.Status != http.StatusOK || r.str("status") != status || r.str("event_id") == "" {
		h.t.Fatalf("delivery: got %s, want 200 %s with an event id", r, status)
	}
	return r.str("event_id")
}

// rowsWithID counts inbox rows with the id (direct to Postgres).
func (h *harness) rowsWithID(id string) int64 {
	h.t.Helper()
	var n int64
	if err := h.store.DB().Raw("SELECT count(*) FROM events WHERE id = ?", id).Scan(&n).Error; err != nil {
		h.t.Fatal(err)
	}
	return n
}

// TestIngestPostgresDownWithoutSpool: with no spool, leadgate refuses what
// it cannot store (503 + Retry-After) and reports itself unready.
func TestIngestPostgresDownWithoutSpool(t *testing.T) {
	t.Parallel()
	h := newHarness(t, opts{pgProxy: true})
	src := h.createSource(map[string]any{"kind": "standard-webhooks"})
	h.accept(h.swDelivery(src, "warm", `{"email":"warm@example.com"}`), "queued") // caches the source
	if code, status := h.ready(); code != http.StatusOK || status != "ready" {
		t.Fatalf("readyz before the outage: %d %s, want 200 ready", code, status)
	}

	h.pg.Cut()
	r := h.send(h.swDelivery(src, "lost-1", `{"email":"lost@example.com"}`))
	if r.Status != http.StatusServiceUnavailable || r.Header.Get("Retry-After") == "" || r.str("error") == "" {
		t.Fatalf("Postgres down, no spool: %s (Retry-After %q), want 503 with Retry-After", r, r.Header.Get("Retry-After"))
	}
	if code, status := h.ready(); code != http.StatusServiceUnavailable || status != "unready" {
		t.Fatalf("readyz, Postgres down without spool: %d %s, want 503 unready", code, status)
	}
	if code := h.get("/healthz").Status; code != http.StatusOK {
		t.Fatalf("healthz during the outage: %d, want 200", code)
	}

	h.pg.Restore()
	h.accept(h.swDelivery(src, "lost-1", `{"email":"lost@example.com"}`), "queued") // the sender's retry
	if n := h.inboxCount(); n != 2 {
		t.Fatalf("inbox holds %d rows, want 2", n)
	}
	if code, status := h.ready(); code != http.StatusOK || status != "ready" {
		t.Fatalf("readyz after the outage: %d %s, want 200 ready", code, status)
	}
}

// TestIngestPostgresDownWithSpool: a known source's deliveries are fsynced to
// the spool and answered 200; retries during and after the outage answer
// "duplicate" with the spooled id; the replay stores each event exactly once
// and enqueues it. A source never seen before the outage cannot be verified,
// so its deliveries get 503. Duplicates answered during the outage are
// counted once Postgres is back (received = accepted + duplicates).
func TestIngestPostgresDownWithSpool(t *testing.T) {
	t.Parallel()
	h := newHarness(t, opts{pgProxy: true, spool: true})
	src := h.createSource(map[string]any{"kind": "standard-webhooks"})
	cold := h.createSource(map[string]any{"kind": "standard-webhooks"})
	h.accept(h.swDelivery(src, "warm", `{"email":"warm@example.com"}`), "queued")
	h.app.Trigger.Wait() // its trigger went to Redis (off the answer path) before Redis goes away

	h.pg.Cut()
	if code, status := h.ready(); code != http.StatusOK || status != "degraded" {
		t.Fatalf("readyz, Postgres down with spool: %d %s, want 200 degraded", code, status)
	}
	d1 := h.swDelivery(src, "spool-1", `{"email":"one@example.com"}`)
	d2 := h.swDelivery(src, "spool-2", `{"email":"two@example.com"}`)
	id1 := h.accept(d1, "queued")
	id2 := h.accept(d2, "queued")
	if got := h.accept(d1, "duplicate"); got != id1 {
		t.Fatalf("retry during the outage answered %s, want the spooled id %s", got, id1)
	}
	r := h.send(h.swDelivery(cold, "cold-1", `{"email":"cold@example.com"}`))
	if r.Status != http.StatusServiceUnavailable || r.Header.Get("Retry-After") == "" {
		t.Fatalf("uncached source during the outage: %s, want 503 with Retry-After", r)
	}
	if n := h.app.Spool.Pending(); n != 2 {
		t.Fatalf("spool holds %d records, want 2", n)
	}

	h.pg.Restore()
	// A retry after Postgres returned but before the replay is still the spooled event.
	if got := h.accept(d2, "duplicate"); got != id2 {
		t.Fatalf("retry before the replay answered %s, want the spooled id %s", got, id2)
	}
	n, err := h.app.Ingest.ReplaySpool(context.Background())
	if err != nil || n != 2 {
		t.Fatalf("ReplaySpool = %d, %v; want 2 records", n, err)
	}
	if got := h.accept(d1, "duplicate"); got != id1 {
		t.Fatalf("retry after the replay answered %s, want %s", got, id1)
	}
	if err := h.rdb.FlushDB(context.Background()).Err(); err != nil {
		t.Fatal(err)
	}
	if got := h.accept(d2, "duplicate"); got != id2 {
		t.Fatalf("retry after the replay and FLUSHDB answered %s, want %s", got, id2)
	}
	if n, _ := h.app.Ingest.ReplaySpool(context.Background()); n != 0 {
		t.Fatalf("a second replay replayed %d records", n)
	}
	for _, id := range []string{id1, id2} {
		if n := h.rowsWithID(id); n != 1 {
			t.Fatalf("event %s is in the inbox %d times, want once", id, n)
		}
		e := h.api(http.MethodGet, "/events/"+id, nil)
		if e.JSON["spooled"] != true || e.str("status") != "pending" {
			t.Fatalf("replayed event %s: %s, want pending and marked spooled", id, e)
		}
	}
	if n := h.inboxCount(); n != 3 {
		t.Fatalf("inbox holds %d rows, want 3 (warm + 2 replayed)", n)
	}
	// Every answered delivery is counted, also the retries answered from the spool while Postgres could
	// not count them: 7 answered 200 = 3 events + 4 duplicates.
	if st := h.stats(); st.Received != 7 || st.Accepted != 3 || st.Duplicates != 4 {
		t.Fatalf("stats %+v, want received=7 accepted=3 duplicates=4", st)
	}
	if code, status := h.ready(); code != http.StatusOK || status != "ready" {
		t.Fatalf("readyz after the outage: %d %s, want 200 ready", code, status)
	}
}

// A retry of a delivery that was stored before Postgres went away is answered "duplicate" with the
// stored event's id from the Redis fast gate, not spooled as a new event, and counted once Postgres
// takes writes again.
func TestARetryDuringAPostgresOutageIsAnsweredFromTheFastGate(t *testing.T) {
	t.Parallel()
	h := newHarness(t, opts{pgProxy: true, spool: true})
	src := h.createSource(map[string]any{"kind": "standard-webhooks"})
	d := h.swDelivery(src, "stored-before", `{"email":"before@example.com"}`)
	id := h.accept(d, "queued")
	h.gateValue("standard-webhooks:stored-before")

	h.pg.Cut()
	if got := h.accept(d, "duplicate"); got != id {
		t.Fatalf("retry during the outage answered %s, want the stored id %s", got, id)
	}
	if n := h.app.Spool.Pending(); n != 0 {
		t.Fatalf("spool holds %d records, want none: the retry is not a new event", n)
	}
	h.pg.Restore()
	// Until ingest's canary sees Postgres back, deliveries still go to the spool.
	testkit.Eventually(t, 10*time.Second, "ingest sees Postgres back", func() bool { return !h.app.Ingest.Postgres.Down() })
	h.accept(h.swDelivery(src, "after", `{"email":"after@example.com"}`), "queued")
	if n := h.rowsWithID(id); n != 1 {
		t.Fatalf("event %s is in the inbox %d times, want once", id, n)
	}
	if st := h.stats(); st.Received != 3 || st.Accepted != 2 || st.Duplicates != 1 {
		t.Fatalf("stats %+v, want received=3 accepted=2 duplicates=1", st)
	}
}

// TestIngestRedisDown: without Redis the event is still stored and answered
// 200 (and retries still dedupe in Postgres); once Redis is back the
// stranded sweep wakes the apply drainers for it, with one trigger however
// often it runs.
func TestIngestRedisDown(t *testing.T) {
	t.Parallel()
	h := newHarness(t, opts{redisProxy: true})
	src := h.createSource(map[string]any{"kind": "standard-webhooks"})
	h.accept(h.swDelivery(src, "warm", `{"email":"warm@example.com"}`), "queued")
	h.app.Trigger.Wait() // its trigger went to Redis (off the answer path) before Redis goes away

	h.redis.Cut()
	if code, status := h.ready(); code != http.StatusOK || status != "degraded" {
		t.Fatalf("readyz, Redis down: %d %s, want 200 degraded", code, status)
	}
	d := h.swDelivery(src, "no-redis-1", `{"email":"stranded@example.com"}`)
	began := time.Now()
	id := h.accept(d, "queued")
	t.Logf("a delivery while Redis is unreachable took %s", time.Since(began))
	began = time.Now()
	if got := h.accept(d, "duplicate"); got != id {
		t.Fatalf("retry while Redis is down answered %s, want %s", got, id)
	}
	t.Logf("the next one, with Redis paused, took %s", time.Since(began))
	if h.rowsWithID(id) != 1 {
		t.Fatal("the event accepted without Redis is not in the inbox")
	}
	if tasks := h.applyTasks(); len(tasks) != 1 || tasks[0] != applyTrigger {
		t.Fatalf("apply tasks during the outage %v, want only the warm-up's trigger", tasks)
	}

	h.redis.Restore()
	// A drainer took the warm-up's trigger (none runs here): only the sweep can wake one for the
	// stranded event now.
	if err := asynq.NewInspectorFromRedisClient(h.rdb).DeleteTask(jobs.QueueApply, applyTrigger); err != nil {
		t.Fatalf("take the warm-up's trigger: %v", err)
	}
	h.sweep()
	h.sweep()
	if tasks := h.applyTasks(); len(tasks) != 1 || tasks[0] != applyTrigger {
		t.Fatalf("apply tasks after the sweeps %v, want one trigger for the stranded event %s", tasks, id)
	}
	if code, status := h.ready(); code != http.StatusOK || status != "ready" {
		t.Fatalf("readyz after Redis returned: %d %s, want 200 ready", code, status)
	}
}

// Concurrent attempts of one delivery while Postgres is down (a sender's retry racing its first attempt)
// are all answered 200: one spools the event, the others are its duplicates with the same id.
func TestConcurrentRetriesDuringAPostgresOutageAreDuplicatesOfTheSpooledEvent(t *testing.T) {
	t.Parallel()
	h := newHarness(t, opts{pgProxy: true, spool: true})
	src := h.createSource(map[string]any{"kind": "standard-webhooks"})
	h.accept(h.swDelivery(src, "warm", `{"email":"warm@example.com"}`), "queued") // caches the source

	h.pg.Cut()
	d := h.swDelivery(src, "raced", `{"email":"raced@example.com"}`)
	const n = 20
	answers := make([]reply, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() { answers[i] = h.send(d) })
	}
	wg.Wait()
	ids := map[string]int{}
	statuses := map[string]int{}
	for _, a := range answers {
		if a.Status != http.StatusOK {
			t.Fatalf("an attempt during the outage answered %s, want 200", a)
		}
		ids[a.str("event_id")]++
		statuses[a.str("status")]++
	}
	if len(ids) != 1 || statuses["queued"] != 1 || statuses["duplicate"] != n-1 {
		t.Fatalf("answers: ids %v, statuses %v; want one id, 1 queued and %d duplicates", ids, statuses, n-1)
	}
	if p := h.app.Spool.Pending(); p != 1 {
		t.Fatalf("spool holds %d records, want 1", p)
	}
}

package app_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/leadgate/leadgate/internal/testkit"
)

// restartAck is one delivery's answer during the restart run.
type restartAck struct {
	sent    time.Time
	latency time.Duration
	status  int
	eventID string
	state   string
	err     error
}

// While Postgres restarts under a steady stream of deliveries, every delivery is answered 200 (the ones
// Postgres cannot take are spooled), the spool is replayed once Postgres is back, and every acknowledged
// event is in the inbox exactly once. The ack latencies before, during and after the outage are logged:
// the only timing asserted is a generous bound that separates "answered" from "left hanging".
func TestEveryDeliveryIsAnsweredWhilePostgresRestartsAndTheSpoolDrainsAfterwards(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("starts a throwaway Postgres cluster")
	}
	pg := testkit.PostgresCluster(t)
	h := newHarness(t, opts{dbURL: pg.URL("leadgate_restart"), spool: true})
	src := h.createSource(map[string]any{"kind": "standard-webhooks"})
	h.accept(h.swDelivery(src, "warm", `{"email":"warm@example.com"}`), "queued") // caches the source

	const senders, perSender = 8, 400
	work := make([][]delivery, senders)
	for s := range work {
		for i := range perSender {
			id := fmt.Sprintf("restart-%d-%d", s, i)
			work[s] = append(work[s], h.swDelivery(src, id, fmt.Sprintf(`{"email":"%s@example.com"}`, id)))
		}
	}
	client := &http.Client{Timeout: 30 * time.Second} // the generous bound: slower than this is unanswered
	stop := make(chan struct{})
	acks := make([][]restartAck, senders)
	var wg sync.WaitGroup
	for s := range senders {
		wg.Go(func() {
			for _, d := range work[s] {
				select {
				case <-stop:
					return
				default:
				}
				acks[s] = append(acks[s], sendTimed(client, d))
				time.Sleep(10 * time.Millisecond)
			}
		})
	}

	time.Sleep(time.Second)
	downAt := time.Now()
	pg.Stop()
	stoppedAt := time.Now()
	time.Sleep(2 * time.Second)
	pg.Start()
	upAt := time.Now()
	time.Sleep(2 * time.Second)
	close(stop)
	wg.Wait()

	var all []restartAck
	for _, a := range acks {
		all = append(all, a...)
	}
	ids := make([]string, 0, len(all))
	var before, during, after []time.Duration
	for _, a := range all {
		if a.err != nil || a.status != http.StatusOK || a.state != "queued" || a.eventID == "" {
			t.Errorf("delivery sent %s after the stop began: %d %s %q err=%v, want 200 queued with an id",
				a.sent.Sub(downAt).Round(time.Millisecond), a.status, a.state, a.eventID, a.err)
			continue
		}
		ids = append(ids, a.eventID)
		switch {
		case a.sent.Before(downAt):
			before = append(before, a.latency)
		case a.sent.Before(upAt):
			during = append(during, a.latency)
		default:
			after = append(after, a.latency)
		}
	}
	t.Logf("pg_ctl stop took %s, down for %s; %d deliveries answered", stoppedAt.Sub(downAt).Round(time.Millisecond),
		upAt.Sub(downAt).Round(time.Millisecond), len(all))
	t.Logf("ack latency before the stop: %s", latencySummary(before))
	t.Logf("ack latency from the stop until Postgres was back: %s", latencySummary(during))
	t.Logf("ack latency after Postgres was back: %s", latencySummary(after))
	slowest := slices.SortedFunc(slices.Values(all), func(a, b restartAck) int { return int(b.latency - a.latency) })
	for _, a := range slowest[:min(5, len(slowest))] {
		t.Logf("slow ack: sent %s after the stop began, answered in %s", a.sent.Sub(downAt).Round(time.Millisecond), a.latency.Round(time.Millisecond))
	}
	if len(during) == 0 {
		t.Fatal("no delivery was sent while Postgres was down")
	}

	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	testkit.Eventually(t, 30*time.Second, "the spool is replayed into Postgres", func() bool {
		_, _ = h.app.Ingest.ReplaySpool(ctx)
		return h.app.Spool.Pending() == 0
	})
	var rows, distinct int64
	if err := h.store.DB().WithContext(ctx).Raw("SELECT count(*), count(DISTINCT id) FROM events WHERE id IN ?",
		ids).Row().Scan(&rows, &distinct); err != nil {
		t.Fatal(err)
	}
	if distinct != int64(len(ids)) || rows != distinct {
		t.Fatalf("%d acknowledged events: %d inbox rows, %d distinct; want each exactly once", len(ids), rows, distinct)
	}
	if n := h.inboxCount(); n != int64(len(ids))+1 {
		t.Fatalf("inbox holds %d rows, want %d (warm + every acknowledged delivery once)", n, len(ids)+1)
	}
}

// sendTimed posts one delivery and reads its answer, never failing the test from a sender goroutine.
func sendTimed(client *http.Client, d delivery) restartAck {
	a := restartAck{sent: time.Now()}
	req, err := http.NewRequest(http.MethodPost, d.URL, bytes.NewReader(d.Body))
	if err != nil {
		a.err = err
		return a
	}
	for k, v := range d.Header {
		req.Header[k] = append([]string(nil), v...)
	}
	req.Header.Set("Content-Type", d.ContentType)
	resp, err := client.Do(req)
	if err != nil {
		a.err, a.latency = err, time.Since(a.sent)
		return a
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	a.latency, a.status, a.err = time.Since(a.sent), resp.StatusCode, err
	var body struct {
		Status  string `json:"status"`
		EventID string `json:"event_id"`
	}
	if json.Unmarshal(raw, &body) == nil {
		a.state, a.eventID = body.Status, body.EventID
	}
	return a
}

// latencySummary is "n=…, p50 …, p99 …, max …".
func latencySummary(ds []time.Duration) string {
	if len(ds) == 0 {
		return "n=0"
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	q := func(p float64) time.Duration { return s[int(p*float64(len(s)-1))].Round(100 * time.Microsecond) }
	return fmt.Sprintf("n=%d, p50 %s, p99 %s, max %s", len(s), q(0.50), q(0.99), s[len(s)-1].Round(100*time.Microsecond))
}

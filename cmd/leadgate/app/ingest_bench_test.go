package app_test

import (
	"bytes"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
)

// BenchmarkIngest measures POST /hooks/{token} through the real router,
// in-process (no TCP), against the real Postgres and Redis: signed
// standard-webhooks deliveries with unique ids, from 8 goroutines per CPU
// like concurrent senders. Deliveries are signed before the timer starts.
//
//	go test ./cmd/leadgate/app -run '^$' -bench BenchmarkIngest -benchtime 5000x
func BenchmarkIngest(b *testing.B) {
	b.Run("unique", func(b *testing.B) { benchIngest(b, false) })
	b.Run("duplicate", func(b *testing.B) { benchIngest(b, true) })
}

func benchIngest(b *testing.B, duplicates bool) {
	h := newHarness(b, opts{})
	router := h.srv.Config.Handler
	src := h.createSource(map[string]any{"kind": "standard-webhooks", "default_region": "US"})
	want := "queued"
	if duplicates {
		want = "duplicate"
		h.accept(h.swDelivery(src, "msg_bench_dup", `{"email":"dup@example.com"}`), "queued")
	}
	deliveries := make([]delivery, b.N)
	for i := range deliveries {
		id := fmt.Sprintf("msg_bench_%d", i)
		if duplicates {
			id = "msg_bench_dup"
		}
		body := fmt.Sprintf(`{"event_type":"form_submitted","email":"lead%d@example.com","phone":"(415) 555-%04d","first_name":"ada","last_name":"lovelace","fields":{"budget":"10k"},"attribution":{"utm_source":"ads"}}`, i, i%10000)
		deliveries[i] = h.swDelivery(src, id, body)
	}
	var next, failed atomic.Int64
	var firstErr atomic.Value
	b.SetParallelism(8)
	b.ReportAllocs()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			d := deliveries[next.Add(1)-1]
			req := httptest.NewRequest(http.MethodPost, d.URL, bytes.NewReader(d.Body))
			for k, v := range d.Header {
				req.Header[k] = v
			}
			rec := httptest.NewRecorder()
			router.ServeHTTP(rec, req)
			if rec.Code != http.StatusOK || !strings.Contains(rec.Body.String(), `"status":"`+want+`"`) {
				failed.Add(1)
				firstErr.CompareAndSwap(nil, fmt.Sprintf("%d %s", rec.Code, rec.Body.String()))
			}
		}
	})
	b.StopTimer()
	if n := failed.Load(); n > 0 {
		b.Fatalf("%d of %d deliveries not %s; first: %v", n, b.N, want, firstErr.Load())
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "deliveries/s")
}

package apply_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"
	"gorm.io/gorm"

	"github.com/leadgate/leadgate/lifecycle/apply"
	"github.com/leadgate/leadgate/models"
)

// BenchmarkApply measures apply throughput (events/s) on the real Postgres:
// b.N pre-inserted events, applied by `workers` goroutines calling
// Applier.Apply, as asynq workers would. "distinct" gives every event its own
// new contact (the form-fill shape); "hot" spreads them over 8 contacts, so
// workers collide on locks and a run drains a contact's backlog in one
// transaction. A busy answer puts the event back at the end of the queue.
//
//	go test ./lifecycle/apply -run '^$' -bench Apply -benchtime 3000x
func BenchmarkApply(b *testing.B) {
	for _, tc := range []struct {
		name     string
		contacts int // 0: one per event
		workers  int
	}{
		{"distinct/workers=1", 0, 1},
		{"distinct/workers=4", 0, 4},
		{"distinct/workers=8", 0, 8},
		{"distinct/workers=16", 0, 16},
		{"hot8/workers=1", 8, 1},
		{"hot8/workers=8", 8, 8},
	} {
		b.Run(tc.name, func(b *testing.B) {
			e := newEnv(b)
			e.saveRules(e.ws, raceRules())
			src := e.source(e.ws, "Web form", "web_form", map[string]string{"form_submitted": "Discovered", "email_replied": "Engaged"})
			ids := benchEvents(b, e, src, b.N, tc.contacts)
			stmts := countStatements(b, e.store)
			b.ResetTimer()
			start := time.Now()
			retries := applyAll(b, e.applier, ids, tc.workers)
			elapsed := time.Since(start)
			b.StopTimer()
			b.ReportMetric(float64(b.N)/elapsed.Seconds(), "events/s")
			b.ReportMetric(float64(retries)/float64(b.N), "busy/event")
			b.ReportMetric(float64(stmts.Load())/float64(b.N), "stmts/event")
			if n := e.count(`SELECT count(*) FROM events WHERE status IN ('pending','waiting','retrying')`); n != 0 {
				b.Fatalf("%d events unresolved after the run", n)
			}
		})
	}
}

// benchEvents inserts n pending events; contacts 0 gives each its own person.
func benchEvents(b *testing.B, e *env, src models.Source, n, contacts int) []string {
	b.Helper()
	items := make([]models.IngestItem, 0, n)
	ids := make([]string, 0, n)
	types := []string{"form_submitted", "email_replied", "page_viewed"}
	for i := range n {
		person := i
		if contacts > 0 {
			person = i % contacts
		}
		id := uuid.Must(uuid.NewV7()).String()
		email, phone := fmt.Sprintf("b%06d@bench.test", person), fmt.Sprintf("+1415%07d", person)
		fields, _ := json.Marshal(map[string]any{"budget": fmt.Sprint(i%7, "k"), "industry": "Retail", "employees": fmt.Sprint(10 + i%50)})
		items = append(items, models.IngestItem{Key: "k-" + id, Event: models.Event{ID: id, WorkspaceID: src.WorkspaceID, SourceID: src.ID,
			EventType: types[i%len(types)], Channel: src.Channel, OccurredAt: at(i), ReceivedAt: time.Now().UTC(), Email: &email, Phone: &phone,
			Fields: fields, Attribution: json.RawMessage(`{"utm_source":"ads"}`), Payload: json.RawMessage(`{}`), Status: models.EventPending}})
		ids = append(ids, id)
		if len(items) == 500 || i == n-1 {
			if _, err := e.store.IngestStore(e.ctx, items, time.Hour); err != nil {
				b.Fatalf("insert: %v", err)
			}
			items = items[:0]
		}
	}
	return ids
}

// applyAll applies every id with `workers` goroutines and returns how many
// busy answers were re-queued.
func applyAll(b *testing.B, a *apply.Applier, ids []string, workers int) int64 {
	queue := make(chan string, len(ids))
	for _, id := range ids {
		queue <- id
	}
	var left atomic.Int64
	left.Store(int64(len(ids)))
	var retries atomic.Int64
	var wg sync.WaitGroup
	var failed atomic.Value
	for range workers {
		wg.Go(func() {
			for left.Load() > 0 {
				var id string
				select {
				case id = <-queue:
				case <-time.After(10 * time.Millisecond):
					continue
				}
				err := a.Apply(b.Context(), id)
				var busy *apply.BusyError
				switch {
				case errors.As(err, &busy):
					retries.Add(1)
					queue <- id
				case err != nil:
					failed.Store(err)
					left.Add(-1)
				default:
					left.Add(-1)
				}
			}
		})
	}
	wg.Wait()
	if err, _ := failed.Load().(error); err != nil {
		b.Fatalf("apply: %v", err)
	}
	return retries.Load()
}

// countStatements counts the SQL statements the store runs from now on
// (transaction control — BEGIN, COMMIT, SAVEPOINT — is not included).
func countStatements(b *testing.B, st *models.Store) *atomic.Int64 {
	b.Helper()
	var n atomic.Int64
	count := func(*gorm.DB) { n.Add(1) }
	cb := st.DB().Callback()
	for name, err := range map[string]error{
		"create": cb.Create().After("*").Register("bench:count", count),
		"query":  cb.Query().After("*").Register("bench:count", count),
		"update": cb.Update().After("*").Register("bench:count", count),
		"delete": cb.Delete().After("*").Register("bench:count", count),
		"row":    cb.Row().After("*").Register("bench:count", count),
		"raw":    cb.Raw().After("*").Register("bench:count", count),
	} {
		if err != nil {
			b.Fatalf("count %s statements: %v", name, err)
		}
	}
	return &n
}

// BenchmarkRoundTrip is one `SELECT 1` through the store: the unit the
// apply cost is made of, to read BenchmarkApply against on a given machine.
func BenchmarkRoundTrip(b *testing.B) {
	e := newEnv(b)
	for _, workers := range []int{1, 8} {
		b.Run(fmt.Sprintf("workers=%d", workers), func(b *testing.B) {
			var next atomic.Int64
			var wg sync.WaitGroup
			b.ResetTimer()
			start := time.Now()
			for range workers {
				wg.Go(func() {
					for next.Add(1) <= int64(b.N) {
						var one int
						if err := e.store.DB().WithContext(b.Context()).Raw(`SELECT 1`).Scan(&one).Error; err != nil {
							b.Error(err)
							return
						}
					}
				})
			}
			wg.Wait()
			b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "stmts/s")
		})
	}
}

// BenchmarkCommit is one small write transaction (BEGIN, one INSERT,
// COMMIT): the WAL flush every apply run pays once.
func BenchmarkCommit(b *testing.B) {
	e := newEnv(b)
	for _, workers := range []int{1, 8} {
		b.Run(fmt.Sprintf("workers=%d", workers), func(b *testing.B) {
			var next atomic.Int64
			var wg sync.WaitGroup
			b.ResetTimer()
			start := time.Now()
			for range workers {
				wg.Go(func() {
					for next.Add(1) <= int64(b.N) {
						err := e.store.Tx(b.Context(), func(tx *models.Store) error {
							return tx.AuditRecord(b.Context(), models.Audit{Actor: "bench", Action: "bench.commit"})
						})
						if err != nil {
							b.Error(err)
							return
						}
					}
				})
			}
			wg.Wait()
			b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "commits/s")
		})
	}
}

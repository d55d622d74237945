package apply_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/leadgate/leadgate/lifecycle"
	"github.com/leadgate/leadgate/lifecycle/apply"
	"github.com/leadgate/leadgate/models"
)

// BenchmarkApply measures apply throughput (events/s) on the real Postgres:
// b.N pre-inserted events drained by `workers` goroutines that each apply
// batches of up to 100 (Applier.ApplyBatch, as the worker's drainer does).
// "distinct" gives every event its own new contact (the form-fill shape);
// "hot8" spreads them over 8 contacts, so workers collide on their locks and a
// batch drains a contact's backlog at once. stmts/event counts every statement
// sent to Postgres but BEGIN and COMMIT; commits/event counts the COMMITs.
//
//	go test ./lifecycle/apply -run '^$' -bench Apply -benchtime 20000x
func BenchmarkApply(b *testing.B) {
	for _, tc := range []struct {
		name     string
		contacts int // 0: one per event
		workers  int
	}{
		{"distinct/workers=1", 0, 1},
		{"distinct/workers=2", 0, 2},
		{"distinct/workers=4", 0, 4},
		{"hot8/workers=1", 8, 1},
		{"hot8/workers=2", 8, 2},
		{"hot8/workers=4", 8, 4},
	} {
		b.Run(tc.name, func(b *testing.B) {
			var stmts statementCounter
			e := newEnvWith(b, models.WithQueryTracer(&stmts))
			e.saveRules(e.ws, raceRules())
			src := e.source(e.ws, "Web form", "web_form", map[string]string{"form_submitted": "Discovered", "email_replied": "Engaged"})
			benchEvents(b, e, src, b.N, tc.contacts)
			stmts.reset()
			b.ResetTimer()
			start, cpu, pgCPU := time.Now(), processCPU(), serverCPU(b, e)
			deferred := drainAll(b, e.applier, tc.workers)
			elapsed, cpu := time.Since(start), processCPU()-cpu
			b.StopTimer()
			b.ReportMetric(float64(cpu.Microseconds())/float64(b.N), "go-cpu-µs/event")
			if pgCPU >= 0 {
				b.ReportMetric(float64((serverCPU(b, e)-pgCPU).Microseconds())/float64(b.N), "pg-cpu-µs/event")
			}
			b.ReportMetric(float64(b.N)/elapsed.Seconds(), "events/s")
			b.ReportMetric(float64(deferred)/float64(b.N), "busy/event")
			b.ReportMetric(float64(stmts.statements.Load())/float64(b.N), "stmts/event")
			b.ReportMetric(float64(stmts.commits.Load())/float64(b.N), "commits/event")
			if n := e.count(`SELECT count(*) FROM events WHERE status IN ('pending','waiting','retrying')`); n != 0 {
				b.Fatalf("%d events unresolved after the run", n)
			}
		})
	}
}

// drainAll applies batches with `workers` goroutines until a batch finds
// nothing, and returns how many claimed events were left busy for a later batch.
func drainAll(b *testing.B, a *apply.Applier, workers int) int64 {
	var deferred atomic.Int64
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for {
				claimed, busy, err := a.ApplyBatch(b.Context(), 100)
				if err != nil {
					b.Error(err)
					return
				}
				deferred.Add(int64(busy))
				if claimed == 0 {
					return
				}
				if claimed == busy {
					time.Sleep(time.Millisecond) // every contact it took is another worker's right now
				}
			}
		})
	}
	wg.Wait()
	return deferred.Load()
}

// processCPU is the CPU time this process has used (user and system).
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// serverCPU is the CPU time the Postgres backends of the benchmark's database have used, read from
// /proc: -1 when Postgres runs elsewhere. The pool keeps its connections, so the backends of a drain live
// through it.
func serverCPU(b *testing.B, e *env) time.Duration {
	var pids []int
	if err := e.store.DB().Raw(`SELECT pid FROM pg_stat_activity WHERE datname = current_database()`).Scan(&pids).Error; err != nil {
		b.Fatalf("backends: %v", err)
	}
	var ticks int64
	for _, pid := range pids {
		raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
		if err != nil {
			return -1
		}
		// Fields after the command name (which may hold spaces): utime and stime are the 12th and 13th.
		f := strings.Fields(string(raw[strings.LastIndexByte(string(raw), ')')+1:]))
		for _, v := range f[11:13] {
			n, _ := strconv.ParseInt(v, 10, 64)
			ticks += n
		}
	}
	return time.Duration(ticks) * 10 * time.Millisecond // USER_HZ is 100 on Linux
}

// statementCounter counts the statements every connection of a store sends.
type statementCounter struct {
	statements, commits atomic.Int64
}

func (c *statementCounter) TraceQueryStart(ctx context.Context, _ *pgx.Conn, d pgx.TraceQueryStartData) context.Context {
	switch q := strings.ToLower(strings.TrimSpace(d.SQL)); {
	case q == "commit":
		c.commits.Add(1)
	case strings.HasPrefix(q, "begin"):
	default:
		c.statements.Add(1)
	}
	return ctx
}

func (c *statementCounter) TraceQueryEnd(context.Context, *pgx.Conn, pgx.TraceQueryEndData) {}

func (c *statementCounter) reset() {
	c.statements.Store(0)
	c.commits.Store(0)
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

// raceRules are the default stages plus side effects on creation and on
// entering Engaged and SQL, so the outbox has something to duplicate.
func raceRules() lifecycle.Rules {
	r := lifecycle.DefaultRules()
	r.SideEffects = []lifecycle.SideEffectRule{
		{On: "created", Action: "start_onboarding"},
		{On: "enter:Engaged", Action: "nurture"},
		{On: "enter:SQL", Action: "sales_task"},
	}
	return r
}

//go:build proof

package apply_test

import (
	"math/rand/v2"
	"syscall"
	"testing"
	"time"

	"github.com/hibiken/asynq"

	"github.com/leadgate/leadgate/internal/testkit"
	"github.com/leadgate/leadgate/jobs"
	"github.com/leadgate/leadgate/models"
)

// TestWorkerCrash: the inbox is filled through the real HTTP ingest, a
// worker process starts applying and is SIGKILLed mid-run (transactions
// open, tasks active), a new worker process takes over with the stranded
// sweep the scheduler runs. Every accepted event ends with exactly one
// outcome, the outbox holds each CRM intent once per (contact, version) and
// each side effect once, and nothing stays unresolved.
func TestWorkerCrash(t *testing.T) {
	if testing.Short() {
		t.Skip("starts worker processes")
	}
	leadgateBinary(t)
	start := time.Now()
	s := newStack(t)
	s.putRules(raceRules())
	ch := s.channels()

	const n = 150
	ps := people(n, "crash.test")
	t0 := time.Now().UTC().Add(-10 * time.Minute).Truncate(time.Second)
	var all []delivery
	for i, p := range ps {
		all = append(all, ch.journey(i, p, t0)...)
	}
	sent, dups := withDuplicates(rand.New(rand.NewPCG(3, 4)), all)
	answers := s.sendAll(sent, 16)
	if answers["queued"] != len(all) || answers["duplicate"] != dups {
		t.Fatalf("ingest answers %v, want %d queued, %d duplicate", answers, len(all), dups)
	}
	t.Logf("%d deliveries stored in %s", len(sent), time.Since(start).Round(time.Millisecond))

	victim := s.worker("victim")
	var resolvedAtKill int64
	testkit.Eventually(t, 60*time.Second, "the first worker applies some events", func() bool {
		st := s.stats()
		resolvedAtKill = st.Events.Accepted - st.Events.Unresolved
		return resolvedAtKill >= int64(len(all))/4
	})
	if err := victim.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatalf("SIGKILL: %v", err)
	}
	<-victim.done
	st := s.stats()
	if st.Events.Unresolved == 0 {
		t.Fatalf("the worker finished before the kill (%+v); nothing was interrupted", st.Events)
	}
	ins := asynq.NewInspectorFromRedisClient(s.app.Redis)
	orphans, err := ins.ListActiveTasks(jobs.QueueApply)
	if err != nil {
		t.Fatalf("inspect: %v", err)
	}
	t.Logf("SIGKILL after %d of %d events resolved; %d apply tasks left orphaned \"active\"", resolvedAtKill, len(all), len(orphans))

	s.worker("successor")
	sweep := &jobs.SweepStranded{Store: s.store, Queue: s.app.Queue, Log: testLogger(), Grace: 0}
	lastSweep := time.Time{}
	st = s.settle(int64(len(all)), 60*time.Second, func() {
		// The scheduler's stranded sweep (every 30 s in production), run by
		// hand every 2 s: it re-enqueues what the dead worker held.
		if time.Since(lastSweep) > 2*time.Second {
			lastSweep = time.Now()
			if _, err := sweep.Sweep(s.ctx); err != nil {
				t.Errorf("sweep: %v", err)
			}
		}
	})
	t.Logf("recovered in %s total: %+v", time.Since(start).Round(time.Millisecond), st.Events)

	if st.Events.Duplicates != int64(dups) || st.Events.Received != int64(len(sent)) || st.Events.Unresolved != 0 {
		t.Errorf("stats %+v, want received %d, duplicates %d, unresolved 0", st.Events, len(sent), dups)
	}
	if st.Events.Quarantined != 0 || st.DeadLetters != 0 {
		t.Errorf("quarantined %d, dead letters %d; want 0 (a crash is no reason to dead-letter)", st.Events.Quarantined, st.DeadLetters)
	}
	var processed int64
	s.store.DB().Raw(`SELECT count(*) FROM events WHERE processed_at IS NOT NULL AND status IN ?`,
		[]string{models.EventApplied, models.EventUnchanged}).Scan(&processed)
	if processed != int64(len(all)) {
		t.Errorf("%d events carry a final outcome, want %d", processed, len(all))
	}
	checkContacts(t, s, ps, raceRules())
	checkOutcomes(t, s)
	checkOutbox(t, s)
	var obsDup int64
	s.store.DB().Raw(`SELECT count(*) FROM (SELECT 1 FROM observations WHERE event_id IS NOT NULL GROUP BY event_id, field HAVING count(*) > 1) x`).Scan(&obsDup)
	if obsDup != 0 {
		t.Errorf("%d (event, field) observations stored twice", obsDup)
	}
}

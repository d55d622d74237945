//go:build proof

package chaos

import (
	"context"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"
	"time"
)

// smallRun is the CI-sized scenario: 300 leads under every fault, against a fast fake CRM.
func smallRun(bin string) Config {
	cfg := DefaultConfig()
	cfg.Binary = bin
	cfg.Leads = 300
	cfg.Mode = ModeLeadgate
	cfg.Rate = 40
	cfg.CRMRPS = 20
	cfg.Storm = 5 * time.Second
	cfg.PostgresDowntime = 2 * time.Second
	cfg.Drain = 100 * time.Second
	cfg.Workers = 10
	return cfg
}

// TestSmallChaosRunLeadgateHoldsEveryPromise runs the real binary through the multi-channel race
// with SIGKILL, a Redis restart that loses everything, a Postgres restart and a CRM 503 storm, and
// requires leadgate's column to be all zeros: no duplicate, no regression, no lost lead, every
// acknowledged event resolved, no rate-limit violation. The context bound only stops a hung run from
// holding CI (the run takes 2-3 minutes); how long it took is logged, not asserted.
func TestSmallChaosRunLeadgateHoldsEveryPromise(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the leadgate binary for about two minutes")
	}
	runAndRequireEveryPromise(t, smallRun, []string{"redis-server"}, 8*time.Minute, AllFaults)
}

// runAndRequireEveryPromise runs the scenario cfg builds (skipping when a needed server binary is
// missing) and requires leadgate's column to break no promise with every fault in want injected. The
// timeout only stops a hung run; how long it took is logged, not asserted.
func runAndRequireEveryPromise(t *testing.T, config func(bin string) Config, need []string, timeout time.Duration, want []string) *Column {
	t.Helper()
	for _, n := range need {
		if _, err := exec.LookPath(n); err != nil {
			t.Skipf("%s is not installed", n)
		}
	}
	if _, err := postgresBinDir(); err != nil {
		t.Skip(err)
	}
	cfg := config(leadgateBinary(t))
	cfg.Log = t.Logf
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	began := time.Now()
	rep, err := Run(ctx, cfg)
	if err != nil {
		t.Fatalf("chaos run: %v", err)
	}
	var out strings.Builder
	_ = rep.Write(&out, "text")
	t.Logf("report after %s:\n%s", time.Since(began).Round(time.Second), out.String())
	lg := rep.Leadgate
	if v := lg.Violations(); len(v) > 0 {
		t.Errorf("leadgate broke promises: %s", strings.Join(v, "; "))
	}
	if lg.EventsAcked == 0 || lg.LeadsAcked == 0 {
		t.Errorf("nothing was acknowledged: %+v", lg)
	}
	for _, f := range lg.Faults {
		if f.Err != "" {
			t.Errorf("fault %s was not injected: %s", f.Fault, f.Err)
		}
	}
	if len(lg.Faults) != len(want) {
		t.Errorf("faults injected: %+v, want all of %v", lg.Faults, want)
	}
	return lg
}

// leadgateBinary builds cmd/leadgate into the test's temp dir, or returns $LEADGATE_CHAOS_BINARY
// when set (a binary built beforehand).
func leadgateBinary(t *testing.T) string {
	t.Helper()
	if bin := os.Getenv("LEADGATE_CHAOS_BINARY"); bin != "" {
		return bin
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	bin, err := BuildBinary(ctx, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return bin
}

// replicatedRun is the CI-sized replicated run: 150 leads over about 80 s, long enough for the four
// faults (each takes seconds on a loaded machine) to land while the traffic runs.
func replicatedRun(bin string) Config {
	cfg := DefaultConfig()
	cfg.Binary = bin
	cfg.Replicated = true
	cfg.Mode = ModeLeadgate
	cfg.Faults = slices.Clone(ReplicatedFaults)
	cfg.Leads = 150
	cfg.Rate = 5
	cfg.CRMRPS = 20
	cfg.Drain = 150 * time.Second
	cfg.Workers = 5
	return cfg
}

// TestSmallReplicatedChaosRunHoldsEveryPromise runs 2 web, 2 worker and 2 scheduler processes behind
// the balancer, on a Redis Sentinel set and a Postgres primary with a synchronous standby, while a web
// process is killed, then a worker, the Redis master fails over and the Postgres primary is promoted
// away. Leadgate's column must be all zeros, with never two schedulers active. The long version is
// `leadgate chaos --replicated` (10,000 leads by default).
func TestSmallReplicatedChaosRunHoldsEveryPromise(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a replicated deployment for about three minutes")
	}
	lg := runAndRequireEveryPromise(t, replicatedRun, []string{"redis-server", "redis-cli"}, 10*time.Minute, ReplicatedFaults)
	if !lg.SchedulerKnown {
		t.Error("the schedulers' activity was not measured")
	}
	for _, f := range lg.Faults {
		if f.At > lg.SendWindow {
			t.Logf("fault %s began at %s, after the send window (%s): the machine is slow", f.Fault, f.At, lg.SendWindow)
		}
	}
}

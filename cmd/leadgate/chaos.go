package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/leadgate/leadgate/cmd/leadgate/chaos"
)

// errChaosFailed makes `leadgate chaos` exit non-zero when leadgate broke a promise; the report says which.
var errChaosFailed = errors.New("chaos: leadgate broke a promise (see the report)")

func parseChaos(args []string, stderr io.Writer) (chaos.Config, string, error) {
	cfg := chaos.DefaultConfig()
	fs := flag.NewFlagSet("chaos", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.IntVar(&cfg.Leads, "leads", cfg.Leads, "leads in the multi-channel race scenario")
	fs.StringVar(&cfg.Mode, "mode", cfg.Mode, "leadgate, baseline or both")
	faults := fs.String("faults", strings.Join(cfg.Faults, ","), "comma-separated faults: sigkill, redis-restart, postgres-restart, crm-503-storm (or all, none)")
	fs.IntVar(&cfg.CRMRPS, "crm-rps", cfg.CRMRPS, "the fake CRM's per-account limit in requests/s (429 + Retry-After beyond it), also leadgate's destination limit")
	fs.DurationVar(&cfg.CRMLatency, "crm-latency", cfg.CRMLatency, "latency the fake CRM adds to every request")
	fs.Uint64Var(&cfg.Seed, "seed", cfg.Seed, "scenario seed (same seed, same traffic)")
	fs.Float64Var(&cfg.Rate, "rate", cfg.Rate, "unique events per second the senders aim for")
	fs.DurationVar(&cfg.Storm, "storm", cfg.Storm, "length of the CRM 503 storm")
	fs.DurationVar(&cfg.PostgresDowntime, "postgres-downtime", cfg.PostgresDowntime, "how long Postgres stays down in postgres-restart")
	fs.DurationVar(&cfg.Drain, "drain", cfg.Drain, "how long to wait after the traffic for leadgate to resolve every event and empty its outbox")
	fs.IntVar(&cfg.Workers, "workers", cfg.Workers, "LEADGATE_WORKER_CONCURRENCY of the leadgate process (of each worker process with --replicated)")
	fs.BoolVar(&cfg.Replicated, "replicated", false, "run leadgate as separate web, worker and scheduler processes behind a round-robin balancer, on a throwaway Redis Sentinel set and Postgres primary + standby (faults: "+strings.Join(chaos.ReplicatedFaults, ", ")+")")
	fs.IntVar(&cfg.Webs, "webs", cfg.Webs, "--replicated: web processes")
	fs.IntVar(&cfg.WorkerProcs, "worker-procs", cfg.WorkerProcs, "--replicated: worker processes")
	fs.IntVar(&cfg.Schedulers, "schedulers", cfg.Schedulers, "--replicated: scheduler processes")
	fs.StringVar(&cfg.PostgresURL, "postgres-url", cfg.PostgresURL, "Postgres server for leadgate's own database (leadgate_chaos_*) when postgres-restart is off")
	fs.StringVar(&cfg.RedisURL, "redis-url", cfg.RedisURL, "an empty Redis DB for leadgate when redis-restart is off (default: a throwaway redis-server)")
	fs.StringVar(&cfg.WorkDir, "work-dir", "", "directory for logs, spool and throwaway servers (default: a temp dir)")
	fs.BoolVar(&cfg.Keep, "keep", false, "keep the work dir and the database after the run")
	format := fs.String("report", "markdown", "report format: markdown or text")
	if err := fs.Parse(args); err != nil {
		return cfg, "", err
	}
	if fs.NArg() > 0 {
		return cfg, "", fmt.Errorf("chaos: unexpected argument %q", fs.Arg(0))
	}
	if *format != "markdown" && *format != "text" {
		return cfg, "", fmt.Errorf("chaos: --report %q must be markdown or text", *format)
	}
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	if cfg.Replicated {
		if !set["mode"] {
			cfg.Mode = chaos.ModeLeadgate
		}
		if !set["faults"] || *faults == "all" {
			*faults = strings.Join(chaos.ReplicatedFaults, ",")
		}
	}
	var err error
	if cfg.Faults, err = chaos.ParseFaults(*faults); err != nil {
		return cfg, "", err
	}
	return cfg, *format, nil
}

// cmdChaos runs the chaos scenario against this very binary and prints the report; it fails when
// leadgate shows a duplicate, a regression, a lost lead or a rate-limit violation. `chaos fakecrm`
// runs the fake CRM process the scenario starts.
func cmdChaos(ctx context.Context, args []string, stdout, stderr io.Writer, getenv func(string) string) error {
	if len(args) > 0 && args[0] == "fakecrm" {
		return cmdFakeCRM(ctx, args[1:], stdout, stderr, getenv)
	}
	cfg, format, err := parseChaos(args, stderr)
	if err != nil {
		return err
	}
	if cfg.Binary, err = os.Executable(); err != nil {
		return fmt.Errorf("chaos: find the leadgate binary: %w", err)
	}
	began := time.Now()
	cfg.Log = func(f string, a ...any) {
		fmt.Fprintf(stderr, "[%6.1fs] %s\n", time.Since(began).Seconds(), fmt.Sprintf(f, a...))
	}
	rep, err := chaos.Run(ctx, cfg)
	if err != nil {
		return err
	}
	if err := rep.Write(stdout, format); err != nil {
		return err
	}
	if rep.Failed() {
		return errChaosFailed
	}
	return nil
}

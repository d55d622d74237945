package chaos

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"
)

// Modes of a run.
const (
	ModeLeadgate = "leadgate"
	ModeBaseline = "baseline"
	ModeBoth     = "both"
)

// Faults a run can inject.
const (
	FaultSIGKILL         = "sigkill"
	FaultRedisRestart    = "redis-restart"
	FaultPostgresRestart = "postgres-restart"
	FaultCRMStorm        = "crm-503-storm"
)

// Faults of the replicated mode.
const (
	FaultKillWeb         = "kill-web"         // SIGKILL of one web process, then a restart
	FaultKillWorker      = "kill-worker"      // SIGKILL of one worker process, then a restart
	FaultRedisFailover   = "redis-failover"   // the Redis master killed, Sentinel promotes the replica
	FaultPostgresPromote = "postgres-promote" // the Postgres primary crashed, the standby promoted
)

// AllFaults lists every fault of a single-process run in the order the injector runs them.
var AllFaults = []string{FaultCRMStorm, FaultSIGKILL, FaultRedisRestart, FaultPostgresRestart}

// ReplicatedFaults lists every fault of a replicated run in the order the injector runs them.
var ReplicatedFaults = []string{FaultKillWeb, FaultKillWorker, FaultRedisFailover, FaultPostgresPromote}

// Config is one chaos run.
type Config struct {
	Binary string // the leadgate binary to run (serve, token, fakecrm); required
	Leads  int    // leads in the scenario
	Mode   string // leadgate | baseline | both
	Faults []string
	Seed   uint64

	// Rate is unique events per second the senders aim for; it sets the send window.
	Rate float64
	// CRMRPS is the fake CRM's per-account limit (requests/s, 429 + Retry-After beyond it) and the
	// destination's rate_limit_rps.
	CRMRPS int
	// CRMLatency is added by the fake CRM to every request.
	CRMLatency time.Duration
	// Storm is how long the CRM answers every request 503 in the crm-503-storm fault.
	Storm time.Duration
	// PostgresDowntime is how long Postgres stays down in the postgres-restart fault.
	PostgresDowntime time.Duration
	// Drain bounds the wait, after the traffic, for leadgate to resolve every event and empty its outbox.
	Drain time.Duration

	// PostgresURL is the server leadgate's own database is created on when Postgres is not restarted
	// (a throwaway cluster is used when it is). RedisURL is an empty Redis DB leadgate may use (and
	// flushes afterwards) when Redis is not restarted; "" (the default) starts a throwaway
	// redis-server, so a shared Redis is never touched unless asked for.
	PostgresURL string
	RedisURL    string
	// WorkDir holds the run's files (logs, spool, throwaway clusters); "" makes a temp dir.
	WorkDir string
	// Keep leaves WorkDir (and the database) in place for inspection.
	Keep bool
	// Workers is LEADGATE_WORKER_CONCURRENCY for the leadgate process (each worker process when replicated).
	Workers int

	// Replicated runs leadgate as separate processes behind a round-robin balancer (Webs web, WorkerProcs
	// worker and Schedulers scheduler processes) on a throwaway Redis Sentinel set (master, replica,
	// three sentinels) and a throwaway Postgres primary with a streaming standby, with ReplicatedFaults.
	Replicated                    bool
	Webs, WorkerProcs, Schedulers int
	// Log receives progress lines; nil discards them.
	Log func(format string, args ...any)
}

// DefaultConfig is the documented full-size run.
func DefaultConfig() Config {
	return Config{
		Leads: 10000, Mode: ModeBoth, Faults: slices.Clone(AllFaults), Seed: 1,
		Rate: 100, CRMRPS: 5, Storm: 60 * time.Second, PostgresDowntime: 3 * time.Second, Drain: 3 * time.Hour,
		PostgresURL: "postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable",
		Workers:     20,
		Webs:        2, WorkerProcs: 2, Schedulers: 2,
	}
}

// ParseFaults reads a comma-separated fault list; "none" or "" is no fault, "all" every fault.
func ParseFaults(s string) ([]string, error) {
	s = strings.TrimSpace(s)
	switch s {
	case "", "none":
		return nil, nil
	case "all":
		return slices.Clone(AllFaults), nil
	}
	var out []string
	for _, f := range strings.Split(s, ",") {
		f = strings.TrimSpace(f)
		if !slices.Contains(AllFaults, f) && !slices.Contains(ReplicatedFaults, f) {
			return nil, fmt.Errorf("chaos: unknown fault %q (known: %s; replicated: %s; all, none)", f,
				strings.Join(AllFaults, ", "), strings.Join(ReplicatedFaults, ", "))
		}
		if !slices.Contains(out, f) {
			out = append(out, f)
		}
	}
	return out, nil
}

// Has reports whether the run injects fault f.
func (c Config) Has(f string) bool { return slices.Contains(c.Faults, f) }

// Validate returns every problem with c at once.
func (c Config) Validate() error {
	var errs []error
	if c.Binary == "" {
		errs = append(errs, errors.New("the leadgate binary path is required"))
	}
	if c.Leads < 1 || c.Leads > 1_000_000 {
		errs = append(errs, errors.New("--leads must be from 1 to 1000000"))
	}
	if c.Mode != ModeLeadgate && c.Mode != ModeBaseline && c.Mode != ModeBoth {
		errs = append(errs, fmt.Errorf("--mode %q must be leadgate, baseline or both", c.Mode))
	}
	known, mode := AllFaults, "a single-process"
	if c.Replicated {
		known, mode = append(slices.Clone(ReplicatedFaults), FaultCRMStorm), "a replicated"
		if c.Mode != ModeLeadgate {
			errs = append(errs, errors.New("--replicated runs leadgate only: use --mode leadgate"))
		}
		if c.Webs < 1 || c.WorkerProcs < 1 || c.Schedulers < 1 || c.Webs+c.WorkerProcs+c.Schedulers > 20 {
			errs = append(errs, errors.New("--webs, --worker-procs and --schedulers must be at least 1 each, 20 processes at most"))
		}
	}
	for _, f := range c.Faults {
		if !slices.Contains(known, f) {
			errs = append(errs, fmt.Errorf("fault %q does not apply to %s run (known: %s)", f, mode, strings.Join(known, ", ")))
		}
	}
	if c.Rate <= 0 {
		errs = append(errs, errors.New("--rate must be positive"))
	}
	if c.CRMRPS < 1 || c.CRMRPS > 10000 {
		errs = append(errs, errors.New("--crm-rps must be from 1 to 10000"))
	}
	if c.Storm < 0 || c.PostgresDowntime < 0 || c.CRMLatency < 0 {
		errs = append(errs, errors.New("durations must not be negative"))
	}
	if c.Drain <= 0 {
		errs = append(errs, errors.New("--drain must be positive"))
	}
	if c.Workers < 1 || c.Workers > 1000 {
		errs = append(errs, errors.New("--workers must be from 1 to 1000"))
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("chaos: %w", err)
	}
	return nil
}

func (c Config) logf(format string, args ...any) {
	if c.Log != nil {
		c.Log(format, args...)
	}
}

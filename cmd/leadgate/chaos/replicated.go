package chaos

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/leadgate/leadgate/internal/throwaway"
)

// roleProc is one `leadgate serve --role R` process of a replicated run.
type roleProc struct {
	role, name string
	bin, log   string
	env        []string
	base       string // web only: http://127.0.0.1:port
	proc       *child
}

// start runs the process and waits until it is up: a web process when its /readyz answers 200, the
// others when they are still running a second after start (they serve no HTTP).
func (p *roleProc) start(ctx context.Context) error {
	cmd := exec.Command(p.bin, "serve", "--role", p.role)
	cmd.Env = p.env
	c, err := startChild(cmd, p.log)
	if err != nil {
		return fmt.Errorf("%s: %w", p.name, err)
	}
	p.proc = c
	client := &http.Client{Timeout: 5 * time.Second}
	err = waitFor(ctx, 60*time.Second, p.name+" up", func() bool {
		if !c.running() {
			return true
		}
		if p.base != "" {
			return httpOK(ctx, client, p.base+"/readyz")
		}
		return time.Since(c.started) > time.Second
	})
	if err == nil && !c.running() {
		err = fmt.Errorf("%s exited while starting; last log lines:\n%s", p.name, tail(p.log, 20))
	}
	return err
}

// restartAfterKill SIGKILLs the process and starts it again on the same state.
func (p *roleProc) restartAfterKill(ctx context.Context) error {
	p.proc.kill()
	return p.start(ctx)
}

// cluster is the replicated deployment of one run.
type cluster struct {
	redis   *throwaway.Sentinel
	pg      *throwaway.PGPair
	lb      *balancer
	procs   []*roleProc
	control *leadgateProc // the admin API, through the balancer
	bg      sync.WaitGroup
}

func (c *cluster) close() {
	c.bg.Wait()
	for _, p := range c.procs {
		if p.proc != nil {
			p.proc.terminate(20 * time.Second)
		}
	}
	if c.lb != nil {
		c.lb.close()
	}
	if c.pg != nil {
		c.pg.Close()
	}
	if c.redis != nil {
		c.redis.Close()
	}
}

func (c *cluster) first(role string) *roleProc {
	for _, p := range c.procs {
		if p.role == role {
			return p
		}
	}
	return nil
}

// startCluster starts the Sentinel set, the Postgres pair, the balancer and the leadgate processes.
func startCluster(ctx context.Context, cfg Config, dir string) (_ *cluster, err error) {
	c := &cluster{}
	defer func() {
		if err != nil {
			c.close()
		}
	}()
	began := time.Now()
	if c.redis, err = throwaway.StartSentinel(ctx, filepath.Join(dir, "redis"), 1, 3); err != nil {
		return nil, err
	}
	cfg.logf("replicated: Redis Sentinel set (master, replica, 3 sentinels) up in %s", time.Since(began).Round(100*time.Millisecond))
	began = time.Now()
	if c.pg, err = throwaway.StartPGPair(ctx, filepath.Join(dir, "pg")); err != nil {
		return nil, err
	}
	cfg.logf("replicated: Postgres primary + synchronous standby up in %s", time.Since(began).Round(100*time.Millisecond))
	var webBases []string
	var webPorts []int
	for range cfg.Webs {
		port, err := freePort()
		if err != nil {
			return nil, err
		}
		webPorts = append(webPorts, port)
		webBases = append(webBases, "http://127.0.0.1:"+strconv.Itoa(port))
	}
	if c.lb, err = newBalancer(webBases, 100*time.Millisecond); err != nil {
		return nil, err
	}
	lg, err := prepareLeadgate(ctx, cfg.Binary, dir, c.pg.URL("leadgate_chaos"), c.redis.URL(0), cfg.Workers)
	if err != nil {
		return nil, err
	}
	lg.env = withVars(lg.env, map[string]string{"LEADGATE_PUBLIC_URL": c.lb.url(), "LEADGATE_DRAIN_DELAY": "1s"})
	c.control = &leadgateProc{base: c.lb.url(), token: lg.token, http: lg.http, logPath: lg.logPath}
	add := func(role string, i int, vars map[string]string) {
		name := fmt.Sprintf("%s%d", role, i+1)
		p := &roleProc{role: role, name: name, bin: cfg.Binary, log: filepath.Join(dir, name+".log"), env: withVars(lg.env, vars)}
		if role == "web" {
			p.base = webBases[i]
		}
		c.procs = append(c.procs, p)
	}
	for i := range cfg.Webs {
		add("web", i, map[string]string{"LEADGATE_ADDR": "127.0.0.1:" + strconv.Itoa(webPorts[i]),
			"LEADGATE_SPOOL_DIR": filepath.Join(dir, fmt.Sprintf("spool-web%d", i+1))})
	}
	for i := range cfg.WorkerProcs {
		add("worker", i, nil)
	}
	for i := range cfg.Schedulers {
		// Info level: the "scheduler: active" / "inactive" lines are what the run measures.
		add("scheduler", i, map[string]string{"LEADGATE_LOG_LEVEL": "info"})
	}
	for _, p := range c.procs {
		if err := p.start(ctx); err != nil {
			return nil, err
		}
	}
	cfg.logf("replicated: %d web, %d worker, %d scheduler processes up behind %s", cfg.Webs, cfg.WorkerProcs, cfg.Schedulers, c.lb.url())
	return c, nil
}

// runReplicated feeds the scenario to the replicated deployment while its faults happen.
func runReplicated(ctx context.Context, cfg Config, sc *Scenario, dir string) (*Column, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("chaos: %w", err)
	}
	crm, err := startFakeCRM(ctx, cfg.Binary, filepath.Join(dir, "fakecrm.log"), FakeCRMOptions{RPS: cfg.CRMRPS, Latency: cfg.CRMLatency, Seed: cfg.Seed})
	if err != nil {
		return nil, err
	}
	defer crm.stop()
	c, err := startCluster(ctx, cfg, dir)
	if err != nil {
		return nil, err
	}
	defer c.close()
	hooks := faultHooks{crm: crm, storm: cfg.Storm, replicated: map[string]func(context.Context) error{
		FaultKillWeb:    c.first("web").restartAfterKill,
		FaultKillWorker: c.first("worker").restartAfterKill,
		FaultRedisFailover: func(ctx context.Context) error {
			old, promoted, err := c.redis.Failover(ctx)
			if err != nil {
				return err
			}
			cfg.logf("replicated: Redis master %s killed, %s promoted", old.Addr(), promoted.Addr())
			// The old master comes back as a replica of the new one while the run goes on.
			c.bg.Go(func() {
				if err := c.redis.Rejoin(ctx, old); err != nil {
					cfg.logf("replicated: %v", err)
				}
			})
			return nil
		},
		FaultPostgresPromote: c.pg.Promote,
	}}
	targets, syncing, err := c.control.setup(ctx, crm.FakeCRMInfo, cfg.CRMRPS)
	if err != nil {
		return nil, err
	}
	cfg.logf("replicated: sending")
	traffic, faults := drive(ctx, cfg, sc, targets, hooks)
	col, err := evaluate(ctx, cfg, sc, c.control, crm, syncing, traffic, faults, "leadgate (replicated)")
	if err != nil {
		return nil, err
	}
	col.Topology = fmt.Sprintf("%d web + %d worker + %d scheduler processes, round-robin balancer; Redis Sentinel (master, replica, 3 sentinels); Postgres primary + synchronous standby",
		cfg.Webs, cfg.WorkerProcs, cfg.Schedulers)
	var spans [][]span
	for _, p := range c.procs {
		if p.role != "scheduler" {
			continue
		}
		s, err := schedulerSpans(p.log)
		if err != nil {
			return nil, err
		}
		spans = append(spans, s)
	}
	col.SchedulerKnown = true
	for _, s := range spans {
		col.SchedulerSpans += len(s)
	}
	col.SchedulerOverlap, col.SchedulerLongestGap = overlapAndGap(spans, time.Now())
	var use []string
	for _, p := range c.procs {
		if p.proc != nil && p.proc.running() {
			rss, cpu := usage(p.proc.cmd.Process.Pid)
			use = append(use, fmt.Sprintf("%s %.0f MiB / %.1f s", p.name, float64(rss)/(1<<20), cpu.Seconds()))
		}
	}
	col.Notes = append(col.Notes, "peak RSS / CPU time per process (a killed process's count restarts with it): "+strings.Join(use, ", "))
	for _, p := range c.procs {
		if p.proc != nil && !p.proc.running() {
			col.Notes = append(col.Notes, p.name+" exited during the run; last log lines:\n"+tail(p.log, 20))
		}
	}
	return col, nil
}

// span is when one scheduler process was active; a zero end means it still is.
type span struct{ from, to time.Time }

// schedulerSpans reads a scheduler process's JSON log for its "scheduler: active" / "inactive" lines.
func schedulerSpans(path string) ([]span, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("chaos: scheduler log: %w", err)
	}
	defer f.Close()
	var out []span
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		var line struct {
			Time time.Time `json:"time"`
			Msg  string    `json:"msg"`
		}
		if json.Unmarshal(sc.Bytes(), &line) != nil {
			continue
		}
		switch line.Msg {
		case "scheduler: active":
			out = append(out, span{from: line.Time})
		case "scheduler: inactive":
			if len(out) > 0 && out[len(out)-1].to.IsZero() {
				out[len(out)-1].to = line.Time
			}
		}
	}
	return out, sc.Err()
}

// overlapAndGap measures, from the first activation to end, how long two or more schedulers were
// active at once and the longest stretch with none active. spans holds each process's spans.
func overlapAndGap(spans [][]span, end time.Time) (overlap, gap time.Duration) {
	type edge struct {
		at    time.Time
		delta int
	}
	var edges []edge
	for _, ps := range spans {
		for _, s := range ps {
			to := s.to
			if to.IsZero() {
				to = end
			}
			edges = append(edges, edge{s.from, 1}, edge{to, -1})
		}
	}
	if len(edges) == 0 {
		return 0, 0
	}
	// An end and a start at the same instant do not overlap: ends first.
	slices.SortFunc(edges, func(a, b edge) int {
		if c := a.at.Compare(b.at); c != 0 {
			return c
		}
		return a.delta - b.delta
	})
	active, prev := 0, edges[0].at
	for _, e := range edges {
		d := e.at.Sub(prev)
		switch {
		case active >= 2:
			overlap += d
		case active == 0:
			gap = max(gap, d)
		}
		active += e.delta
		prev = e.at
	}
	if prev.Before(end) && active == 0 {
		gap = max(gap, end.Sub(prev))
	}
	return overlap, gap
}

// usage is one process's peak resident memory and CPU time so far, from /proc (Linux; zero elsewhere).
func usage(pid int) (peakRSS int64, cpu time.Duration) {
	if status, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid)); err == nil {
		for line := range strings.SplitSeq(string(status), "\n") {
			if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
				kb, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
				peakRSS = kb << 10
			}
		}
	}
	if stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid)); err == nil {
		// Fields after the command name (which may hold spaces) start at state; utime and stime are the
		// 14th and 15th fields, in clock ticks of 1/100 s.
		if i := strings.LastIndexByte(string(stat), ')'); i > 0 {
			f := strings.Fields(string(stat)[i+1:])
			if len(f) > 13 {
				ut, _ := strconv.ParseInt(f[11], 10, 64)
				st, _ := strconv.ParseInt(f[12], 10, 64)
				cpu = time.Duration(ut+st) * 10 * time.Millisecond
			}
		}
	}
	return peakRSS, cpu
}

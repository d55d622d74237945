package chaos

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"time"

	"github.com/redis/go-redis/v9"
)

// Run runs the scenario in the configured modes (baseline first) and returns the report. An error
// means the run itself could not be carried out; a leadgate that breaks a promise is a Report whose
// Failed is true.
func Run(ctx context.Context, cfg Config) (*Report, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	dir := cfg.WorkDir
	if dir == "" {
		var err error
		if dir, err = os.MkdirTemp("", "leadgate-chaos-"); err != nil {
			return nil, fmt.Errorf("chaos: work dir: %w", err)
		}
		if !cfg.Keep {
			defer os.RemoveAll(dir)
		}
		// The postgres OS user runs the throwaway cluster inside it.
		if err := os.Chmod(dir, 0o711); err != nil {
			return nil, fmt.Errorf("chaos: work dir: %w", err)
		}
	} else if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("chaos: work dir: %w", err)
	}
	cfg.logf("chaos: work dir %s", dir)
	sc := Generate(cfg.Leads, cfg.Rate, cfg.Seed)
	rep := &Report{Config: cfg, Scenario: describe(&sc)}
	cfg.logf("chaos: %d leads, %d unique events, %d deliveries over %s", rep.Scenario.Leads, rep.Scenario.UniqueEvents,
		rep.Scenario.Deliveries, sc.Window.Round(100*time.Millisecond))
	if cfg.Mode == ModeBaseline || cfg.Mode == ModeBoth {
		col, err := runBaseline(ctx, cfg, &sc, filepath.Join(dir, "baseline"))
		if err != nil {
			return nil, err
		}
		rep.Baseline = col
	}
	if cfg.Replicated {
		col, err := runReplicated(ctx, cfg, &sc, filepath.Join(dir, "replicated"))
		if err != nil {
			return nil, err
		}
		rep.Leadgate = col
	} else if cfg.Mode == ModeLeadgate || cfg.Mode == ModeBoth {
		col, err := runLeadgate(ctx, cfg, &sc, filepath.Join(dir, "leadgate"))
		if err != nil {
			return nil, err
		}
		rep.Leadgate = col
	}
	return rep, nil
}

// runBaseline feeds the scenario to the direct-to-CRM integration.
func runBaseline(ctx context.Context, cfg Config, sc *Scenario, dir string) (*Column, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("chaos: %w", err)
	}
	cfg.logf("baseline: starting the fake CRM")
	crm, err := startFakeCRM(ctx, cfg.Binary, filepath.Join(dir, "fakecrm.log"), FakeCRMOptions{RPS: cfg.CRMRPS, Latency: cfg.CRMLatency, Seed: cfg.Seed})
	if err != nil {
		return nil, err
	}
	defer crm.stop()
	b, err := newBaseline(crm.FakeCRMInfo)
	if err != nil {
		return nil, err
	}
	defer b.stop()
	targets := make([]Target, len(Channels))
	for i := range targets {
		targets[i] = Target{URL: b.url(), Secret: "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"} // the baseline verifies nothing
	}
	hooks := faultHooks{sigkill: b.crash, crm: crm, storm: cfg.Storm}
	cfg.logf("baseline: sending")
	traffic, faults := drive(ctx, cfg, sc, targets, hooks)
	st, err := crm.state(ctx)
	if err != nil {
		return nil, err
	}
	col := &Column{Name: "baseline (direct to CRM)", Target: "CRM", RateLimit: cfg.CRMRPS, Faults: faults,
		Wall: time.Since(traffic.Started)}
	measure(col, observed{sc: sc, traffic: traffic, contacts: st.Contacts, writes: st.Writes, summary: &st.Summary})
	col.WriteFailures, col.WriteTotal = col.EventsGivenUp, col.UniqueEvents
	col.Notes = append(col.Notes, "a webhook is answered 200 only after its CRM writes succeeded, else 502 (the sender retries); CRM write failures after retries are the unique events whose every attempt failed")
	return col, nil
}

// drive sends the scenario while the faults are injected and returns when both are done.
func drive(ctx context.Context, cfg Config, sc *Scenario, targets []Target, hooks faultHooks) (*Traffic, []FaultRecord) {
	base := time.Now().Add(200 * time.Millisecond)
	faultsDone := make(chan []FaultRecord, 1)
	go func() { faultsDone <- injectFaults(ctx, cfg.Faults, sc.Window, base, hooks, cfg.logf) }()
	traffic := send(ctx, sc, targets, base)
	cfg.logf("traffic done in %s", traffic.Finished.Sub(traffic.Started).Round(100*time.Millisecond))
	return traffic, <-faultsDone
}

// runLeadgate feeds the scenario to the real leadgate binary on real Postgres and Redis.
func runLeadgate(ctx context.Context, cfg Config, sc *Scenario, dir string) (*Column, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("chaos: %w", err)
	}
	cfg.logf("leadgate: starting the fake CRM")
	crm, err := startFakeCRM(ctx, cfg.Binary, filepath.Join(dir, "fakecrm.log"), FakeCRMOptions{RPS: cfg.CRMRPS, Latency: cfg.CRMLatency, Seed: cfg.Seed})
	if err != nil {
		return nil, err
	}
	defer crm.stop()
	hooks := faultHooks{crm: crm, storm: cfg.Storm}

	redisURL := cfg.RedisURL
	if cfg.Has(FaultRedisRestart) || redisURL == "" {
		rs, err := newRedisServer(ctx, dir)
		if err != nil {
			return nil, err
		}
		defer rs.remove()
		redisURL = rs.url(0)
		hooks.redisRestart = rs.restartEmpty
	} else {
		release, err := claimRedisDB(ctx, redisURL)
		if err != nil {
			return nil, err
		}
		defer release()
	}

	serverURL := cfg.PostgresURL
	if cfg.Has(FaultPostgresRestart) {
		cfg.logf("leadgate: initdb of a throwaway Postgres cluster")
		pg, err := newPGCluster(ctx, dir)
		if err != nil {
			return nil, err
		}
		defer pg.close(cfg.Keep)
		serverURL = pg.url()
		hooks.postgresRestart = func(ctx context.Context) error {
			if err := pg.crash(ctx); err != nil {
				return err
			}
			select {
			case <-ctx.Done():
			case <-time.After(cfg.PostgresDowntime):
			}
			return pg.start(context.WithoutCancel(ctx))
		}
	}
	db := "leadgate_chaos_" + sc.RunID + fmt.Sprintf("_%d", time.Now().UnixNano()%1e6)
	dbURL, err := databaseURL(serverURL, db)
	if err != nil {
		return nil, err
	}
	if !cfg.Keep {
		defer func() {
			dctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
			defer cancel()
			if err := dropDatabase(dctx, serverURL, db); err != nil {
				cfg.logf("chaos: %v", err)
			}
		}()
	}

	cfg.logf("leadgate: starting %s serve (database %s)", cfg.Binary, db)
	lg, err := newLeadgate(ctx, cfg.Binary, dir, dbURL, redisURL, cfg.Workers)
	if err != nil {
		return nil, err
	}
	defer lg.stop()
	hooks.sigkill = lg.sigkill
	targets, syncing, err := lg.setup(ctx, crm.FakeCRMInfo, cfg.CRMRPS)
	if err != nil {
		return nil, err
	}
	if !syncing {
		cfg.logf("leadgate: no destinations API in this build: measuring leadgate's own contacts instead of the CRM")
	}
	cfg.logf("leadgate: sending")
	traffic, faults := drive(ctx, cfg, sc, targets, hooks)
	col, err := evaluate(ctx, cfg, sc, lg, crm, syncing, traffic, faults, "leadgate")
	if err != nil {
		return nil, err
	}
	if !lg.proc.running() {
		col.Notes = append(col.Notes, "leadgate exited during the run; last log lines:\n"+tail(lg.logPath, 20))
	}
	return col, nil
}

// evaluate waits for leadgate (lg's admin API) to resolve every event and empty its outbox, then
// measures what the CRM (or, without the CRM sync, leadgate) holds against what the senders were told.
func evaluate(ctx context.Context, cfg Config, sc *Scenario, lg *leadgateProc, crm *fakeCRMProc, syncing bool, traffic *Traffic,
	faults []FaultRecord, name string) (*Column, error) {
	crmRequests := func() int {
		var sum CRMSummary
		if crm.get(ctx, "/summary", &sum) != nil {
			return -1
		}
		return sum.Requests
	}
	st, drainErr := lg.drain(ctx, cfg.Drain, syncing, crmRequests, cfg.logf)
	col := &Column{Name: name, RateLimit: cfg.CRMRPS, Faults: faults, Wall: time.Since(traffic.Started)}
	if syncing {
		col.OutboxPending = st.OutboxPending
	}
	if drainErr != nil {
		col.Notes = append(col.Notes, drainErr.Error())
	}
	statuses, err := lg.eventStatuses(ctx)
	if err != nil {
		return nil, err
	}
	o := observed{sc: sc, traffic: traffic, final: func(id string) bool {
		if st, ok := statuses[id]; ok {
			return finalStatus(st)
		}
		// Not in the list: an id acknowledged from the spool that became an
		// alias of the stored event; the API resolves it.
		var e struct{ Status string }
		if err := lg.api(ctx, http.MethodGet, "/workspaces/"+workspace+"/events/"+id, nil, &e); err != nil {
			return false
		}
		return finalStatus(e.Status)
	}}
	if col.DeadLetters, err = lg.deadLetterKinds(ctx); err != nil {
		return nil, err
	}
	if syncing {
		crmSt, err := crm.state(ctx)
		if err != nil {
			return nil, err
		}
		col.Target = "CRM"
		o.contacts, o.writes, o.summary = crmSt.Contacts, crmSt.Writes, &crmSt.Summary
	} else {
		col.Target = "leadgate contacts"
		if o.contacts, err = lg.contacts(ctx); err != nil {
			return nil, err
		}
		col.Notes = append(col.Notes, "this build has no CRM sync (POST /destinations answered 404): the leadgate column measures leadgate's contact store, not the CRM")
	}
	measure(col, o)
	if syncing {
		col.WriteFailures, col.WriteTotal = col.LeadsAcked-col.LeadsAtHighest, col.LeadsAcked
	}
	col.Notes = append(col.Notes, fmt.Sprintf("stats: %d received, %d accepted, %d duplicates, %d applied, %d unchanged, %d quarantined, %d rejected, %d dropped, %d unresolved; %d open dead letters, %d outbox pending",
		st.Events.Received, st.Events.Accepted, st.Events.Duplicates, st.Events.Applied, st.Events.Unchanged, st.Events.Quarantined,
		st.Events.Rejected, st.Events.Dropped, st.Events.Unresolved, st.DeadLetters, st.OutboxPending))
	if st.Events.Received != int64(col.Attempts200) {
		col.Notes = append(col.Notes, fmt.Sprintf("leadgate counted %d deliveries received; the senders had %d attempts answered 200", st.Events.Received, col.Attempts200))
	}
	return col, nil
}

// finalStatus reports whether an event status is one of CONTRACT.md's final outcomes.
func finalStatus(s string) bool {
	switch s {
	case "applied", "unchanged", "quarantined", "rejected", "dropped":
		return true
	}
	return false
}

// claimRedisDB checks that the shared Redis DB the run would use is empty (another run or test may
// own a busy one) and returns a func that empties it again.
func claimRedisDB(ctx context.Context, redisURL string) (func(), error) {
	opt, err := redis.ParseURL(redisURL)
	if err != nil {
		return nil, fmt.Errorf("chaos: --redis-url: %w", err)
	}
	client := redis.NewClient(opt)
	n, err := client.DBSize(ctx).Result()
	if err != nil {
		client.Close()
		return nil, fmt.Errorf("chaos: redis %s: %w", redisURL, err)
	}
	if n > 0 {
		client.Close()
		return nil, errors.New("chaos: redis " + redisURL + " is not empty: pick an unused DB with --redis-url, or add the redis-restart fault to use a throwaway server")
	}
	return func() {
		fctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = client.FlushDB(fctx).Err()
		client.Close()
	}, nil
}

// Package app assembles one leadgate process from its configuration: the
// store, Redis, queues, ingest pipeline, HTTP routes, workers and scheduler.
// The binary and the end-to-end tests build the same thing through it.
package app

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/go-chi/chi/v5"
	"github.com/hibiken/asynq"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/redis/go-redis/v9"

	"github.com/leadgate/leadgate/actions"
	"github.com/leadgate/leadgate/cmd/leadgate/config"
	"github.com/leadgate/leadgate/crm/syncer"
	"github.com/leadgate/leadgate/guards"
	"github.com/leadgate/leadgate/handlers/api"
	"github.com/leadgate/leadgate/handlers/hooks"
	"github.com/leadgate/leadgate/handlers/ui"
	"github.com/leadgate/leadgate/ingest"
	"github.com/leadgate/leadgate/ingest/normalize"
	"github.com/leadgate/leadgate/ingest/spool"
	"github.com/leadgate/leadgate/internal/egress"
	"github.com/leadgate/leadgate/internal/failpoint"
	"github.com/leadgate/leadgate/internal/redisconn"
	"github.com/leadgate/leadgate/internal/secretbox"
	"github.com/leadgate/leadgate/jobs"
	"github.com/leadgate/leadgate/lifecycle/apply"
	"github.com/leadgate/leadgate/lifecycle/hydrate"
	"github.com/leadgate/leadgate/models"
	"github.com/leadgate/leadgate/static"
	"github.com/leadgate/leadgate/web"
)

// App holds the long-lived components of one process.
type App struct {
	Version string
	Cfg     config.Config
	Log     *slog.Logger
	Store   *models.Store
	// Redis is the one client of the process (a single server, Sentinel or Cluster, per LEADGATE_REDIS_URL);
	// RedisOpt names the same Redis for asynq's scheduler, which makes its own client.
	Redis    redis.UniversalClient
	RedisOpt asynq.RedisConnOpt
	Asynq    *asynq.Client
	// Enqueues sends the enqueue scripts of concurrent asynq calls to Redis together.
	Enqueues *jobs.EnqueuePipeline
	Queue    jobs.Queue
	Box      *secretbox.Box
	Spool    *spool.Spool
	Registry *prometheus.Registry
	Ingest   *ingest.Service
	Applier  *apply.Applier
	// Drainer applies the inbox in batches in the worker role; Trigger announces stored events to it.
	Drainer  *apply.Drainer
	Trigger  *jobs.ApplyTrigger
	Guards   *guards.Set
	Sync     *jobs.SyncTasks  // CRM sync: outbox relay, side effects, imports, drift
	Hydrator *hydrate.Service // provider clients for id-only events
	Egress   *egress.Guard    // SSRF guard of CRM, provider and side-effect webhook requests

	draining atomic.Bool // SIGTERM received: /readyz answers 503 while requests still arrive
}

func New(ctx context.Context, cfg config.Config, store *models.Store, log *slog.Logger) (*App, error) {
	a := &App{Cfg: cfg, Log: log, Store: store, Registry: prometheus.NewRegistry(), Version: "dev"}
	a.Registry.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	target, err := redisconn.Parse(cfg.RedisURL)
	if err != nil {
		return nil, fmt.Errorf("LEADGATE_REDIS_URL: %w", err)
	}
	a.Redis, a.RedisOpt = target.Client(64), target.Asynq()
	a.Enqueues = jobs.NewEnqueuePipeline(a.Redis)
	a.Asynq = asynq.NewClientFromRedisClient(a.Enqueues)
	a.Queue = jobs.Queue{Client: a.Asynq}
	if a.Box, err = secretbox.New(cfg.SecretKey); err != nil {
		return nil, err
	}
	if cfg.SpoolDir != "" {
		if a.Spool, err = spool.Open(cfg.SpoolDir); err != nil {
			return nil, fmt.Errorf("spool %s: %w", cfg.SpoolDir, err)
		}
	}
	a.Guards = guards.New(store, a.Redis, a.Box, log)
	// The operator's egress allowlist opens the SSRF guard for alert channels and the heartbeat too (each
	// workspace's admin adds its own hosts for those).
	a.Guards.Guards.Base.AllowedHosts = cfg.EgressAllowedHosts
	a.Egress = egress.Outbound(cfg.EgressAllowedHosts)
	ingestMetrics := ingest.NewMetrics(a.Registry)
	a.Trigger = &jobs.ApplyTrigger{Queue: a.Queue, Log: log}
	// The probe warms as many connections as the group commit has committers (its default, 4).
	pgHealth := &ingest.PostgresHealth{Probe: func(ctx context.Context) error { return store.IngestProbe(ctx, 4) },
		Deadline: 2 * time.Second, Log: log, Back: make(chan struct{}, 1)}
	a.Ingest = &ingest.Service{
		Postgres:   pgHealth,
		Filters:    a.Guards.Filters,
		Store:      store,
		Sources:    &ingest.SourceCache{Store: store, Box: a.Box, TTL: 5 * time.Second, Postgres: pgHealth},
		Redis:      a.Redis,
		Queue:      a.Queue,
		Trigger:    a.Trigger,
		Spool:      a.Spool,
		Group:      &ingest.GroupCommit{Store: store, Log: log, Sizes: ingestMetrics.GroupSize, Times: ingestMetrics.GroupTime},
		Gate:       &ingest.GatePublisher{Redis: a.Redis, Log: log},
		Deliveries: &ingest.DeliveryLog{Store: store, Log: log, Evaluate: a.Guards.Refusals.Evaluate},
		Metrics:    ingestMetrics,
		Phones:     normalize.NewPhoneCache(64 << 10),
		Log:        log,
		Window:     cfg.IdempotencyWindow,
		GateTTL:    24 * time.Hour,
		Now:        time.Now,
	}
	a.Applier = &apply.Applier{Store: store, Queue: a.Queue, Log: log}
	a.Sync = jobs.NewSyncTasks(store, a.Box, a.Redis, a.Asynq, a.Registry, log, a.Egress)
	a.Drainer = &apply.Drainer{Applier: a.Applier,
		AfterBatch: func(ctx context.Context) { // sync right after apply commits
			if err := a.Sync.Queue.Kick(ctx); err != nil {
				log.Debug("crm sync: kick failed; the periodic tick will pick the work up", "err", err)
			}
		},
		Busy: func(ctx context.Context) { // more than this process takes on: wake another worker process
			if err := a.Queue.EnqueueApplyBatch(ctx); err != nil {
				log.Debug("apply trigger not sent", "err", err)
			}
		}}
	a.Sync.Relay.Writes = a.Guards.Writes
	a.Sync.Relay.Runaway = &syncer.Runaway{Redis: a.Redis}
	a.Guards.Monitor.Destinations = syncer.DestinationProbe(store)
	a.Hydrator = hydrate.New(store, a.Box, a.Redis, a.Egress)
	a.Applier.Hydrator = a.Hydrator
	a.Applier.Guards = apply.Guards{Writes: a.Guards.Writes, Breaker: a.Guards.Breaker}
	a.Sync.Relay.Lease, a.Sync.SideEffects.Lease = cfg.SyncLease, cfg.SideEffectLease
	fp, err := failpoint.New(cfg.Failpoints, cfg.FailpointDir, log)
	if err != nil {
		return nil, err
	}
	a.Applier.Failpoints, a.Sync.Relay.Failpoints, a.Sync.SideEffects.Failpoints = fp, fp, fp
	return a, nil
}

func (a *App) Close() {
	if a.Spool != nil {
		a.Spool.Close()
	}
	a.Ingest.Gate.Close()       // the last committed keys, before Redis goes
	a.Ingest.Deliveries.Close() // the last refused-delivery counts, before Postgres goes
	a.Trigger.Wait()
	a.Asynq.Close()
	a.Enqueues.Stop()
	a.Redis.Close()
}

// FirstStart prints credentials for a brand-new installation: an admin API
// token and an admin login (admin@localhost with a one-time password that
// must be changed at first sign-in) so the first minute needs no CLI.
func (a *App) FirstStart(ctx context.Context, stdout io.Writer) error {
	if err := a.firstAdminUser(ctx, stdout); err != nil {
		return err
	}
	tokens, err := a.Store.TokenList(ctx)
	if err != nil {
		return err
	}
	if len(tokens) > 0 {
		return nil
	}
	_, plain, err := a.Store.TokenCreate(ctx, "first-admin", models.RoleAdmin)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "\n  First start: an admin API token was created (shown once):\n\n    %s\n\n", plain)
	return a.Store.AuditRecord(ctx, models.Audit{Actor: "system", Action: "token.create", SubjectType: "api_token", After: map[string]string{"name": "first-admin", "role": "admin"}})
}

// firstAdminUser creates admin@localhost when no user exists yet.
func (a *App) firstAdminUser(ctx context.Context, stdout io.Writer) error {
	n, err := a.Store.UserCount(ctx)
	if err != nil || n > 0 {
		return err
	}
	password, err := ui.OneTimePassword()
	if err != nil {
		return fmt.Errorf("first start: %w", err)
	}
	err = a.Store.Tx(ctx, func(tx *models.Store) error {
		u, err := tx.UserCreate(ctx, "admin@localhost", password, models.RoleAdmin, true)
		if err != nil {
			return err
		}
		return tx.AuditRecord(ctx, models.Audit{Actor: "system", Action: "user.create", SubjectType: "user",
			SubjectID: strconv.FormatInt(u.ID, 10), After: map[string]string{"email": u.Email, "role": u.Role}})
	})
	if errors.Is(err, models.ErrConflict) {
		return nil // another replica created it first
	}
	if err != nil {
		return fmt.Errorf("first start: create admin: %w", err)
	}
	fmt.Fprintf(stdout, "\n  First start: sign in to the web app as admin@localhost with this one-time password\n  (you will choose your own at first sign-in):\n\n    %s\n\n", password)
	return nil
}

func (a *App) Deps() web.Deps {
	ui, err := a.UIRoutes()
	if err != nil {
		// Only a build defect (a missing embedded asset) gets here; the API still serves.
		a.Log.Error("admin web app disabled", "err", err)
	}
	return web.Deps{
		UI:             ui,
		Store:          a.Store,
		Log:            a.Log,
		Hooks:          &hooks.Hooks{Ingest: a.Ingest, MaxBody: a.Cfg.MaxBodyBytes, PublicURL: a.Cfg.PublicURL},
		API:            &api.API{Store: a.Store, Box: a.Box, Sources: a.Ingest.Sources, PublicURL: a.Cfg.PublicURL, Log: a.Log, Applier: a.Applier},
		Health:         &api.Health{Store: a.Store, Redis: a.Redis, Spool: a.Spool, Draining: a.draining.Load},
		Metrics:        promhttp.HandlerFor(a.Registry, promhttp.HandlerOpts{}),
		Destinations:   &api.Destinations{Store: a.Store, Box: a.Box, Connector: a.Sync.Relay.Connector, Sync: a.Sync.Queue, Log: a.Log, Egress: a.Egress},
		Guards:         &api.Guards{Store: a.Store, Box: a.Box, Log: a.Log, Filters: a.Guards.Filters, Breaker: a.Guards.Breaker, Guards: a.Guards.Guards, Sender: a.Guards.Sender, Alarms: a.Guards.Monitor},
		TrustedProxies: a.Cfg.TrustedProxies,
		HSTS:           a.Cfg.SecureCookies,
	}
}

// UIRoutes assembles the admin web app: cookie sessions and CSRF keyed from
// LEADGATE_SECRET_KEY, the embedded static files, the login throttle (per 15
// minutes: 5 failures per client and account, 20 per client, 50 per account)
// and the page handlers.
func (a *App) UIRoutes() (func(chi.Router), error) {
	assets, err := web.NewAssets(static.FS)
	if err != nil {
		return nil, err
	}
	sessions := web.NewSessions(a.Cfg.SecretKey, a.Cfg.SecureCookies, a.Store)
	pages := &ui.UI{
		Store: a.Store, Box: a.Box, Sources: a.Ingest.Sources, Sessions: sessions,
		Limiter: a.loginLimiter(), Assets: assets.Views(),
		PublicURL: a.Cfg.PublicURL, Log: a.Log, Now: time.Now,
		Applier: a.Applier, Redis: a.Redis,
		Guards:       &actions.Guards{Store: a.Store, Box: a.Box, Log: a.Log, Filters: a.Guards.Filters, Breaker: a.Guards.Breaker, Guards: a.Guards.Guards, Sender: a.Guards.Sender, Alarms: a.Guards.Monitor},
		Destinations: &actions.Destinations{Store: a.Store, Box: a.Box, Connector: a.Sync.Relay.Connector, Sync: a.Sync.Queue, Egress: a.Egress},
	}
	return web.UIRoutes(web.UIDeps{
		Pages: pages, Sessions: sessions, Assets: assets, Store: a.Store, Log: a.Log,
		CSRFKey: web.DeriveKey(a.Cfg.SecretKey, "csrf"), PublicURL: a.Cfg.PublicURL, Secure: a.Cfg.SecureCookies,
	}), nil
}

func (a *App) ServeHTTP(ctx context.Context) error {
	srv := &http.Server{
		Addr:              a.Cfg.Addr,
		Handler:           web.Routes(a.Deps()),
		ReadHeaderTimeout: 5 * time.Second,
		ReadTimeout:       30 * time.Second,
		WriteTimeout:      60 * time.Second,
		IdleTimeout:       120 * time.Second,
	}
	err := serveUntilDone(ctx, srv, 15*time.Second, "http", a.drain)
	a.Ingest.Group.Close() // after the last request: nothing is waiting on a group any more
	return err
}

// drain runs between SIGTERM and closing the listener: /readyz says "draining" at once, answers ask
// clients to close their connections, and for LEADGATE_DRAIN_DELAY deliveries are still answered as
// usual while the load balancer notices (its readiness probe) and stops sending new ones.
func (a *App) drain(srv *http.Server) {
	a.draining.Store(true)
	srv.SetKeepAlivesEnabled(false)
	if a.Cfg.DrainDelay > 0 {
		a.Log.Info("http: draining", "delay", a.Cfg.DrainDelay)
		time.Sleep(a.Cfg.DrainDelay)
	}
}

// serveUntilDone serves srv until ctx ends, then runs beforeShutdown (if any) and shuts srv down, giving
// requests in flight up to grace.
func serveUntilDone(ctx context.Context, srv *http.Server, grace time.Duration, name string, beforeShutdown func(*http.Server)) error {
	errc := make(chan error, 1)
	go func() { errc <- srv.ListenAndServe() }()
	select {
	case err := <-errc:
		return fmt.Errorf("%s: %w", name, err)
	case <-ctx.Done():
	}
	if beforeShutdown != nil {
		beforeShutdown(srv)
	}
	shutdownCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), grace)
	defer cancel()
	if err := srv.Shutdown(shutdownCtx); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("%s shutdown: %w", name, err)
	}
	return nil
}

func (a *App) RunWorker(ctx context.Context) error {
	srv := asynq.NewServerFromRedisClient(a.Redis, asynq.Config{
		Concurrency:     a.Cfg.WorkerConcurrency,
		Queues:          jobs.Queues,
		ShutdownTimeout: 20 * time.Second,
		Logger:          jobs.AsynqLogger{Log: a.Log},
		LogLevel:        asynq.WarnLevel,
		ErrorHandler:    jobs.ErrorReporter{Log: a.Log},
		RetryDelayFunc:  jobs.RetryDelay,
		IsFailure:       jobs.IsFailure,
		// A busy contact asks to be retried in 50-250 ms and a waiting event in
		// 1.5 s; the 5 s default check would stretch both.
		DelayedTaskCheckInterval: 250 * time.Millisecond,
	})
	if err := srv.Start(jobs.NewMux(a.JobDeps())); err != nil {
		return fmt.Errorf("worker: %w", err)
	}
	drained := make(chan struct{})
	go func() { a.Drainer.Run(ctx); close(drained) }()
	<-ctx.Done()
	srv.Shutdown()
	<-drained
	return nil
}

func (a *App) JobDeps() jobs.Deps {
	return jobs.Deps{Store: a.Store, Queue: a.Queue, Log: a.Log, Applier: a.Applier, Drainer: a.Drainer,
		Alarms: a.Guards.Monitor, Deadman: a.Guards.Deadman, AlertRelay: a.Guards.Relay,
		Sync:                 a.Sync,
		RetentionIdempotency: a.Cfg.RetentionIdempotency, RetentionPayloads: a.Cfg.RetentionPayloads}
}

func (a *App) RunScheduler(ctx context.Context) error {
	sqlDB, err := a.Store.SQL()
	if err != nil {
		return err
	}
	s := &jobs.Scheduler{DB: sqlDB, Redis: a.RedisOpt, Log: a.Log, Poll: 2 * time.Second, Periodic: jobs.DefaultPeriodic()}
	return s.Run(ctx)
}

// loginLimiter throttles failed sign-ins, counted in Redis so that every replica shares one budget.
func (a *App) loginLimiter() *ui.LoginLimiter {
	l := ui.NewLoginLimiter(5, 15*time.Minute)
	l.KindMax = ui.SignInKinds()
	l.Redis, l.Log = a.Redis, a.Log
	return l
}

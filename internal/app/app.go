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
	"time"

	"github.com/hibiken/asynq"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/redis/go-redis/v9"

	"github.com/leadgate/leadgate/handlers"
	"github.com/leadgate/leadgate/ingest"
	"github.com/leadgate/leadgate/ingest/spool"
	"github.com/leadgate/leadgate/internal/config"
	"github.com/leadgate/leadgate/internal/secretbox"
	"github.com/leadgate/leadgate/jobs"
	"github.com/leadgate/leadgate/models"
	"github.com/leadgate/leadgate/web"
)

// App holds the long-lived components of one process.
type App struct {
	Version  string
	Cfg      config.Config
	Log      *slog.Logger
	Store    *models.Store
	Redis    *redis.Client
	RedisOpt asynq.RedisConnOpt
	Asynq    *asynq.Client
	Queue    jobs.Queue
	Box      *secretbox.Box
	Spool    *spool.Spool
	Registry *prometheus.Registry
	Ingest   *ingest.Service
}

func New(ctx context.Context, cfg config.Config, store *models.Store, log *slog.Logger) (*App, error) {
	a := &App{Cfg: cfg, Log: log, Store: store, Registry: prometheus.NewRegistry(), Version: "dev"}
	a.Registry.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	opt, err := redis.ParseURL(cfg.RedisURL)
	if err != nil {
		return nil, fmt.Errorf("LEADGATE_REDIS_URL: %w", err)
	}
	opt.PoolSize = 64
	a.Redis = redis.NewClient(opt)
	if a.RedisOpt, err = asynq.ParseRedisURI(cfg.RedisURL); err != nil {
		return nil, fmt.Errorf("LEADGATE_REDIS_URL: %w", err)
	}
	a.Asynq = asynq.NewClientFromRedisClient(a.Redis)
	a.Queue = jobs.Queue{Client: a.Asynq}
	if a.Box, err = secretbox.New(cfg.SecretKey); err != nil {
		return nil, err
	}
	if cfg.SpoolDir != "" {
		if a.Spool, err = spool.Open(cfg.SpoolDir); err != nil {
			return nil, fmt.Errorf("spool %s: %w", cfg.SpoolDir, err)
		}
	}
	a.Ingest = &ingest.Service{
		Store:   store,
		Sources: &ingest.SourceCache{Store: store, Box: a.Box, TTL: 5 * time.Second},
		Redis:   a.Redis,
		Queue:   a.Queue,
		Spool:   a.Spool,
		Metrics: ingest.NewMetrics(a.Registry),
		Log:     log,
		Window:  cfg.IdempotencyWindow,
		GateTTL: 24 * time.Hour,
		Now:     time.Now,
	}
	return a, nil
}

func (a *App) Close() {
	if a.Spool != nil {
		a.Spool.Close()
	}
	a.Asynq.Close()
	a.Redis.Close()
}

// firstStart prints credentials for a brand-new installation: an admin API
// token (and, with the web app, an admin login) so the first minute needs no CLI.
func (a *App) FirstStart(ctx context.Context, stdout io.Writer) error {
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

func (a *App) Deps() web.Deps {
	return web.Deps{
		Store:   a.Store,
		Log:     a.Log,
		Hooks:   &handlers.Hooks{Ingest: a.Ingest, MaxBody: a.Cfg.MaxBodyBytes, PublicURL: a.Cfg.PublicURL},
		API:     &handlers.API{Store: a.Store, Box: a.Box, Sources: a.Ingest.Sources, PublicURL: a.Cfg.PublicURL, Log: a.Log},
		Health:  &handlers.Health{Store: a.Store, Redis: a.Redis, Spool: a.Spool},
		Metrics: promhttp.HandlerFor(a.Registry, promhttp.HandlerOpts{}),
	}
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
	errc := make(chan error, 1)
	go func() { errc <- srv.ListenAndServe() }()
	select {
	case err := <-errc:
		return fmt.Errorf("http: %w", err)
	case <-ctx.Done():
	}
	shutdownCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 15*time.Second)
	defer cancel()
	if err := srv.Shutdown(shutdownCtx); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("http shutdown: %w", err)
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
	})
	if err := srv.Start(jobs.NewMux(a.JobDeps())); err != nil {
		return fmt.Errorf("worker: %w", err)
	}
	<-ctx.Done()
	srv.Shutdown()
	return nil
}

func (a *App) JobDeps() jobs.Deps {
	return jobs.Deps{Store: a.Store, Queue: a.Queue, Log: a.Log}
}

func (a *App) RunScheduler(ctx context.Context) error {
	sqlDB, err := a.Store.SQL()
	if err != nil {
		return err
	}
	s := &jobs.Scheduler{DB: sqlDB, Redis: a.RedisOpt, Log: a.Log, Poll: 10 * time.Second, Periodic: jobs.DefaultPeriodic()}
	return s.Run(ctx)
}

package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"time"

	"github.com/leadgate/leadgate/cmd/leadgate/app"
	"github.com/leadgate/leadgate/cmd/leadgate/config"
	"golang.org/x/sync/errgroup"
)

func cmdServe(ctx context.Context, args []string, stdout, stderr io.Writer, getenv func(string) string) error {
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	fs.SetOutput(stderr)
	role := fs.String("role", "all", "all, web, worker or scheduler")
	if err := fs.Parse(args); err != nil {
		return err
	}
	switch *role {
	case "all", "web", "worker", "scheduler":
	default:
		return fmt.Errorf("serve: --role %q must be all, web, worker or scheduler", *role)
	}
	tuneGC(getenv)
	store, cfg, log, err := openStore(ctx, stderr, getenv)
	if err != nil {
		return err
	}
	defer store.Close()
	warnDevSecret(log, cfg)
	if *role != "all" && *role != "web" {
		// Only the process that answers webhooks spools; the spool directory
		// is locked by its owner, so a worker beside it must not open it.
		cfg.SpoolDir = ""
	}
	a, err := app.New(ctx, cfg, store, log)
	if err != nil {
		return err
	}
	a.Version = version
	defer a.Close()
	if err := a.FirstStart(ctx, stdout); err != nil {
		return err
	}
	log.Info("leadgate started", "role", *role, "addr", cfg.Addr, "public_url", cfg.PublicURL, "version", version)
	return runRoles(ctx, a, *role)
}

// runRoles runs the parts of a process its role asks for until ctx ends.
func runRoles(ctx context.Context, a *app.App, role string) error {
	if role == "all" {
		a.Trigger.Local = a.Drainer // stored events wake the drainer beside them directly, without Redis
	}
	g, ctx := errgroup.WithContext(ctx)
	if a.Cfg.DebugAddr != "" {
		g.Go(func() error { return a.ServeProfiler(ctx) })
	}
	if role == "all" || role == "web" {
		g.Go(func() error { return a.ServeHTTP(ctx) })
		if a.Ingest.Spool != nil {
			g.Go(func() error { a.Ingest.RunSpoolReplay(ctx, 2*time.Second); return nil })
		}
	}
	if role == "all" || role == "worker" {
		g.Go(func() error { return a.RunWorker(ctx) })
	}
	if role == "all" || role == "scheduler" {
		g.Go(func() error { return a.RunScheduler(ctx) })
	}
	return g.Wait()
}

// warnDevSecret is the start-up warning of serve and demo alike when the built-in key is in use.
func warnDevSecret(log *slog.Logger, cfg config.Config) {
	if cfg.DevSecret {
		log.Warn("LEADGATE_SECRET_KEY is not set: using the built-in development key. Secrets at rest and sessions are NOT protected. Set LEADGATE_SECRET_KEY before real use.")
	}
}

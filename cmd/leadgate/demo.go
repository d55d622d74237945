package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/leadgate/leadgate/cmd/leadgate/app"
	"github.com/leadgate/leadgate/cmd/leadgate/demo"
)

// cmdDemo runs leadgate (all roles) with a demo workspace and streams signed
// traffic into it until stopped (or for --duration).
func cmdDemo(ctx context.Context, args []string, stdout, stderr io.Writer, getenv func(string) string) error {
	fs := flag.NewFlagSet("demo", flag.ContinueOnError)
	fs.SetOutput(stderr)
	every := fs.Duration("every", 500*time.Millisecond, "pause between deliveries")
	quietAfter := fs.Duration("quiet-after", 3*time.Minute, "when the voice agent goes quiet (trips its silence alarm)")
	quietFor := fs.Duration("quiet-for", 6*time.Minute, "how long the voice agent stays quiet")
	duration := fs.Duration("duration", 0, "stop after running this long, counted once set up (0: run until interrupted)")
	seed := fs.Uint64("seed", uint64(time.Now().UnixNano()), "random seed of the traffic")
	if err := fs.Parse(args); err != nil {
		return err
	}
	tuneGC(getenv)
	store, cfg, log, err := openStore(ctx, stderr, getenv)
	if err != nil {
		return err
	}
	defer store.Close()
	graph := demo.NewGraph()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return fmt.Errorf("demo: fake Graph API: %w", err)
	}
	warnDevSecret(log, cfg)
	// The fake Graph API is on loopback, which the SSRF guard refuses unless allowed: allow its one
	// port, not every service on 127.0.0.1 (Redis, Postgres, the profiler).
	cfg.EgressAllowedHosts = append(cfg.EgressAllowedHosts, ln.Addr().String())
	a, err := app.New(ctx, cfg, store, log)
	if err != nil {
		ln.Close()
		return err
	}
	a.Version = version
	defer a.Close()
	if err := a.FirstStart(ctx, stdout); err != nil {
		ln.Close()
		return err
	}
	graphSrv := &http.Server{Handler: graph, ReadHeaderTimeout: 5 * time.Second}
	go graphSrv.Serve(ln)
	defer graphSrv.Close()
	env, err := demo.Setup{Store: store, Box: a.Box, PublicURL: cfg.PublicURL, GraphURL: "http://" + ln.Addr().String()}.Ensure(ctx)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "\n  Demo workspace %q is live: open %s/w/%s/ (traffic every %s; the voice agent goes quiet after %s)\n\n",
		demo.Slug, cfg.PublicURL, demo.Slug, *every, *quietAfter)
	traffic := &demo.Traffic{Env: env, Graph: graph, Client: &http.Client{Timeout: 10 * time.Second}, Log: log,
		Every: *every, QuietAfter: *quietAfter, QuietFor: *quietFor, Seed: *seed}
	if *duration > 0 {
		// --duration is how long the demo runs, counted once it is set up: a slow start (migrations on a
		// busy machine) must not use it up before the first delivery.
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, *duration)
		defer cancel()
	}
	g, gctx := errgroup.WithContext(ctx)
	g.Go(func() error { return runRoles(gctx, a, "all") })
	g.Go(func() error {
		if err := waitReady(gctx, cfg.PublicURL); err != nil {
			return err
		}
		return traffic.Run(gctx)
	})
	err = g.Wait()
	fmt.Fprintf(stdout, "demo: sent %d deliveries (%d not answered 200)\n", traffic.Sent(), traffic.Failed())
	if ctx.Err() != nil {
		return nil // stopped by the operator or --duration
	}
	return err
}

// waitReady polls /healthz until the HTTP server answers.
func waitReady(ctx context.Context, base string) error {
	for {
		resp, err := http.Get(base + "/healthz")
		if err == nil {
			resp.Body.Close()
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
}

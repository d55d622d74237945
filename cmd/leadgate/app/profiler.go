package app

import (
	"context"
	"net/http"
	"net/http/pprof"
	"time"
)

// ServeProfiler serves Go's profiler on Cfg.DebugAddr (loopback only, checked by config) until ctx
// ends, so that an operator can take a CPU or heap profile of a running process under real load
// (`go tool pprof http://127.0.0.1:6060/debug/pprof/profile?seconds=20`). It is off unless configured.
func (a *App) ServeProfiler(ctx context.Context) error {
	mux := http.NewServeMux()
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	mux.HandleFunc("/debug/pprof/cmdline", pprof.Cmdline)
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
	mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	srv := &http.Server{Addr: a.Cfg.DebugAddr, Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	a.Log.Info("profiler listening", "addr", a.Cfg.DebugAddr)
	return serveUntilDone(ctx, srv, 5*time.Second, "profiler", nil)
}

package web

import (
	"log/slog"
	"net/http"
	"runtime/debug"
	"time"

	"github.com/go-chi/chi/v5/middleware"
)

// requestLogger writes one structured line per request.
func requestLogger(log *slog.Logger) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			ww := middleware.NewWrapResponseWriter(w, r.ProtoMajor)
			start := time.Now()
			next.ServeHTTP(ww, r)
			lvl := slog.LevelDebug
			if ww.Status() >= 500 {
				lvl = slog.LevelWarn
			}
			if !log.Enabled(r.Context(), lvl) {
				return // building the attributes costs allocations on every webhook
			}
			log.Log(r.Context(), lvl, "http", "method", r.Method, "path", r.URL.Path, "status", ww.Status(),
				"bytes", ww.BytesWritten(), "took", time.Since(start), "request_id", middleware.GetReqID(r.Context()),
				"client_ip", middleware.GetClientIP(r.Context()))
		})
	}
}

// recoverer turns a panic into a logged 500 so one bad request never takes the service down.
func recoverer(log *slog.Logger) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			defer func() {
				if rec := recover(); rec != nil {
					if rec == http.ErrAbortHandler {
						panic(rec)
					}
					log.Error("panic", "panic", rec, "path", r.URL.Path, "request_id", middleware.GetReqID(r.Context()), "stack", string(debug.Stack()))
					jsonError(w, http.StatusInternalServerError, "internal error")
				}
			}()
			next.ServeHTTP(w, r)
		})
	}
}

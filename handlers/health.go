package handlers

import (
	"context"
	"net/http"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/leadgate/leadgate/ingest/spool"
	"github.com/leadgate/leadgate/models"
)

// Health serves /healthz (the process is alive) and /readyz (it can store
// events durably: Postgres reachable, or a spool configured).
type Health struct {
	Store *models.Store
	Redis redis.UniversalClient
	Spool *spool.Spool
}

// Live always answers 200 while the process serves HTTP.
func (h *Health) Live(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, http.StatusOK, map[string]string{"status": "ok"})
}

// Ready is 200 while leadgate can store durably; Redis down is "degraded", not unready.
func (h *Health) Ready(w http.ResponseWriter, r *http.Request) {
	ctx, cancel := context.WithTimeout(r.Context(), 2*time.Second)
	defer cancel()
	checks := map[string]string{"postgres": "ok", "redis": "ok"}
	pgErr := h.Store.Ping(ctx)
	if pgErr != nil {
		checks["postgres"] = "unreachable"
	}
	if err := h.Redis.Ping(ctx).Err(); err != nil {
		checks["redis"] = "unreachable"
	}
	if h.Spool != nil {
		checks["spool"] = "ok"
	}
	status, code := "ready", http.StatusOK
	switch {
	case pgErr != nil && h.Spool == nil:
		status, code = "unready", http.StatusServiceUnavailable
	case pgErr != nil || checks["redis"] != "ok":
		status = "degraded"
	}
	writeJSON(w, code, map[string]any{"status": status, "checks": checks})
}

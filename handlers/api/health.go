package api

import (
	"context"
	"net/http"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/leadgate/leadgate/handlers"
	"github.com/leadgate/leadgate/ingest/spool"
	"github.com/leadgate/leadgate/models"
)

// Health serves /healthz (the process is alive) and /readyz (it can store
// events durably: Postgres reachable, or a spool configured).
type Health struct {
	Store *models.Store
	Redis redis.UniversalClient
	Spool *spool.Spool
	// Draining, when set and true, makes /readyz answer 503 "draining": the process got SIGTERM and is
	// finishing what it has, so a load balancer must send new deliveries elsewhere.
	Draining func() bool
}

// Live always answers 200 while the process serves HTTP.
func (h *Health) Live(w http.ResponseWriter, r *http.Request) {
	handlers.WriteJSON(w, http.StatusOK, map[string]string{"status": "ok"})
}

// Ready is 200 while leadgate can store durably; Redis down is "degraded", not unready. "writes" says
// where an accepted delivery goes now: "postgres", "spool" (no Postgres server takes writes: down, or
// only a standby answers during a failover) or "none".
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
	status, code, writes := "ready", http.StatusOK, "postgres"
	switch {
	case pgErr != nil && h.Spool == nil:
		status, code, writes = "unready", http.StatusServiceUnavailable, "none"
	case pgErr != nil:
		status, writes = "degraded", "spool"
	case checks["redis"] != "ok":
		status = "degraded"
	}
	if h.Draining != nil && h.Draining() {
		status, code = "draining", http.StatusServiceUnavailable
	}
	handlers.WriteJSON(w, code, map[string]any{"status": status, "writes": writes, "checks": checks})
}

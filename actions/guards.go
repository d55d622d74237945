package actions

import (
	"log/slog"
	"time"

	"github.com/leadgate/leadgate/guards/alarm"
	"github.com/leadgate/leadgate/guards/alert"
	"github.com/leadgate/leadgate/guards/loop"
	"github.com/leadgate/leadgate/ingest/filter"
	"github.com/leadgate/leadgate/internal/secretbox"
	"github.com/leadgate/leadgate/models"
)

// Guards changes a workspace's guard settings: loop settings and circuit breakers, source filters,
// silence and health alarms, alert channels and the alerting settings. Every change is audited in the
// transaction that makes it; the caches and monitors that hold the old settings are told afterwards.
type Guards struct {
	Store   *models.Store
	Box     *secretbox.Box         // seals and opens alert channel secrets
	Log     *slog.Logger           // warnings that do not fail an action
	Filters *filter.Loader         // forgotten after a save (nil: caches expire on their own)
	Breaker *loop.Breaker          // clears Redis counts on reset (nil: none kept)
	Guards  *alert.WorkspaceGuards // SSRF guard per workspace
	Sender  *alert.Sender          // test sends
	Alarms  *alarm.Monitor         // evaluates an alarm again once saved (nil: at the next check)
	Now     func() time.Time       // nil: time.Now
}

func (g *Guards) now() time.Time {
	if g.Now != nil {
		return g.Now()
	}
	return time.Now()
}

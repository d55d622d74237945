package guards

import (
	"log/slog"
	"os"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/leadgate/leadgate/guards/alarm"
	"github.com/leadgate/leadgate/guards/alert"
	"github.com/leadgate/leadgate/guards/loop"
	"github.com/leadgate/leadgate/ingest/filter"
	"github.com/leadgate/leadgate/internal/secretbox"
	"github.com/leadgate/leadgate/models"
)

// Set is every guard of one process, built once and shared by ingest, apply,
// the sync engine, the API and the jobs.
type Set struct {
	Filters *filter.Loader         // ingest: a source's compiled filter rules
	Writes  *loop.Writes           // sync: remember what was written; apply: recall it for IsEcho
	Breaker *loop.Breaker          // apply: per-contact circuit breaker
	Guards  *alert.WorkspaceGuards // SSRF guard per workspace
	Sender  *alert.Sender
	Relay   *alert.Relay   // job alert:deliver
	Monitor *alarm.Monitor // job guard:check_alarms
	Deadman *alarm.Deadman // job guard:heartbeat
	// Refusals judges each source's signature-refusal alarm as ingest counts refusals.
	Refusals *alarm.RefusalAlarms
}

// New builds the guards on the process's store, Redis and secret box.
func New(store *models.Store, rdb redis.UniversalClient, box *secretbox.Box, log *slog.Logger) *Set {
	host, err := os.Hostname()
	if err != nil || host == "" {
		host = "leadgate"
	}
	guards := &alert.WorkspaceGuards{Store: store}
	sender := &alert.Sender{Guard: &guards.Base, Hostname: host}
	return &Set{
		Filters:  &filter.Loader{Store: store, TTL: 5 * time.Second},
		Writes:   &loop.Writes{Redis: rdb},
		Breaker:  &loop.Breaker{Redis: rdb, Store: store},
		Guards:   guards,
		Sender:   sender,
		Relay:    &alert.Relay{Store: store, Box: box, Sender: sender, GuardFor: guards.For, Log: log},
		Monitor:  &alarm.Monitor{Store: store, Log: log},
		Deadman:  &alarm.Deadman{Store: store, Guards: guards, Log: log},
		Refusals: &alarm.RefusalAlarms{Store: store, Log: log},
	}
}

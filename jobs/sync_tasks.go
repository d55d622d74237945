package jobs

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"time"

	"github.com/hibiken/asynq"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/redis/go-redis/v9"

	"github.com/leadgate/leadgate/crm/syncer"
	"github.com/leadgate/leadgate/internal/egress"
	"github.com/leadgate/leadgate/internal/secretbox"
	"github.com/leadgate/leadgate/models"
)

// CRM sync task types (queue "sync").
const (
	// TypeSyncTick fans the outbox out to the sync queues and starts a drain per destination with due work
	// and a side-effect pass. The scheduler enqueues it every few seconds; apply kicks it after commits.
	TypeSyncTick = "sync:tick"
	// TypeSyncDestination drains one destination (task id per destination: one drain at a time).
	TypeSyncDestination = "sync:destination"
	// TypeSideEffects delivers due side effects.
	TypeSideEffects = "side_effect:relay"
	// TypeSyncRetryDeadLetters revives transient CRM dead letters whose retry time has come.
	TypeSyncRetryDeadLetters = "sync:retry_dead_letters"
	// TypeSyncDrift compares what leadgate last wrote with each CRM.
	TypeSyncDrift = "sync:drift"
	// TypeSyncImport runs a destination's initial import.
	TypeSyncImport = "sync:import"
)

// TypeSyncProbePaused checks the destinations the system paused and resumes those whose fault is gone.
const TypeSyncProbePaused = "sync:probe_paused"

// syncProbeEvery is the probe's period: a fixed setup resumes within it plus one probe.
const syncProbeEvery = 15 * time.Second

// NewSyncProbePausedTask builds the periodic pause probe.
func NewSyncProbePausedTask() *asynq.Task {
	return asynq.NewTask(TypeSyncProbePaused, nil, asynq.Queue(QueueMaintenance), asynq.MaxRetry(0), asynq.Timeout(time.Minute),
		asynq.Unique(syncProbeEvery))
}

// NewSyncTickTask builds the periodic tick; Unique keeps ticks from piling up while no worker runs.
func NewSyncTickTask() *asynq.Task {
	return asynq.NewTask(TypeSyncTick, nil, asynq.Queue(QueueSync), asynq.MaxRetry(0), asynq.Timeout(time.Minute),
		asynq.Unique(30*time.Second))
}

// NewSyncRetryDeadLettersTask builds the periodic dead-letter retry.
func NewSyncRetryDeadLettersTask() *asynq.Task {
	return asynq.NewTask(TypeSyncRetryDeadLetters, nil, asynq.Queue(QueueMaintenance), asynq.MaxRetry(0), asynq.Timeout(time.Minute))
}

// NewSyncDriftTask builds the periodic drift check.
func NewSyncDriftTask() *asynq.Task {
	return asynq.NewTask(TypeSyncDrift, nil, asynq.Queue(QueueMaintenance), asynq.MaxRetry(0), asynq.Timeout(30*time.Minute))
}

type destinationPayload struct {
	DestinationID int64 `json:"destination_id"`
}

// ImportPayload starts an import run already recorded in sync_imports.
type ImportPayload struct {
	DestinationID int64  `json:"destination_id"`
	ImportID      int64  `json:"import_id"`
	Actor         string `json:"actor"`
}

// orphanRetries is the retry budget of the tasks that hold a task id (kick, drain, side-effect pass, import).
// Their handlers never fail, so it is spent only when a killed worker orphaned the task: asynq's
// recoverer then retries it (see RetryDelay), the retry finishes and frees the id. With no retry the
// orphan would be archived, and an archived task keeps its id, refusing every later drain (issue 7 §5,
// cmd/leadgate/boundary).
const orphanRetries = 1

// SyncQueue enqueues sync work. Enqueue failures are harmless: the periodic tick finds the work in Postgres.
type SyncQueue struct{ Client *asynq.Client }

// Kick asks for a tick now; a kick already waiting absorbs this one.
func (q SyncQueue) Kick(ctx context.Context) error {
	return q.enqueue(ctx, asynq.NewTask(TypeSyncTick, nil, asynq.Queue(QueueSync), asynq.MaxRetry(orphanRetries), asynq.Timeout(time.Minute),
		asynq.TaskID("sync:kick")))
}

// Import enqueues an import run.
func (q SyncQueue) Import(ctx context.Context, p ImportPayload) error {
	b, _ := json.Marshal(p)
	// orphanRetries: an import killed with its worker runs again (imports are idempotent: known contacts are
	// linked, never duplicated) instead of being archived with its run left "running".
	return q.enqueue(ctx, asynq.NewTask(TypeSyncImport, b, asynq.Queue(QueueSync), asynq.MaxRetry(orphanRetries), asynq.Timeout(6*time.Hour),
		asynq.TaskID("sync:import:"+strconv.FormatInt(p.ImportID, 10))))
}

func (q SyncQueue) enqueue(ctx context.Context, t *asynq.Task) error {
	if q.Client == nil {
		return nil
	}
	_, err := q.Client.EnqueueContext(ctx, t)
	if errors.Is(err, asynq.ErrTaskIDConflict) || errors.Is(err, asynq.ErrDuplicateTask) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("jobs: enqueue %s: %w", t.Type(), err)
	}
	return nil
}

// SyncTasks are the handlers of the sync task types.
type SyncTasks struct {
	Relay       *syncer.SyncRelay
	SideEffects *syncer.SideEffectRelay
	Import      *syncer.Importer
	Drift       *syncer.DriftCheck
	Probe       *syncer.PauseProbe
	Queue       SyncQueue
	Log         *slog.Logger
}

// Register adds the sync handlers to mux.
func (s *SyncTasks) Register(mux *asynq.ServeMux) {
	mux.HandleFunc(TypeSyncTick, s.tick)
	mux.HandleFunc(TypeSyncDestination, s.drain)
	mux.HandleFunc(TypeSideEffects, s.sideEffects)
	mux.HandleFunc(TypeSyncRetryDeadLetters, s.retryDeadLetters)
	mux.HandleFunc(TypeSyncDrift, s.drift)
	mux.HandleFunc(TypeSyncImport, s.importRun)
	mux.HandleFunc(TypeSyncProbePaused, s.probePaused)
}

// tick fans out and starts one drain per destination with due work; task ids keep one drain per
// destination in flight across every replica. It never fails the task (a failed kick would keep its id):
// anything left is still in Postgres for the next tick.
func (s *SyncTasks) tick(ctx context.Context, _ *asynq.Task) error {
	if err := s.Tick(ctx); err != nil && ctx.Err() == nil {
		s.Log.Warn("crm sync: tick stopped", "err", err)
	}
	return nil
}

// Tick runs one fan-out and enqueues the drains and the side-effect pass.
func (s *SyncTasks) Tick(ctx context.Context) error {
	if _, err := s.Relay.FanOut(ctx); err != nil {
		return err
	}
	ids, err := s.Relay.Store.SyncDueDestinations(ctx)
	if err != nil {
		return err
	}
	for _, id := range ids {
		b, _ := json.Marshal(destinationPayload{DestinationID: id})
		if err := s.Queue.enqueue(ctx, asynq.NewTask(TypeSyncDestination, b, asynq.Queue(QueueSync), asynq.MaxRetry(orphanRetries),
			asynq.Timeout(2*time.Minute), asynq.TaskID("sync:dest:"+strconv.FormatInt(id, 10)))); err != nil {
			return err
		}
	}
	if s.SideEffects != nil {
		return s.Queue.enqueue(ctx, asynq.NewTask(TypeSideEffects, nil, asynq.Queue(QueueSync), asynq.MaxRetry(orphanRetries),
			asynq.Timeout(2*time.Minute), asynq.TaskID("side_effect:relay")))
	}
	return nil
}

// drain never fails the task: a failed task would keep its id and block the destination's next drain.
// Whatever was not delivered is still in Postgres for the next tick.
func (s *SyncTasks) drain(ctx context.Context, t *asynq.Task) error {
	var p destinationPayload
	if err := json.Unmarshal(t.Payload(), &p); err != nil || p.DestinationID == 0 {
		s.Log.Error("crm sync: bad destination task", "payload", string(t.Payload()))
		return nil
	}
	if _, err := s.Relay.Drain(ctx, p.DestinationID); err != nil && ctx.Err() == nil {
		s.Log.Warn("crm sync: drain stopped", "destination", p.DestinationID, "err", err)
	}
	return nil
}

func (s *SyncTasks) sideEffects(ctx context.Context, _ *asynq.Task) error {
	if _, err := s.SideEffects.Deliver(ctx); err != nil && ctx.Err() == nil {
		s.Log.Warn("side effects: pass stopped", "err", err)
	}
	return nil
}

func (s *SyncTasks) retryDeadLetters(ctx context.Context, _ *asynq.Task) error {
	n, err := s.Relay.Store.SyncRetryDueDeadLetters(ctx)
	if n > 0 {
		s.Log.Info("crm sync: transient dead letters retried", "count", n)
	}
	return err
}

func (s *SyncTasks) probePaused(ctx context.Context, _ *asynq.Task) error {
	if s.Probe == nil {
		return nil
	}
	_, err := s.Probe.Run(ctx)
	return err
}

func (s *SyncTasks) drift(ctx context.Context, _ *asynq.Task) error {
	if s.Drift == nil {
		return nil
	}
	return s.Drift.RunAll(ctx)
}

func (s *SyncTasks) importRun(ctx context.Context, t *asynq.Task) error {
	var p ImportPayload
	if err := json.Unmarshal(t.Payload(), &p); err != nil || p.ImportID == 0 {
		s.Log.Error("crm sync: bad import task", "payload", string(t.Payload()))
		return nil
	}
	if _, err := s.Import.Run(ctx, p.DestinationID, p.ImportID, p.Actor); err != nil {
		s.Log.Warn("crm sync: import failed", "destination", p.DestinationID, "import", p.ImportID, "err", err)
	}
	return nil
}

// KickAfter wraps the apply handler: after a successful apply, the sync tick is asked to run now instead of
// at its next period.
func KickAfter(h asynq.Handler, q SyncQueue, log *slog.Logger) asynq.Handler {
	return asynq.HandlerFunc(func(ctx context.Context, t *asynq.Task) error {
		if err := h.ProcessTask(ctx, t); err != nil {
			return err
		}
		if err := q.Kick(ctx); err != nil {
			log.Debug("crm sync: kick failed; the periodic tick will pick the work up", "err", err)
		}
		return nil
	})
}

// StartImport enqueues the import run importID of a destination.
func (q SyncQueue) StartImport(ctx context.Context, destinationID, importID int64, actor string) error {
	return q.Import(ctx, ImportPayload{DestinationID: destinationID, ImportID: importID, Actor: actor})
}

// NewSyncTasks assembles the CRM sync of one process: the connector (adapters behind the Redis rate
// limiter), the outbox relay, the side-effect relay, the importer, the drift check and their metrics on reg.
// guard is the SSRF guard of CRM requests and the side-effect webhook (nil: public addresses only).
func NewSyncTasks(store *models.Store, box *secretbox.Box, rdb redis.Scripter, client *asynq.Client, reg prometheus.Registerer, log *slog.Logger,
	guard *egress.Guard) *SyncTasks {
	metrics := syncer.NewSyncMetrics(reg, store)
	conn := &syncer.Connector{Store: store, Box: box, Redis: rdb, Metrics: metrics, Egress: guard}
	return &SyncTasks{
		Relay:       &syncer.SyncRelay{Store: store, Connector: conn, Log: log, Metrics: metrics},
		SideEffects: &syncer.SideEffectRelay{Store: store, Box: box, Connector: conn, Log: log, Metrics: metrics, Egress: guard},
		Import:      &syncer.Importer{Store: store, Connector: conn, Log: log},
		Drift:       &syncer.DriftCheck{Store: store, Connector: conn, Log: log},
		Probe:       &syncer.PauseProbe{Store: store, Connector: conn, Log: log, Queue: SyncQueue{Client: client}},
		Queue:       SyncQueue{Client: client},
		Log:         log,
	}
}

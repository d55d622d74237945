package jobs

import (
	"context"
	"database/sql"
	"fmt"
	"log/slog"
	"time"

	"github.com/hibiken/asynq"
)

// schedulerLockID is the Postgres advisory lock that elects the one active scheduler.
const schedulerLockID int64 = 0x6c656164676174 // "leadgat"

// Periodic is one scheduled task.
type Periodic struct {
	Spec string // cron spec or "@every 30s"
	Task func() *asynq.Task
}

// Scheduler runs the asynq scheduler only while this process holds the
// leader lock, so any number of scheduler replicas produce each job once.
type Scheduler struct {
	DB       *sql.DB
	Redis    asynq.RedisConnOpt
	Log      *slog.Logger
	Periodic []Periodic
	// Poll is how often a standby tries to become leader.
	Poll time.Duration
}

// Run blocks until ctx ends.
func (s *Scheduler) Run(ctx context.Context) error {
	for {
		held, err := s.leadOnce(ctx)
		if ctx.Err() != nil {
			return nil
		}
		if err != nil {
			s.Log.Warn("scheduler: leadership lost or unavailable", "err", err)
		} else if !held {
			s.Log.Debug("scheduler: standby")
		}
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(s.Poll):
		}
	}
}

// leadOnce tries to take the lock on a dedicated connection and, if it does,
// runs the asynq scheduler until ctx ends or the connection breaks.
func (s *Scheduler) leadOnce(ctx context.Context) (bool, error) {
	conn, err := s.DB.Conn(ctx)
	if err != nil {
		return false, fmt.Errorf("jobs: scheduler connection: %w", err)
	}
	defer conn.Close()
	var got bool
	if err := conn.QueryRowContext(ctx, "SELECT pg_try_advisory_lock($1)", schedulerLockID).Scan(&got); err != nil {
		return false, fmt.Errorf("jobs: scheduler lock: %w", err)
	}
	if !got {
		return false, nil
	}
	defer conn.ExecContext(context.WithoutCancel(ctx), "SELECT pg_advisory_unlock($1)", schedulerLockID)
	s.Log.Info("scheduler: this process is the active scheduler")
	sched := asynq.NewScheduler(s.Redis, &asynq.SchedulerOpts{Location: time.UTC, LogLevel: asynq.WarnLevel})
	for _, p := range s.Periodic {
		if _, err := sched.Register(p.Spec, p.Task()); err != nil {
			return true, fmt.Errorf("jobs: register %s: %w", p.Spec, err)
		}
	}
	if err := sched.Start(); err != nil {
		return true, fmt.Errorf("jobs: start scheduler: %w", err)
	}
	defer sched.Shutdown()
	// Keep the lock's session alive and notice when it breaks.
	t := time.NewTicker(5 * time.Second)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return true, nil
		case <-t.C:
			if err := conn.PingContext(ctx); err != nil {
				return true, fmt.Errorf("jobs: scheduler lock connection: %w", err)
			}
		}
	}
}

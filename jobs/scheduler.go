package jobs

import (
	"context"
	"database/sql"
	"errors"
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
// leader lock (a Postgres session advisory lock), so any number of scheduler
// replicas produce each job once. After a Postgres failover the lock lives on
// in no server: the active scheduler notices within two Check intervals and
// stops, and a standby takes the lock on the new primary and starts after
// Takeover, which is longer, so that two schedulers are never active at once.
type Scheduler struct {
	DB       *sql.DB
	Redis    asynq.RedisConnOpt
	Log      *slog.Logger
	Periodic []Periodic
	// Poll is how often a standby tries to become leader.
	Poll time.Duration
	// Check is how often the active scheduler verifies that its session still holds the lock, and the
	// longest that check may take (default 1 s).
	Check time.Duration
	// Takeover is how long a process that has just taken the lock waits, checking it, before it starts
	// (default 2×Check + 500 ms): a previous leader whose Postgres went away keeps scheduling until its
	// own check fails, at most 2×Check after the lock was lost.
	Takeover time.Duration
}

// Run blocks until ctx ends.
func (s *Scheduler) Run(ctx context.Context) error {
	if s.Check <= 0 {
		s.Check = time.Second
	}
	if s.Takeover <= 0 {
		s.Takeover = 2*s.Check + 500*time.Millisecond
	}
	if s.Poll <= 0 {
		s.Poll = 2 * time.Second
	}
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
// runs the asynq scheduler until ctx ends or the lock can no longer be shown
// to be held.
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
	// Takeover: a previous leader may still be scheduling, unaware that its lock went with its server.
	if stop, err := s.holdUntil(ctx, conn, time.After(s.Takeover)); stop || err != nil {
		return true, err
	}
	sched := asynq.NewScheduler(s.Redis, &asynq.SchedulerOpts{Location: time.UTC, LogLevel: asynq.WarnLevel})
	for _, p := range s.Periodic {
		if _, err := sched.Register(p.Spec, p.Task()); err != nil {
			return true, fmt.Errorf("jobs: register %s: %w", p.Spec, err)
		}
	}
	s.Log.Info("scheduler: active")
	// "inactive" is logged after the last enqueue: the replicated chaos run measures overlaps from these.
	defer s.Log.Info("scheduler: inactive")
	if err := sched.Start(); err != nil {
		return true, fmt.Errorf("jobs: start scheduler: %w", err)
	}
	defer sched.Shutdown()
	_, err = s.holdUntil(ctx, conn, nil)
	return true, err
}

// holdUntil checks the lock every Check until until fires (nil: never), ctx ends (stop) or a check fails.
func (s *Scheduler) holdUntil(ctx context.Context, conn *sql.Conn, until <-chan time.Time) (stop bool, err error) {
	t := time.NewTicker(s.Check)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return true, nil
		case <-until:
			return false, nil
		case <-t.C:
			if err := s.stillHeld(ctx, conn); err != nil {
				return false, err
			}
		}
	}
}

// stillHeld checks, within Check, that the connection's session holds the lock.
func (s *Scheduler) stillHeld(ctx context.Context, conn *sql.Conn) error {
	cctx, cancel := context.WithTimeout(ctx, s.Check)
	defer cancel()
	var held bool
	err := conn.QueryRowContext(cctx, `SELECT EXISTS (SELECT 1 FROM pg_locks WHERE locktype = 'advisory' AND granted
		AND pid = pg_backend_pid() AND classid = ($1::bigint >> 32)::oid AND objid = ($1::bigint & 4294967295)::oid AND objsubid = 1)`,
		schedulerLockID).Scan(&held)
	switch {
	case err != nil:
		return fmt.Errorf("jobs: scheduler lock connection: %w", err)
	case !held:
		return errors.New("jobs: scheduler lock: no longer held by this session")
	}
	return nil
}

// Package models holds leadgate's persistence: GORM structs, the Store that
// reads and writes them, and schema migration. Postgres is the source of truth.
package models

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/stdlib" // also registers the "pgx" database/sql driver
	"gorm.io/driver/postgres"
	"gorm.io/gorm"
	"gorm.io/gorm/logger"
)

// ErrNotFound is returned when a looked-up row does not exist.
var ErrNotFound = errors.New("not found")

// ErrConflict is returned when a write collides with a unique constraint.
var ErrConflict = errors.New("already exists")

// Store is the one entry point to Postgres. Methods take ctx first and are safe
// for concurrent use.
type Store struct {
	db        *gorm.DB
	passwords *passwordHashing
}

// Option adjusts how Open connects and what the Store does.
type Option func(*openOptions)

type openOptions struct {
	conn         *pgx.ConnConfig
	passwordCost int
}

// WithQueryTracer traces every statement of every connection (benchmarks count statements with it).
func WithQueryTracer(t pgx.QueryTracer) Option {
	return func(o *openOptions) { o.conn.Tracer = t }
}

// WithPasswordCost sets the bcrypt cost of the password hashes the Store makes (default
// bcrypt.DefaultCost). Tests that sign many users in use bcrypt.MinCost: at the default, hashing was a
// third of the admin UI tests' CPU under the race detector.
func WithPasswordCost(cost int) Option {
	return func(o *openOptions) { o.passwordCost = cost }
}

// Open connects to Postgres at dsn, creating the database first when it does not
// exist (CONTRACT.md: serve creates it).
func Open(ctx context.Context, dsn string, log *slog.Logger, opts ...Option) (*Store, error) {
	if err := ensureDatabase(ctx, dsn); err != nil {
		return nil, err
	}
	cfg, err := pgx.ParseConfig(dsn)
	if err != nil {
		return nil, fmt.Errorf("models: parse database url: %w", err)
	}
	o := openOptions{conn: cfg}
	for _, opt := range opts {
		opt(&o)
	}
	db, err := gorm.Open(postgres.New(postgres.Config{Conn: stdlib.OpenDB(*cfg)}), &gorm.Config{
		Logger:                 logger.Discard,
		SkipDefaultTransaction: true,
		PrepareStmt:            false,
		NowFunc:                func() time.Time { return time.Now().UTC() },
	})
	if err != nil {
		return nil, fmt.Errorf("models: open postgres: %w", err)
	}
	sqlDB, err := db.DB()
	if err != nil {
		return nil, fmt.Errorf("models: sql handle: %w", err)
	}
	sqlDB.SetMaxOpenConns(40)
	sqlDB.SetMaxIdleConns(40)
	sqlDB.SetConnMaxIdleTime(5 * time.Minute)
	return &Store{db: db, passwords: newPasswordHashing(o.passwordCost)}, nil
}

// NewStore wraps an existing GORM handle (tests, transactions).
func NewStore(db *gorm.DB) *Store { return &Store{db: db, passwords: newPasswordHashing(0)} }

// DB exposes the GORM handle to packages that own their own tables (the sandbox CRM).
func (s *Store) DB() *gorm.DB { return s.db }

// Close releases the connection pool.
func (s *Store) Close() error {
	sqlDB, err := s.db.DB()
	if err != nil {
		return err
	}
	return sqlDB.Close()
}

// Ping reports whether Postgres answers within ctx.
func (s *Store) Ping(ctx context.Context) error {
	sqlDB, err := s.db.DB()
	if err != nil {
		return err
	}
	return sqlDB.PingContext(ctx)
}

// SQL returns the underlying *sql.DB (migrations, health checks).
func (s *Store) SQL() (*sql.DB, error) { return s.db.DB() }

// Tx runs fn in one transaction with a Store bound to it.
func (s *Store) Tx(ctx context.Context, fn func(tx *Store) error) error {
	return s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		return fn(&Store{db: tx, passwords: s.passwords})
	})
}

// ensureDatabase creates the target database when the server says it is missing. dsn may name several
// hosts (failover); the database is created on whichever of them pgx connects to.
func ensureDatabase(ctx context.Context, dsn string) error {
	cfg, err := pgx.ParseConfig(dsn)
	if err != nil {
		return fmt.Errorf("models: parse database url: %w", err)
	}
	name := cfg.Database
	if name == "" {
		return nil
	}
	probe := stdlib.OpenDB(*cfg.Copy())
	defer probe.Close()
	err = probe.PingContext(ctx)
	var pgErr *pgconn.PgError
	if err == nil || !errors.As(err, &pgErr) || pgErr.Code != "3D000" {
		return nil // exists, or a different problem the caller will see on connect
	}
	admin := cfg.Copy()
	admin.Database = "postgres"
	adb := stdlib.OpenDB(*admin)
	defer adb.Close()
	_, err = adb.ExecContext(ctx, `CREATE DATABASE "`+strings.ReplaceAll(name, `"`, `""`)+`"`)
	if err != nil && !(errors.As(err, &pgErr) && pgErr.Code == "42P04") {
		return fmt.Errorf("models: create database %s: %w", name, err)
	}
	return nil
}

// isUniqueViolation reports a unique-constraint error from Postgres.
func isUniqueViolation(err error) bool {
	var pgErr *pgconn.PgError
	return errors.As(err, &pgErr) && pgErr.Code == "23505"
}

// IsUnavailable reports whether err means Postgres could not be reached (as
// opposed to a query error): the caller may spool or answer 503.
func IsUnavailable(err error) bool {
	if err == nil {
		return false
	}
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		// Class 08 connection exceptions, 57P0x shutdown / cannot connect now, 53 insufficient resources,
		// 25006 a read-only server (a standby, or a primary demoted by a failover while this connection was open).
		return strings.HasPrefix(pgErr.Code, "08") || strings.HasPrefix(pgErr.Code, "57P") || strings.HasPrefix(pgErr.Code, "53") ||
			pgErr.Code == "25006"
	}
	return !errors.Is(err, context.Canceled) && !errors.Is(err, ErrNotFound)
}

// ErrBusy means a row or advisory lock is held by another transaction; the
// caller retries soon instead of waiting.
var ErrBusy = errors.New("busy: locked by another worker")

func isLockNotAvailable(err error) bool {
	var pgErr *pgconn.PgError
	return errors.As(err, &pgErr) && pgErr.Code == "55P03"
}

// TryAdvisoryXactLock takes a transaction-scoped advisory lock on key without
// waiting; it reports whether the lock was obtained.
func (s *Store) TryAdvisoryXactLock(ctx context.Context, key string) (bool, error) {
	var ok bool
	if err := s.db.WithContext(ctx).Raw(`SELECT pg_try_advisory_xact_lock(hashtextextended(?, 0))`, key).Scan(&ok).Error; err != nil {
		return false, fmt.Errorf("models: advisory lock: %w", err)
	}
	return ok, nil
}

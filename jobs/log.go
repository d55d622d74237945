package jobs

import (
	"errors"
	"fmt"
	"log/slog"
)

// AsynqLogger adapts slog to asynq's logger interface.
type AsynqLogger struct{ Log *slog.Logger }

// Debug implements asynq.Logger.
func (l AsynqLogger) Debug(args ...any) { l.Log.Debug(fmt.Sprint(args...), "component", "asynq") }

// Info implements asynq.Logger.
func (l AsynqLogger) Info(args ...any) { l.Log.Info(fmt.Sprint(args...), "component", "asynq") }

// Warn implements asynq.Logger.
func (l AsynqLogger) Warn(args ...any) { l.Log.Warn(fmt.Sprint(args...), "component", "asynq") }

// Error implements asynq.Logger.
func (l AsynqLogger) Error(args ...any) { l.Log.Error(fmt.Sprint(args...), "component", "asynq") }

// Fatal implements asynq.Logger; asynq calls it only on unrecoverable start-up errors.
func (l AsynqLogger) Fatal(args ...any) {
	l.Log.Error(fmt.Sprint(args...), "component", "asynq", "fatal", true)
}

func asErr[T any](err error, target *T) bool { return errors.As(err, target) }

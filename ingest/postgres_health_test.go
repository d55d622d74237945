package ingest

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"
)

// Once a write fails, deliveries skip Postgres until the canary's probe succeeds; a probe that fails
// keeps them on the spool, and the first one that succeeds routes them back and wakes the spool replay.
func TestPostgresHealthStaysDownUntilAProbeSucceedsThenWakesTheReplay(t *testing.T) {
	var up atomic.Bool
	var probes atomic.Int32
	h := &PostgresHealth{Every: time.Millisecond, Back: make(chan struct{}, 1), Probe: func(context.Context) error {
		probes.Add(1)
		if !up.Load() {
			return errors.New("connection refused")
		}
		return nil
	}}
	if h.Down() {
		t.Fatal("a fresh health is down")
	}
	h.MarkDown(errors.New("connection refused"))
	h.MarkDown(errors.New("connection refused")) // a second failure starts no second canary
	for probes.Load() < 3 {
		time.Sleep(time.Millisecond)
	}
	if !h.Down() {
		t.Fatal("up while every probe failed")
	}
	select {
	case <-h.Back:
		t.Fatal("the replay was woken while Postgres was down")
	default:
	}
	up.Store(true)
	select {
	case <-h.Back:
	case <-time.After(10 * time.Second):
		t.Fatal("the replay was not woken after the probe succeeded")
	}
	if h.Down() {
		t.Fatal("still down after a probe succeeded")
	}
}

// A write that goes through routes deliveries back to Postgres without waiting for the canary.
func TestPostgresHealthIsUpAfterAWriteGoesThrough(t *testing.T) {
	h := &PostgresHealth{Every: time.Hour, Probe: func(context.Context) error { return errors.New("refused") }}
	h.MarkDown(errors.New("refused"))
	h.MarkUp()
	if h.Down() {
		t.Fatal("still down after a write went through")
	}
	var none *PostgresHealth
	none.MarkDown(errors.New("refused"))
	if none.Down() {
		t.Fatal("a nil health routes deliveries to the spool")
	}
}

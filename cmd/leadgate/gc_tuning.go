package main

import "runtime/debug"

// Garbage-collector defaults for the serving process. Apply and ingest allocate a great deal per event
// and keep little: with Go's default (GOGC=100) collection took 10–12 % of the process's CPU under load.
// Collecting at four times the live heap instead, with a soft limit so that a large backlog cannot grow
// the heap without bound, gave the default binary more accepted webhooks a second in the same runs
// (docs/benchmarks.md). GOGC and GOMEMLIMIT, when set, are Go's own settings and win.
const (
	serveGCPercent   = 400
	serveMemoryLimit = 1 << 30 // 1 GiB
)

// tuneGC applies the serving defaults for what the environment leaves unset.
func tuneGC(getenv func(string) string) {
	if getenv("GOGC") == "" {
		debug.SetGCPercent(serveGCPercent)
	}
	if getenv("GOMEMLIMIT") == "" {
		debug.SetMemoryLimit(serveMemoryLimit)
	}
}

package main

import (
	"math"
	"runtime/debug"
	"testing"
)

// The serving process collects garbage at four times the live heap under a 1 GiB soft limit, unless the
// operator set Go's own GOGC or GOMEMLIMIT, which then stand.
func TestServeTunesTheCollectorOnlyWhereTheEnvironmentIsSilent(t *testing.T) {
	prevPercent, prevLimit := debug.SetGCPercent(100), debug.SetMemoryLimit(math.MaxInt64)
	t.Cleanup(func() { debug.SetGCPercent(prevPercent); debug.SetMemoryLimit(prevLimit) })

	tuneGC(func(string) string { return "" })
	if got := debug.SetGCPercent(100); got != serveGCPercent {
		t.Errorf("GC percent with GOGC unset = %d, want %d", got, serveGCPercent)
	}
	if got := debug.SetMemoryLimit(math.MaxInt64); got != serveMemoryLimit {
		t.Errorf("memory limit with GOMEMLIMIT unset = %d, want %d", got, serveMemoryLimit)
	}

	set := map[string]string{"GOGC": "150", "GOMEMLIMIT": "512MiB"}
	tuneGC(func(k string) string { return set[k] })
	if got := debug.SetGCPercent(100); got != 100 {
		t.Errorf("GC percent with GOGC set = %d, want the runtime's own (100 here)", got)
	}
	if got := debug.SetMemoryLimit(math.MaxInt64); got != math.MaxInt64 {
		t.Errorf("memory limit with GOMEMLIMIT set = %d, want the runtime's own", got)
	}
}

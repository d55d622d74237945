package chaos

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

func TestOverlapAndGapMeasureSchedulerActivity(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	at := func(s float64) time.Time { return t0.Add(time.Duration(s * float64(time.Second))) }
	for _, c := range []struct {
		name         string
		spans        [][]span
		end          time.Time
		overlap, gap time.Duration
	}{
		{"one then the other, back to back", [][]span{{{at(0), at(10)}}, {{at(10), time.Time{}}}}, at(20), 0, 0},
		{"a takeover gap", [][]span{{{at(0), at(10)}}, {{at(13.5), time.Time{}}}}, at(20), 0, 3500 * time.Millisecond},
		{"two at once", [][]span{{{at(0), at(10)}}, {{at(8), at(15)}}}, at(15), 2 * time.Second, 0},
		{"none active at the end", [][]span{{{at(0), at(10)}}, nil}, at(12), 0, 2 * time.Second},
	} {
		t.Run(c.name, func(t *testing.T) {
			o, g := overlapAndGap(c.spans, c.end)
			if o != c.overlap || g != c.gap {
				t.Fatalf("overlap %s gap %s, want %s and %s", o, g, c.overlap, c.gap)
			}
		})
	}
}

func TestSchedulerSpansAreReadFromTheJSONLog(t *testing.T) {
	path := filepath.Join(t.TempDir(), "scheduler.log")
	log := `{"time":"2026-01-01T00:00:01Z","level":"INFO","msg":"leadgate started"}
{"time":"2026-01-01T00:00:02Z","level":"INFO","msg":"scheduler: active"}
not json
{"time":"2026-01-01T00:00:05.5Z","level":"INFO","msg":"scheduler: inactive"}
{"time":"2026-01-01T00:00:09Z","level":"INFO","msg":"scheduler: active"}
`
	if err := os.WriteFile(path, []byte(log), 0o644); err != nil {
		t.Fatal(err)
	}
	spans, err := schedulerSpans(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(spans) != 2 || spans[0].to.Sub(spans[0].from) != 3500*time.Millisecond || !spans[1].to.IsZero() {
		t.Fatalf("spans %+v", spans)
	}
}

func TestUsageReadsThisProcessesMemoryAndCPU(t *testing.T) {
	if _, err := os.Stat("/proc/self/stat"); err != nil {
		t.Skip("no /proc")
	}
	for start := time.Now(); time.Since(start) < 50*time.Millisecond; { // some CPU time to count
	}
	rss, cpu := usage(os.Getpid())
	if rss < 1<<20 || cpu <= 0 {
		t.Fatalf("peak RSS %d bytes, CPU %s: want both measured", rss, cpu)
	}
}

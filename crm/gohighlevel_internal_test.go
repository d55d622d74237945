package crm

import (
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"
)

// Normalizing a multi-select value is idempotent and yields clean options (none empty, none holding the
// separator or surrounding space), so a value read back from GHL never looks changed and is never
// rewritten in a loop.
func FuzzGHLMultiValue(f *testing.F) {
	for _, s := range []string{"", "a;b", " b ; a ;; a", ";", "x", "a;;b;", "ü; é"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, v string) {
		opts := splitMulti(v)
		again := splitMulti(strings.Join(opts, ";"))
		if !slices.Equal(opts, again) {
			t.Fatalf("splitMulti(%q) = %q, then %q", v, opts, again)
		}
		for _, o := range opts {
			if o == "" || strings.Contains(o, ";") || strings.TrimSpace(o) != o {
				t.Fatalf("splitMulti(%q) holds option %q", v, o)
			}
		}
		if got := ghlFieldValue("MULTIPLE_OPTIONS", toAny(opts)); got != strings.Join(opts, ";") {
			t.Fatalf("read back %q, want %q", got, strings.Join(opts, ";"))
		}
	})
}

func toAny(s []string) []any {
	out := make([]any, len(s))
	for i, x := range s {
		out[i] = x
	}
	return out
}

// The daily quota waits for Retry-After when GHL sends one, else until midnight UTC.
func TestGHLDailyReset(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 12, 1, 21, 30, 0, 0, time.UTC)
	if got := ghlDailyReset(http.Header{}, now); got != 2*time.Hour+30*time.Minute {
		t.Errorf("no Retry-After: %v, want until midnight UTC (2h30m)", got)
	}
	pst := time.Date(2026, 12, 1, 21, 30, 0, 0, time.FixedZone("PST", -8*3600)) // 05:30 UTC on the 2nd
	if got := ghlDailyReset(http.Header{}, pst); got != 18*time.Hour+30*time.Minute {
		t.Errorf("no Retry-After, local clock: %v, want until midnight UTC (18h30m)", got)
	}
	if got := ghlDailyReset(http.Header{"Retry-After": {"120"}}, now); got != 2*time.Minute {
		t.Errorf("Retry-After 120: %v", got)
	}
}

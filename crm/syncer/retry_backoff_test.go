package syncer

import (
	"testing"
	"time"
)

// Retry n waits start·2^(n-1) give or take half, and never more than the ceiling plus its jitter.
func TestRetryWaitDoublesWithJitterUpToItsCeiling(t *testing.T) {
	t.Parallel()
	const start, ceiling = 2 * time.Second, 30 * time.Second
	for n := 1; n <= 8; n++ {
		base := min(start<<(n-1), ceiling)
		for range 50 {
			if got := retryWait(start, ceiling, n); got < base/2 || got > base*3/2 {
				t.Fatalf("retry %d waited %s, want %s ± 50 %%", n, got, base)
			}
		}
	}
}

// A tunable left at zero (or below) takes its default; a set one is kept.
func TestARelayTunableDefaultsOnlyWhenUnset(t *testing.T) {
	t.Parallel()
	if got := positiveOr(0, 5); got != 5 {
		t.Errorf("unset = %d, want the default 5", got)
	}
	if got := positiveOr(-1*time.Second, 2*time.Second); got != 2*time.Second {
		t.Errorf("negative = %s, want the default", got)
	}
	if got := positiveOr(3, 5); got != 3 {
		t.Errorf("set = %d, want 3", got)
	}
}

package syncer

import (
	"time"

	"github.com/cenkalti/backoff/v5"
)

// retryWait is the wait before retry attempt n (1-based) of a relay's delivery: start·2^(n-1) ± 50 %
// jitter, capped at ceiling. The CRM sync and the side-effect relay retry the same way; only their start
// and ceiling differ.
func retryWait(start, ceiling time.Duration, n int) time.Duration {
	b := backoff.NewExponentialBackOff()
	b.InitialInterval = start
	b.RandomizationFactor = 0.5
	b.Multiplier = 2
	b.MaxInterval = ceiling
	b.Reset()
	var d time.Duration
	for range n {
		d = b.NextBackOff()
	}
	return d
}

// positiveOr is a relay's tunable v when set (above zero), else its default.
func positiveOr[T int | time.Duration](v, def T) T {
	if v > 0 {
		return v
	}
	return def
}

package chaos

import (
	"context"
	"fmt"
	"sync"
	"time"
)

// FaultRecord is one injected fault: when it started (from the start of the traffic), how long the
// injection and recovery took, and its error if it could not be injected.
type FaultRecord struct {
	Fault string
	At    time.Duration
	Took  time.Duration
	Err   string
	Skip  string // why the fault does not apply to this mode
}

// faultHooks are how a mode suffers each fault; a nil hook means the fault does not apply.
type faultHooks struct {
	sigkill         func(context.Context) error
	redisRestart    func(context.Context) error
	postgresRestart func(context.Context) error
	crm             *fakeCRMProc
	storm           time.Duration
	// replicated are the replicated run's faults by name (ReplicatedFaults).
	replicated map[string]func(context.Context) error
}

// injectFaults spreads the configured faults over the send window (the i-th of k at (i+1)/(k+1) of
// it), the storm running alongside the others. It returns when every fault has ended.
func injectFaults(ctx context.Context, faults []string, window time.Duration, base time.Time, h faultHooks, logf func(string, ...any)) []FaultRecord {
	var (
		mu  sync.Mutex
		out []FaultRecord
		wg  sync.WaitGroup
	)
	record := func(r FaultRecord) {
		mu.Lock()
		out = append(out, r)
		mu.Unlock()
		if r.Err != "" {
			logf("fault %s at %s failed: %s", r.Fault, r.At.Round(time.Millisecond), r.Err)
		} else if r.Skip == "" {
			logf("fault %s at %s, recovered in %s", r.Fault, r.At.Round(time.Millisecond), r.Took.Round(time.Millisecond))
		}
	}
	for i, f := range faults {
		due := base.Add(window * time.Duration(i+1) / time.Duration(len(faults)+1))
		select {
		case <-ctx.Done():
			return out
		case <-time.After(time.Until(due)):
		}
		began := time.Now()
		r := FaultRecord{Fault: f, At: began.Sub(base)}
		run := func(hook func(context.Context) error) {
			if hook == nil {
				r.Skip = "not applicable"
				record(r)
				return
			}
			if err := hook(ctx); err != nil {
				r.Err = err.Error()
			}
			r.Took = time.Since(began)
			record(r)
		}
		switch f {
		case FaultSIGKILL:
			run(h.sigkill)
		case FaultRedisRestart:
			run(h.redisRestart)
		case FaultPostgresRestart:
			run(h.postgresRestart)
		case FaultCRMStorm:
			wg.Go(func() {
				run(func(ctx context.Context) error { return storm(ctx, h.crm, h.storm) })
			})
		default:
			run(h.replicated[f])
		}
	}
	wg.Wait()
	return out
}

// storm makes the CRM answer every request 503 for d.
func storm(ctx context.Context, crm *fakeCRMProc, d time.Duration) error {
	if err := crm.setFailRate(ctx, 1); err != nil {
		return err
	}
	select {
	case <-ctx.Done():
	case <-time.After(d):
	}
	// The storm must end even when the run is cancelled.
	end, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	if err := crm.setFailRate(end, 0); err != nil {
		return fmt.Errorf("end of storm: %w", err)
	}
	return nil
}

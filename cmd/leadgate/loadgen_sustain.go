package main

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"time"
)

// sustainConfig is how `loadgen --find-sustained` steps the rate.
type sustainConfig struct {
	StartRate    float64       // first step
	Factor       float64       // each step's rate is the last one's times this
	StepDuration time.Duration // each step
	Hold         time.Duration // the confirming run at the rate found
	MaxWait      time.Duration // an event must be applied within this
}

// step is one paced run and what the inbox did meanwhile.
type step struct {
	rate        float64
	res         *loadgenResult
	oldest      time.Duration // the longest any due event was seen waiting
	first, last float64       // average backlog over the first and the last third of the run
	pass        bool
	why         string
}

// findSustained runs leadgate's ingest alone at max rate (the ingest-only figure), then steps a paced
// rate up until apply falls behind: an event waits longer than MaxWait, or the backlog grows, or
// ingest cannot take the rate. The last rate that held is run again for Hold to confirm it.
func findSustained(ctx context.Context, cfg loadgenConfig, sc sustainConfig, w *inboxWatch, out io.Writer) error {
	ingestOnly, err := runLoadgen(ctx, cfg)
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "ingest-only (max rate, %s): %.1f accepted/s, p99 %s\n", cfg.Duration, ingestOnly.perSecond(ingestOnly.Accepted), ms(ingestOnly.P99))
	if err := settle(ctx, w, out); err != nil {
		return err
	}
	var held *step
	for rate := sc.StartRate; ; rate *= sc.Factor {
		s, err := runStep(ctx, cfg, sc, w, rate, sc.StepDuration)
		if err != nil {
			return err
		}
		s.print(out)
		if err := settle(ctx, w, out); err != nil {
			return err
		}
		if !s.pass {
			break
		}
		held = s
	}
	if held == nil {
		fmt.Fprintf(out, "sustained: not even %.0f/s held\n", sc.StartRate)
		return nil
	}
	for _, rate := range []float64{held.rate, held.rate / sc.Factor} {
		s, err := runStep(ctx, cfg, sc, w, rate, sc.Hold)
		if err != nil {
			return err
		}
		s.print(out)
		if s.pass {
			fmt.Fprintf(out, "sustained end-to-end: %.0f events/s for %s (every event applied within %s, backlog flat); ingest-only %.1f accepted/s\n",
				rate, sc.Hold, sc.MaxWait, ingestOnly.perSecond(ingestOnly.Accepted))
			return nil
		}
		if err := settle(ctx, w, out); err != nil {
			return err
		}
	}
	fmt.Fprintf(out, "sustained: %.0f/s held for %s but not for %s\n", held.rate, sc.StepDuration, sc.Hold)
	return nil
}

// settle waits for apply to catch up before the next step, so that each step starts from an empty inbox.
func settle(ctx context.Context, w *inboxWatch, out io.Writer) error {
	ok, err := w.waitEmpty(ctx, 5*time.Minute)
	if err != nil {
		return err
	}
	if !ok {
		fmt.Fprintln(out, "note        the inbox did not empty within 5 minutes; the next step starts behind")
	}
	return nil
}

func runStep(ctx context.Context, cfg loadgenConfig, sc sustainConfig, w *inboxWatch, rate float64, d time.Duration) (*step, error) {
	cfg.Rate, cfg.Duration = rate, d
	type seen struct {
		at time.Duration
		b  backlog
	}
	var samples []seen
	stop := make(chan struct{})
	watched := make(chan error, 1)
	began := time.Now()
	go func() {
		t := time.NewTicker(250 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-stop:
				watched <- nil
				return
			case <-t.C:
				b, err := w.sample(ctx)
				if err != nil {
					watched <- err
					return
				}
				samples = append(samples, seen{time.Since(began), b})
			}
		}
	}()
	res, err := runLoadgen(ctx, cfg)
	close(stop)
	if werr := <-watched; err == nil {
		err = werr
	}
	if err != nil {
		return nil, err
	}
	s := &step{rate: rate, res: res}
	var firstN, lastN int
	for _, x := range samples {
		s.oldest = max(s.oldest, x.b.Oldest)
		switch {
		case x.at < d/3:
			s.first += float64(x.b.Pending)
			firstN++
		case x.at > 2*d/3:
			s.last += float64(x.b.Pending)
			lastN++
		}
	}
	if firstN > 0 {
		s.first /= float64(firstN)
	}
	if lastN > 0 {
		s.last /= float64(lastN)
	}
	s.judge(sc.MaxWait)
	return s, nil
}

// judge decides whether apply kept up with the step: ingest took the rate and answered every delivery
// 200, no due event waited longer than maxWait, and the backlog of the last third is no larger than
// the first third's (with 10 % and half a second of traffic of slack).
func (s *step) judge(maxWait time.Duration) {
	res := s.res
	switch {
	case res.perSecond(res.Accepted) < 0.97*s.rate:
		s.why = fmt.Sprintf("ingest took %.1f/s", res.perSecond(res.Accepted))
	case res.Accepted != res.Sent:
		s.why = fmt.Sprintf("%d deliveries not answered 200", res.Sent-res.Accepted)
	case s.oldest > maxWait:
		s.why = fmt.Sprintf("an event waited %s", s.oldest.Round(10*time.Millisecond))
	case s.last > 1.1*s.first+s.rate/2:
		s.why = fmt.Sprintf("backlog grew from %.0f to %.0f", s.first, s.last)
	default:
		s.pass = true
		s.why = ""
	}
}

func (s *step) print(w io.Writer) {
	verdict := "held"
	if !s.pass {
		verdict = "fell behind: " + s.why
	}
	fmt.Fprintf(w, "step %6.0f/s for %-4s accepted %7.1f/s  p99 %-9s  oldest due %-8s backlog %5.0f -> %5.0f  %s\n",
		s.rate, s.res.Elapsed.Round(time.Second), s.res.perSecond(s.res.Accepted), ms(s.res.P99), s.oldest.Round(10*time.Millisecond),
		s.first, s.last, verdict)
}

// trivialBaseline is the same load against a net/http handler that does nothing but answer like ingest:
// what this machine, with loadgen on it, serves at most. It returns the handler's answers per second.
func trivialBaseline(ctx context.Context, cfg loadgenConfig) (*loadgenResult, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("loadgen: trivial handler: %w", err)
	}
	srv := &http.Server{ReadHeaderTimeout: 5 * time.Second, Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"status":"queued","event_id":"00000000-0000-7000-8000-000000000000"}`)
	})}
	go func() { _ = srv.Serve(ln) }()
	defer srv.Close()
	cfg.URL = "http://" + ln.Addr().String() + "/hooks/trivial"
	cfg.Rate = 0
	return runLoadgen(ctx, cfg)
}

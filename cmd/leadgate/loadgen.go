package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"sync"
	"time"

	"github.com/leadgate/leadgate/ingest/signature"
)

// loadgenConfig is what `leadgate loadgen` was asked to do.
type loadgenConfig struct {
	URL         string
	Secret      string
	Kind        string
	Rate        float64 // deliveries per second; 0 = as fast as the workers go
	Duration    time.Duration
	Concurrency int
	DupRatio    float64
	Timeout     time.Duration
	// Baseline also drives a trivial net/http handler in this process with the same load, for the ratio.
	Baseline bool
	// WatchDB is leadgate's database URL: the inbox is read (never written) to see apply keep up.
	WatchDB string
	// FindSustained steps the rate up until apply falls behind (needs WatchDB).
	FindSustained bool
	// WatchDrain sends nothing: it reports how fast apply drains the inbox's backlog (needs WatchDB).
	WatchDrain bool
	Sustain    sustainConfig
}

// loadgenKinds are the kinds loadgen can drive: each maps CONTRACT.md's
// generic payload, which is what loadgen sends.
var loadgenKinds = []string{signature.KindStandardWebhooks, signature.KindHMAC, signature.KindToken}

func parseLoadgen(args []string, stderr io.Writer) (loadgenConfig, error) {
	fs := flag.NewFlagSet("loadgen", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var c loadgenConfig
	fs.StringVar(&c.URL, "url", "", "the ingest URL to post to (http(s)://host/hooks/<token>); the only URL loadgen calls")
	fs.StringVar(&c.Secret, "secret", "", "the source's signing secret (as shown when the source was created)")
	fs.StringVar(&c.Kind, "kind", signature.KindStandardWebhooks, "source kind: standard-webhooks, hmac or token")
	fs.Float64Var(&c.Rate, "rate", 0, "deliveries per second; 0 sends as fast as the workers go")
	fs.DurationVar(&c.Duration, "duration", 10*time.Second, "how long to send; loadgen stops by itself")
	fs.IntVar(&c.Concurrency, "concurrency", 64, "deliveries in flight at most")
	fs.Float64Var(&c.DupRatio, "dup-ratio", 0, "share of deliveries (0-1) that repeat an earlier one, like a retrying sender")
	fs.DurationVar(&c.Timeout, "timeout", 10*time.Second, "per-request timeout")
	fs.BoolVar(&c.Baseline, "baseline", false, "also drive a trivial net/http handler in this process with the same load and print the ratio")
	fs.StringVar(&c.WatchDB, "watch-db", "", "leadgate's database URL, read to see how far apply is behind (needed by --find-sustained and --watch-drain)")
	fs.BoolVar(&c.FindSustained, "find-sustained", false, "find the highest rate at which every event is applied within --max-wait and the backlog stays flat")
	fs.BoolVar(&c.WatchDrain, "watch-drain", false, "send nothing; print how many events apply resolves per 10 s until the inbox is empty")
	fs.Float64Var(&c.Sustain.StartRate, "start-rate", 250, "--find-sustained: the first step's rate")
	fs.Float64Var(&c.Sustain.Factor, "step-factor", 1.25, "--find-sustained: each step's rate is the last one's times this")
	fs.DurationVar(&c.Sustain.StepDuration, "step-duration", 20*time.Second, "--find-sustained: how long each step sends")
	fs.DurationVar(&c.Sustain.Hold, "hold", 60*time.Second, "--find-sustained: how long the rate found must hold")
	fs.DurationVar(&c.Sustain.MaxWait, "max-wait", 5*time.Second, "--find-sustained: every event must be applied within this")
	if err := fs.Parse(args); err != nil {
		return c, err
	}
	if fs.NArg() > 0 {
		return c, fmt.Errorf("loadgen: unexpected argument %q", fs.Arg(0))
	}
	return c, c.validate()
}

func (c loadgenConfig) validate() error {
	var errs []error
	if (c.FindSustained || c.WatchDrain) && c.WatchDB == "" {
		errs = append(errs, errors.New("--find-sustained and --watch-drain need --watch-db"))
	}
	if c.FindSustained && (c.Sustain.StartRate <= 0 || c.Sustain.Factor <= 1 || c.Sustain.StepDuration <= 0 || c.Sustain.Hold <= 0 || c.Sustain.MaxWait <= 0) {
		errs = append(errs, errors.New("--start-rate, --step-duration, --hold and --max-wait must be positive and --step-factor above 1"))
	}
	if c.WatchDrain {
		return errors.Join(errs...)
	}
	u, err := url.Parse(c.URL)
	switch {
	case c.URL == "":
		errs = append(errs, errors.New("--url is required"))
	case err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "":
		errs = append(errs, fmt.Errorf("--url %q must be an http(s) URL", c.URL))
	}
	known := false
	for _, k := range loadgenKinds {
		known = known || k == c.Kind
	}
	if !known {
		errs = append(errs, fmt.Errorf("--kind %q: loadgen drives %v", c.Kind, loadgenKinds))
	}
	if c.Secret == "" && c.Kind != signature.KindToken {
		errs = append(errs, fmt.Errorf("--secret is required for kind %s", c.Kind))
	}
	if c.Rate < 0 {
		errs = append(errs, errors.New("--rate must not be negative"))
	}
	if c.Duration <= 0 || c.Duration > 24*time.Hour {
		errs = append(errs, errors.New("--duration must be between 0 and 24h"))
	}
	if c.Concurrency < 1 || c.Concurrency > 10000 {
		errs = append(errs, errors.New("--concurrency must be from 1 to 10000"))
	}
	if c.DupRatio < 0 || c.DupRatio >= 1 {
		errs = append(errs, errors.New("--dup-ratio must be from 0 to below 1"))
	}
	if c.Timeout <= 0 {
		errs = append(errs, errors.New("--timeout must be positive"))
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("loadgen: %w", err)
	}
	return nil
}

// cmdLoadgen drives signed webhook traffic at one ingest URL for a bounded
// time and prints what the senders saw: answers by status, accepted/s and
// latency percentiles.
func cmdLoadgen(ctx context.Context, args []string, stdout, stderr io.Writer, _ func(string) string) error {
	cfg, err := parseLoadgen(args, stderr)
	if err != nil {
		return err
	}
	var watch *inboxWatch
	if cfg.WatchDB != "" {
		if watch, err = openInboxWatch(ctx, cfg.WatchDB); err != nil {
			return err
		}
		defer watch.Close()
	}
	if cfg.WatchDrain {
		return watch.watchDrain(ctx, stdout, 10*time.Second, 100*time.Millisecond)
	}
	var trivial *loadgenResult
	if cfg.Baseline {
		if trivial, err = trivialBaseline(ctx, cfg); err != nil {
			return err
		}
		fmt.Fprintf(stdout, "trivial net/http handler (same load, max rate, %s): %.1f answers/s, p99 %s\n",
			cfg.Duration, trivial.perSecond(trivial.Accepted), ms(trivial.P99))
	}
	fmt.Fprintf(stdout, "loadgen: %s deliveries to %s for %s, rate %s, concurrency %d, dup-ratio %.2f\n",
		cfg.Kind, cfg.URL, cfg.Duration, rateLabel(cfg.Rate), cfg.Concurrency, cfg.DupRatio)
	if cfg.FindSustained {
		return findSustained(ctx, cfg, cfg.Sustain, watch, stdout)
	}
	res, err := runLoadgen(ctx, cfg)
	if err != nil {
		return err
	}
	res.print(stdout)
	if trivial != nil && trivial.Accepted > 0 {
		fmt.Fprintf(stdout, "ratio       %.2f of the trivial handler's answers/s\n", res.perSecond(res.Accepted)/trivial.perSecond(trivial.Accepted))
	}
	return nil
}

func rateLabel(rate float64) string {
	if rate == 0 {
		return "max"
	}
	return fmt.Sprintf("%g/s", rate)
}

// runLoadgen sends until cfg.Duration has passed (or ctx ends), then waits
// for the requests in flight.
func runLoadgen(ctx context.Context, cfg loadgenConfig) (*loadgenResult, error) {
	traffic, err := newTraffic(cfg)
	if err != nil {
		return nil, err
	}
	client := &http.Client{
		Timeout: cfg.Timeout,
		Transport: &http.Transport{
			MaxIdleConns:        cfg.Concurrency,
			MaxIdleConnsPerHost: cfg.Concurrency,
			MaxConnsPerHost:     cfg.Concurrency,
			IdleConnTimeout:     30 * time.Second,
		},
		// Never follow a redirect: loadgen talks to the given URL only.
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
	defer client.CloseIdleConnections()

	runCtx, cancel := context.WithTimeout(ctx, cfg.Duration)
	defer cancel()
	jobs := pace(runCtx, cfg.Rate)
	recs := make([]*recorder, cfg.Concurrency)
	start := time.Now()
	var wg sync.WaitGroup
	for i := range recs {
		recs[i] = newRecorder()
		wg.Go(func() {
			for range jobs {
				sendOne(ctx, client, traffic.next(), recs[i])
			}
		})
	}
	wg.Wait()
	return summarize(recs, time.Since(start), cfg), nil
}

// pace yields one token per delivery: at rate per second on a steady
// schedule, or as fast as they are taken when rate is 0. It closes the
// channel when ctx ends.
func pace(ctx context.Context, rate float64) <-chan struct{} {
	out := make(chan struct{})
	go func() {
		defer close(out)
		start := time.Now()
		sent := 0
		// The schedule ends at ctx's deadline: a pacer held up past it (a loaded machine) must not make
		// up the slots after it, nor win a select against ctx.Done with one send too many.
		last := -1
		if d, ok := ctx.Deadline(); ok && rate > 0 {
			last = int(d.Sub(start).Seconds() * rate)
		}
		tick := time.NewTicker(time.Millisecond)
		defer tick.Stop()
		for {
			due := 1
			if rate > 0 {
				due = int(time.Since(start).Seconds()*rate) - sent
				if last >= 0 {
					due = min(due, last-sent)
				}
				if due <= 0 {
					select {
					case <-ctx.Done():
						return
					case <-tick.C:
					}
					continue
				}
			}
			for range due {
				if ctx.Err() != nil {
					return
				}
				select {
				case <-ctx.Done():
					return
				case out <- struct{}{}:
					sent++
				}
			}
		}
	}()
	return out
}

// sendOne posts one delivery and records the answer. Requests in flight when
// the duration ends are finished (ctx is the caller's, not the run's).
func sendOne(ctx context.Context, client *http.Client, d outgoing, rec *recorder) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, d.url, bytes.NewReader(d.body))
	if err != nil {
		rec.transportError(err)
		return
	}
	req.Header = d.header
	began := time.Now()
	resp, err := client.Do(req)
	if err != nil {
		rec.transportError(err)
		return
	}
	status := answerStatus(resp)
	rec.answer(resp.StatusCode, status, time.Since(began), d.dup)
}

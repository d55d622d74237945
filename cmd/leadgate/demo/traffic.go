package demo

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/leadgate/leadgate/ingest/signature"
)

// Traffic streams a realistic mix into the demo workspace: new leads from
// three channels, journeys that advance (email reply, qualifying call,
// purchase), sender retries (duplicates), late and out-of-order deliveries,
// true regressions (dead letters), junk (rejected), a CRM automation echoing
// leadgate's own writes (the loop guard), a runaway contact (the circuit
// breaker) and a quiet period on the voice agent (the silence alarm).
type Traffic struct {
	Env    Env
	Graph  *Graph
	Client *http.Client
	Log    *slog.Logger
	// Every is the pause between deliveries (default 500 ms).
	Every time.Duration
	// QuietAfter and QuietFor silence the voice agent for a while (defaults 3 and 6 minutes).
	QuietAfter, QuietFor time.Duration
	Seed                 uint64

	sent, failed atomic.Int64
	failures     sync.Map // what a failed delivery got (status code or error) → *atomic.Int64
	people       []*person
	last         *delivery
	rng          *rand.Rand
	start        time.Time
}

// Sent and Failed count deliveries so far; one cut off by the end of the run counts in neither.
func (t *Traffic) Sent() int64   { return t.sent.Load() }
func (t *Traffic) Failed() int64 { return t.failed.Load() }

// Failures counts the failed deliveries by what they got back: "503", "connection refused", ...
func (t *Traffic) Failures() map[string]int64 {
	out := map[string]int64{}
	t.failures.Range(func(k, v any) bool {
		out[k.(string)] = v.(*atomic.Int64).Load()
		return true
	})
	return out
}

func (t *Traffic) fail(what string) {
	t.failed.Add(1)
	n, _ := t.failures.LoadOrStore(what, new(atomic.Int64))
	n.(*atomic.Int64).Add(1)
}

// Run sends until ctx ends.
func (t *Traffic) Run(ctx context.Context) error {
	t.rng = rand.New(rand.NewPCG(t.Seed, t.Seed^0x9e3779b97f4a7c15))
	t.start = time.Now()
	every := t.Every
	if every <= 0 {
		every = 500 * time.Millisecond
	}
	tick := time.NewTicker(every)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-tick.C:
			t.step(ctx)
		}
	}
}

func (t *Traffic) quiet(now time.Time) bool {
	after, dur := t.QuietAfter, t.QuietFor
	if after == 0 {
		after = 3 * time.Minute
	}
	if dur == 0 {
		dur = 6 * time.Minute
	}
	el := now.Sub(t.start)
	return el >= after && el < after+dur
}

// step sends one delivery chosen by weight.
func (t *Traffic) step(ctx context.Context) {
	now := time.Now()
	roll := t.rng.IntN(100)
	switch {
	case roll < 30 || len(t.people) < 5:
		t.newLead(ctx, now)
	case roll < 70:
		t.advance(ctx, now)
	case roll < 78 && t.last != nil:
		t.send(ctx, *t.last) // the sender timed out and retries the same delivery
	case roll < 83:
		t.late(ctx, now)
	case roll < 86:
		t.regression(ctx, now)
	case roll < 88:
		t.send(ctx, junkDelivery(t.rng, now))
	case roll < 98:
		t.echo(ctx, now)
	default:
		t.runaway(ctx, now)
	}
}

func (t *Traffic) pick() *person { return t.people[t.rng.IntN(len(t.people))] }

func (t *Traffic) newLead(ctx context.Context, now time.Time) {
	p := newPerson(t.rng, len(t.people)+int(now.Unix()%100000)*1000)
	p.step = 1
	t.people = append(t.people, p)
	switch t.rng.IntN(3) {
	case 0:
		t.send(ctx, formDelivery(p, t.rng, "form_submitted", "", now))
	case 1:
		t.send(ctx, typeformDelivery(p, t.rng, now))
	default:
		p.leadgenID = strconv.FormatUint(t.rng.Uint64()%1e15, 10)
		t.Graph.add(p)
		t.send(ctx, facebookDelivery(p, now))
	}
}

// advance moves a lead one step along its journey.
func (t *Traffic) advance(ctx context.Context, now time.Time) {
	p := t.pick()
	switch p.step {
	case 1:
		t.send(ctx, emailReplyDelivery(p, t.rng, now))
	case 2:
		if t.quiet(now) {
			return // the voice agent is down: the silence alarm should notice
		}
		t.send(ctx, voiceDelivery(p, t.rng, now))
	case 3:
		if t.rng.IntN(4) == 0 {
			t.send(ctx, formDelivery(p, t.rng, "lost", "", now))
		} else {
			t.send(ctx, formDelivery(p, t.rng, "purchase", "", now))
		}
	default:
		return
	}
	p.step++
}

// late sends an event that happened before the lead's current stage: fields
// only, the stage is kept.
func (t *Traffic) late(ctx context.Context, now time.Time) {
	p := t.pick()
	if p.step < 3 {
		return
	}
	t.send(ctx, formDelivery(p, t.rng, "form_submitted", "Engaged", now.Add(-2*time.Hour)))
}

// regression proposes a lower stage with a newer timestamp: a dead letter.
func (t *Traffic) regression(ctx context.Context, now time.Time) {
	p := t.pick()
	if p.step < 3 {
		return
	}
	t.send(ctx, formDelivery(p, t.rng, "reply_received", "Engaged", now))
}

// echo is the CRM's automation reporting leadgate's own write back.
func (t *Traffic) echo(ctx context.Context, now time.Time) {
	p := t.pick()
	stage := []string{"", "Discovered", "Engaged", "SQL", "Closed"}[min(p.step, 4)]
	t.send(ctx, crmEchoDelivery(p, stage, now))
}

// runaway fires a burst of genuine updates at one contact, as a misbehaving
// integration would: the circuit breaker holds the excess.
func (t *Traffic) runaway(ctx context.Context, now time.Time) {
	if len(t.people) == 0 {
		return
	}
	p := t.people[0]
	for i := range 25 {
		d := formDelivery(p, t.rng, "profile_updated", "", now.Add(time.Duration(i)*time.Millisecond))
		d.body = bytes.Replace(d.body, []byte(`"budget":"`), []byte(fmt.Sprintf(`"budget":"v%d `, i)), 1)
		t.send(ctx, d)
	}
}

// senderRetries are the waits before a retry of a delivery answered 5xx or not answered, as a
// provider's sender would retry (shortened for a demo).
var senderRetries = []time.Duration{200 * time.Millisecond, 500 * time.Millisecond}

// send signs and posts one delivery, retrying a 5xx or a transport error like a real sender.
func (t *Traffic) send(ctx context.Context, d delivery) {
	src, ok := t.Env.Sources[d.role]
	if !ok {
		return
	}
	var got string
	for attempt := 0; ; attempt++ {
		status, err := t.post(ctx, src, d)
		if err != nil && ctx.Err() != nil {
			return // cut off by the end of the run: not a delivery that failed
		}
		if err == nil && status < 500 {
			got = strconv.Itoa(status)
			break
		}
		if got = strconv.Itoa(status); err != nil {
			got = err.Error()
		}
		if attempt == len(senderRetries) {
			break
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(senderRetries[attempt]):
		}
	}
	t.sent.Add(1)
	if got != "200" {
		t.fail(got)
		t.Log.Warn("demo: delivery failed", "source", src.Name, "got", got)
	}
	if d.role != "crm" {
		t.last = &d
	}
}

// post signs and sends one attempt, returning the answer's status.
func (t *Traffic) post(ctx context.Context, src Source, d delivery) (int, error) {
	req := signature.Request{Method: http.MethodPost, URL: src.URL, Header: http.Header{"Content-Type": {d.contentType}}, Body: d.body}
	if err := signature.Sign(src.Kind, signature.SignConfig{Config: src.Config, Secret: src.Secret, DeliveryID: d.deliveryID}, &req, time.Now()); err != nil {
		return 0, fmt.Errorf("sign for %s: %w", src.Name, err)
	}
	hr, err := http.NewRequestWithContext(ctx, http.MethodPost, req.URL, bytes.NewReader(req.Body))
	if err != nil {
		return 0, err
	}
	hr.Header = req.Header
	resp, err := t.Client.Do(hr)
	if err != nil {
		return 0, err
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode, nil
}

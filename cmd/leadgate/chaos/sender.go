package chaos

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"sync"
	"time"

	"github.com/leadgate/leadgate/ingest/signature"
)

// Sender behaviour, like the lead sources that give up on a slow receiver and retry.
const (
	senderTimeout = 5 * time.Second
)

// senderRetries are the waits before the second and third attempts.
var senderRetries = []time.Duration{2 * time.Second, 4 * time.Second}

// Target is where one channel's webhooks go and the secret that signs them.
type Target struct {
	URL    string
	Secret string
}

// attempt is one HTTP request of a delivery.
type attempt struct {
	status  int    // 0: transport error or timeout
	answer  string // the "status" of a 200 body: queued, duplicate, rejected
	eventID string
	latency time.Duration
	began   time.Time
}

// delivery is one sending of an event (the original or its in-flight duplicate) with its retries.
type delivery struct {
	event    int
	attempts []attempt
	acked    bool
	ackedAt  time.Time
}

// Traffic is what the senders saw.
type Traffic struct {
	Deliveries []delivery
	Base       time.Time // the scenario's time zero (SendAt and fault times count from it)
	Started    time.Time
	Finished   time.Time // when the last delivery finished (acked or given up)
}

// body is the event's payload in CONTRACT.md's generic shape, with occurred_at at base+Occurred.
func (sc *Scenario) body(e Event, base time.Time) []byte {
	l := sc.Leads[e.Lead]
	ch := Channels[e.Channel]
	m := map[string]any{
		"event_type":  ch.EventType,
		"occurred_at": base.Add(e.Occurred).UTC().Format("2006-01-02T15:04:05.000Z07:00"),
		"email":       e.Email,
		"phone":       e.Phone,
		"first_name":  l.First,
		"last_name":   l.Last,
		"company":     l.Company,
		"fields":      map[string]string{"last_channel": ch.Name},
	}
	if e.Channel == 0 {
		m["attribution"] = map[string]string{"utm_source": "chaos", "utm_campaign": "run-" + sc.RunID}
	}
	b, _ := json.Marshal(m) // a map of strings always encodes
	return b
}

// send delivers every event of sc at its SendAt (from base), each with a 5 s timeout and retries after
// 2 s and 4 s, the duplicates concurrently with their original. It returns when every delivery has been
// acknowledged or given up. targets is indexed like Channels.
func send(ctx context.Context, sc *Scenario, targets []Target, base time.Time) *Traffic {
	client := &http.Client{
		Transport: &http.Transport{MaxIdleConns: 1024, MaxIdleConnsPerHost: 1024, IdleConnTimeout: 30 * time.Second},
		CheckRedirect: func(*http.Request, []*http.Request) error {
			return http.ErrUseLastResponse
		},
	}
	defer client.CloseIdleConnections()
	var plan []delivery
	var due []time.Duration
	for _, e := range sc.Events {
		plan = append(plan, delivery{event: e.Index})
		due = append(due, e.SendAt)
		if e.Duplicate {
			plan = append(plan, delivery{event: e.Index})
			due = append(due, e.SendAt+e.DupSkew)
		}
	}
	t := &Traffic{Deliveries: plan, Base: base, Started: time.Now()}
	var wg sync.WaitGroup
	for i := range plan {
		if wait := time.Until(base.Add(due[i])); wait > 0 {
			select {
			case <-ctx.Done():
			case <-time.After(wait):
			}
		}
		if ctx.Err() != nil {
			break
		}
		d := &plan[i]
		e := sc.Events[d.event]
		wg.Go(func() { deliver(ctx, client, targets[e.Channel], e.ID, sc.body(e, base), d) })
	}
	wg.Wait()
	t.Finished = time.Now()
	return t
}

// deliver sends one delivery until it is acknowledged with a 200 or the retries run out.
func deliver(ctx context.Context, client *http.Client, target Target, id string, body []byte, d *delivery) {
	for n := 0; n <= len(senderRetries); n++ {
		if n > 0 {
			select {
			case <-ctx.Done():
				return
			case <-time.After(senderRetries[n-1]):
			}
		}
		a := post(ctx, client, target, id, body)
		d.attempts = append(d.attempts, a)
		if a.status == http.StatusOK {
			d.acked, d.ackedAt = true, time.Now()
			return
		}
	}
}

// post signs (afresh, like a sender's retry) and sends one attempt.
func post(ctx context.Context, client *http.Client, target Target, id string, body []byte) attempt {
	req := signature.Request{Method: http.MethodPost, URL: target.URL,
		Header: http.Header{"Content-Type": {"application/json"}, "User-Agent": {"leadgate-chaos"}}, Body: body}
	if err := signature.Sign(signature.KindStandardWebhooks, signature.SignConfig{Secret: target.Secret, DeliveryID: id}, &req, time.Now()); err != nil {
		return attempt{}
	}
	ctx, cancel := context.WithTimeout(ctx, senderTimeout)
	defer cancel()
	hr, err := http.NewRequestWithContext(ctx, http.MethodPost, req.URL, bytes.NewReader(req.Body))
	if err != nil {
		return attempt{}
	}
	hr.Header = req.Header
	began := time.Now()
	resp, err := client.Do(hr)
	if err != nil {
		return attempt{latency: time.Since(began), began: began}
	}
	defer resp.Body.Close()
	var out struct {
		Status  string `json:"status"`
		EventID string `json:"event_id"`
		Events  []struct {
			EventID string `json:"event_id"`
		} `json:"events"`
	}
	raw, err := io.ReadAll(io.LimitReader(resp.Body, 1<<16))
	a := attempt{status: resp.StatusCode, latency: time.Since(began), began: began}
	if err != nil {
		a.status = 0 // the answer was cut: the sender cannot know it was accepted
		return a
	}
	if resp.StatusCode == http.StatusOK && json.Unmarshal(raw, &out) == nil {
		a.answer, a.eventID = out.Status, out.EventID
		if a.eventID == "" && len(out.Events) > 0 {
			a.eventID = out.Events[0].EventID
		}
	}
	return a
}

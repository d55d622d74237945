package loop_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/redis/go-redis/v9"

	"github.com/leadgate/leadgate/guards/alert"
	"github.com/leadgate/leadgate/guards/loop"
	"github.com/leadgate/leadgate/internal/secretbox"
	"github.com/leadgate/leadgate/internal/testkit"
	"github.com/leadgate/leadgate/models"
	"github.com/leadgate/leadgate/models/modelstest"
)

// fakeCRM keeps contacts and, like a CRM with a webhook subscription and
// one careless workflow, answers every update with webhooks: the change
// itself (carrying the loop-breaker flag leadgate wrote) and, when the
// workflow is on, the workflow's own follow-up edit, which rewrites the flag.
type fakeCRM struct {
	mu       sync.Mutex
	contacts map[string]map[string]string
	writes   map[string]int
	queue    []crmWebhook
	workflow bool
	now      func() time.Time
}

type crmWebhook struct {
	Email        string            `json:"email"`
	ChangeSource string            `json:"change_source"`
	Properties   map[string]string `json:"properties"`
}

func (c *fakeCRM) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var props map[string]string
	if r.Method != http.MethodPut || json.NewDecoder(r.Body).Decode(&props) != nil {
		w.WriteHeader(http.StatusBadRequest)
		return
	}
	email := r.URL.Path[len("/contacts/"):]
	c.mu.Lock()
	defer c.mu.Unlock()
	cur := c.contacts[email]
	if cur == nil {
		cur = map[string]string{}
		c.contacts[email] = cur
	}
	for k, v := range props {
		cur[k] = v
	}
	c.writes[email]++
	c.queue = append(c.queue, crmWebhook{Email: email, ChangeSource: "INTEGRATION", Properties: clone(cur)})
	if c.workflow {
		n, _ := strconv.Atoi(cur["touches"])
		cur["touches"] = strconv.Itoa(n + 1)
		cur["last_automation_source"] = "crm_workflow"
		cur["sync_timestamp"] = c.now().Format(time.RFC3339)
		c.queue = append(c.queue, crmWebhook{Email: email, ChangeSource: "AUTOMATION_PLATFORM", Properties: clone(cur)})
	}
	w.WriteHeader(http.StatusOK)
}

// repEdit is a sales rep changing a field in the CRM's UI.
func (c *fakeCRM) repEdit(email, key, value string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.contacts[email][key] = value
	c.queue = append(c.queue, crmWebhook{Email: email, ChangeSource: "CRM_UI", Properties: clone(c.contacts[email])})
}

func (c *fakeCRM) next() (crmWebhook, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.queue) == 0 {
		return crmWebhook{}, false
	}
	h := c.queue[0]
	c.queue = c.queue[1:]
	return h, true
}

func clone(m map[string]string) map[string]string {
	out := make(map[string]string, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

// driver plays leadgate's ingest + apply + sync around the loop guard: it
// receives CRM webhooks, asks IsEcho and the breaker, applies what passes
// to its own contact state and writes it to the CRM with the loop flag.
type driver struct {
	t          *testing.T
	store      *models.Store
	ws         int64
	writes     *loop.Writes
	breaker    *loop.Breaker
	settings   models.LoopSettings
	crmURL     string
	now        func() time.Time
	state      map[string]map[string]string // leadgate's contacts by email
	ids        map[string]string
	suppressed int
	held       int
}

// apply applies proposed values to a contact and syncs it, if the breaker allows.
func (d *driver) apply(ctx context.Context, email string, values map[string]string) {
	if d.ids[email] == "" {
		d.ids[email] = uuid.NewString()
		d.state[email] = map[string]string{}
	}
	dec, err := d.breaker.Allow(ctx, d.ws, d.ids[email], d.settings)
	if err != nil {
		d.t.Fatal(err)
	}
	if !dec.Allowed {
		d.held++
		d.quarantine(ctx, email, dec.Reason)
		return
	}
	for k, v := range values {
		d.state[email][k] = v
	}
	d.sync(ctx, email)
}

// quarantine does what the lifecycle engine does for a held event: a
// loop_suspected dead letter and its usual dead-letter alert row.
func (d *driver) quarantine(ctx context.Context, email, reason string) {
	cid, ev := d.ids[email], uuid.NewString()
	id, err := d.store.DeadLetterAdd(ctx, models.DeadLetter{WorkspaceID: d.ws, Kind: loop.KindLoopSuspected, Reason: reason, EventID: &ev, ContactID: &cid})
	if err != nil {
		d.t.Fatal(err)
	}
	p, _ := json.Marshal(map[string]any{"type": "dead_letter", "dead_letter_id": id, "kind": loop.KindLoopSuspected, "reason": reason})
	if _, err := d.store.OutboxAdd(ctx, models.OutboxRow{WorkspaceID: d.ws, ContactID: &cid, Kind: models.OutboxAlert,
		StableID: fmt.Sprintf("alert:dead_letter:%d", id), Action: "alert", Payload: p}); err != nil {
		d.t.Fatal(err)
	}
}

// sync writes the desired state with the loop-breaker flag and remembers it.
func (d *driver) sync(ctx context.Context, email string) {
	props := clone(d.state[email])
	props["last_automation_source"] = "leadgate"
	props["sync_timestamp"] = d.now().Format(time.RFC3339)
	body, _ := json.Marshal(props)
	req, _ := http.NewRequestWithContext(ctx, http.MethodPut, d.crmURL+"/contacts/"+email, bytes.NewReader(body))
	resp, err := http.DefaultClient.Do(req)
	if err != nil || resp.StatusCode != 200 {
		d.t.Fatalf("crm write: %v %v", resp, err)
	}
	resp.Body.Close()
	if err := d.writes.Remember(ctx, d.ws, email, d.state[email], d.settings.WithDefaults().EchoWindow()); err != nil {
		d.t.Fatal(err)
	}
}

// receive handles one CRM webhook the way ingest + apply would.
func (d *driver) receive(ctx context.Context, h crmWebhook) {
	fields := map[string]any{"changeSource": h.ChangeSource}
	values := map[string]string{}
	for k, v := range h.Properties {
		fields[k] = v
		if k != "last_automation_source" && k != "sync_timestamp" {
			values[k] = v
		}
	}
	recent, err := d.writes.Recall(ctx, d.ws, h.Email)
	if err != nil {
		d.t.Fatal(err)
	}
	if v := loop.IsEcho(loop.Change{SourceKind: "gohighlevel", Fields: fields, Values: values}, d.settings, recent, d.now()); v.Echo {
		d.suppressed++
		return
	}
	d.apply(ctx, h.Email, values)
}

func newRedis(t *testing.T) *redis.Client {
	opt, err := redis.ParseURL(testkit.RedisDB(t))
	if err != nil {
		t.Fatal(err)
	}
	c := redis.NewClient(opt)
	t.Cleanup(func() { c.Close() })
	return c
}

// TestPingPong: leadgate and a fake CRM whose webhooks echo every update
// (and whose workflow edits the record again on every update). Echoes are
// suppressed; the workflow's loop is held after at most 3 CRM writes for
// the contact; exactly one alert goes out; a rep's genuine stage change on
// another contact is applied.
func TestPingPong(t *testing.T) {
	ctx := context.Background()
	store, rdb := modelstest.Store(t), newRedis(t)
	clock := time.Date(2026, 5, 4, 10, 0, 0, 0, time.UTC)
	now := func() time.Time { return clock }
	crm := &fakeCRM{contacts: map[string]map[string]string{}, writes: map[string]int{}, workflow: true, now: now}
	crmSrv := httptest.NewServer(crm)
	defer crmSrv.Close()
	ws, err := store.WorkspaceBySlug(ctx, "default")
	if err != nil {
		t.Fatal(err)
	}
	d := &driver{t: t, store: store, ws: ws.ID, writes: &loop.Writes{Redis: rdb}, breaker: &loop.Breaker{Redis: rdb, Store: store, Now: now},
		settings: models.LoopSettings{BreakerMax: 3, BreakerWindowSeconds: 600}, crmURL: crmSrv.URL, now: now,
		state: map[string]map[string]string{}, ids: map[string]string{}}

	// A form submission creates Jane at Engaged; then the CRM's webhooks play out.
	d.apply(ctx, "jane@example.com", map[string]string{"stage": "Engaged"})
	for i := 0; i < 200; i++ {
		h, ok := crm.next()
		if !ok {
			break
		}
		clock = clock.Add(2 * time.Second)
		d.receive(ctx, h)
	}
	t.Logf("looping contact: %d CRM writes, %d echoes suppressed, %d events held", crm.writes["jane@example.com"], d.suppressed, d.held)
	if n := crm.writes["jane@example.com"]; n > 3 || n < 1 {
		t.Fatalf("%d CRM writes for the looping contact, want at most 3", n)
	}
	if d.suppressed < 3 || d.held != 1 {
		t.Fatalf("suppressed %d echoes and held %d events; want every echo suppressed and the loop held once", d.suppressed, d.held)
	}
	b, err := store.BreakerGet(ctx, ws.ID, d.ids["jane@example.com"])
	if err != nil || b.Status != models.BreakerTripped {
		t.Fatalf("breaker %+v (%v), want tripped", b, err)
	}

	// A rep moves Bob (no loop, workflow off) to Closed in the CRM: applied.
	crm.workflow = false
	d.apply(ctx, "bob@example.com", map[string]string{"stage": "SQL"})
	for h, ok := crm.next(); ok; h, ok = crm.next() {
		d.receive(ctx, h) // the echo of leadgate's write
	}
	clock = clock.Add(time.Minute)
	crm.repEdit("bob@example.com", "stage", "Closed")
	h, _ := crm.next()
	before := d.suppressed
	d.receive(ctx, h)
	if d.suppressed != before || d.state["bob@example.com"]["stage"] != "Closed" {
		t.Fatalf("the rep's stage change was not applied: suppressed %d→%d, stage %q", before, d.suppressed, d.state["bob@example.com"]["stage"])
	}
	for h, ok := crm.next(); ok; h, ok = crm.next() {
		d.receive(ctx, h) // the echo of syncing the correction back
	}
	if crm.writes["bob@example.com"] != 2 || crm.contacts["bob@example.com"]["stage"] != "Closed" {
		t.Fatalf("bob: %d writes, CRM stage %q; want leadgate and the CRM to agree on Closed", crm.writes["bob@example.com"], crm.contacts["bob@example.com"]["stage"])
	}

	// Deliver the alerts: exactly one reaches the channel.
	var mu sync.Mutex
	var received []alert.WebhookBody
	hook := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var b alert.WebhookBody
		_ = json.NewDecoder(r.Body).Decode(&b)
		mu.Lock()
		received = append(received, b)
		mu.Unlock()
	}))
	defer hook.Close()
	box, _ := secretbox.New("test")
	c := models.AlertChannel{WorkspaceID: ws.ID, Enabled: true}
	if err := alert.Seal(alert.Channel{Kind: alert.KindWebhook, Name: "ops", Config: alert.Config{URL: hook.URL}}, box, &c); err != nil {
		t.Fatal(err)
	}
	if err := store.AlertChannelCreate(ctx, &c); err != nil {
		t.Fatal(err)
	}
	tlsCfg := hook.Client().Transport.(*http.Transport).TLSClientConfig
	relay := &alert.Relay{Store: store, Box: box, Sender: &alert.Sender{Guard: &alert.Guard{AllowedHosts: []string{"127.0.0.1"}, TLS: tlsCfg}},
		Now: func() time.Time { return time.Now().Add(time.Minute) }}
	for range 2 {
		if _, err := relay.RunOnce(ctx, 50); err != nil {
			t.Fatal(err)
		}
	}
	if len(received) != 1 || received[0].Type != "loop_suspected" {
		t.Fatalf("alerts delivered: %+v; want exactly one loop_suspected alert", received)
	}
}

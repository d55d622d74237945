package alert_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/leadgate/leadgate/guards/alert"
	"github.com/leadgate/leadgate/internal/secretbox"
	"github.com/leadgate/leadgate/models"
	"github.com/leadgate/leadgate/models/modelstest"
)

// hookFake is a generic webhook receiver whose answers the test scripts per path.
type hookFake struct {
	mu      sync.Mutex
	hits    map[string]int
	answers map[string][]int // path -> statuses to answer in turn (then 200)
	bodies  []alert.WebhookBody
}

func (f *hookFake) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.hits[r.URL.Path]++
	if q := f.answers[r.URL.Path]; len(q) > 0 {
		f.answers[r.URL.Path] = q[1:]
		if q[0] >= 300 {
			w.WriteHeader(q[0])
			return
		}
	}
	var b alert.WebhookBody
	_ = json.NewDecoder(r.Body).Decode(&b)
	f.bodies = append(f.bodies, b)
	w.WriteHeader(200)
}

func (f *hookFake) count(path string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.hits[path]
}

func TestRelay(t *testing.T) {
	store := modelstest.Store(t)
	t.Run("DeliversOncePerChannelWithRetries", func(t *testing.T) { testRelayDeliversOncePerChannelWithRetries(t, store) })
	t.Run("DeadLettersWhatCannotBeDelivered", func(t *testing.T) { testRelayDeadLettersWhatCannotBeDelivered(t, store) })
	t.Run("SkipsAndSuppresses", func(t *testing.T) { testRelaySkipsAndSuppresses(t, store) })
}

// slugFor names a subtest's workspace ("relay-skipsandsuppresses").
func slugFor(t *testing.T) string {
	name := strings.ToLower(t.Name())
	name = name[strings.LastIndexByte(name, '/')+1:]
	return "relay-" + name[:min(len(name), 40)]
}

type relayBundle struct {
	store *models.Store
	box   *secretbox.Box
	fake  *hookFake
	srv   *httptest.Server
	relay *alert.Relay
	now   time.Time
	ws    int64
	slug  string
}

// setupRelay gives each subtest its own workspace in the shared database.
func setupRelay(t *testing.T, store *models.Store) *relayBundle {
	t.Helper()
	b := &relayBundle{store: store, fake: &hookFake{hits: map[string]int{}, answers: map[string][]int{}}, now: time.Now().Add(time.Minute)}
	b.srv = httptest.NewTLSServer(b.fake)
	t.Cleanup(b.srv.Close)
	var err error
	if b.box, err = secretbox.New("test-key"); err != nil {
		t.Fatal(err)
	}
	ws, err := b.store.WorkspaceCreate(context.Background(), slugFor(t), t.Name())
	if err != nil {
		t.Fatal(err)
	}
	b.ws = ws.ID
	b.slug = ws.Slug
	b.relay = &alert.Relay{Store: b.store, Box: b.box, Sender: &alert.Sender{Guard: localGuard(b.srv)}, Now: func() time.Time { return b.now }, MaxAttempts: 3}
	return b
}

func (b *relayBundle) channel(t *testing.T, path, minSeverity string) {
	t.Helper()
	c := models.AlertChannel{WorkspaceID: b.ws, Enabled: true}
	if err := alert.Seal(alert.Channel{Kind: alert.KindWebhook, Name: path, MinSeverity: minSeverity, Config: alert.Config{URL: b.srv.URL + path}}, b.box, &c); err != nil {
		t.Fatal(err)
	}
	if err := b.store.AlertChannelCreate(context.Background(), &c); err != nil {
		t.Fatal(err)
	}
}

func (b *relayBundle) enqueue(t *testing.T, stableID string, p any) {
	t.Helper()
	raw, _ := json.Marshal(p)
	if _, err := b.store.OutboxAdd(context.Background(), models.OutboxRow{WorkspaceID: b.ws, Kind: models.OutboxAlert, StableID: stableID, Action: "alert", Payload: raw}); err != nil {
		t.Fatal(err)
	}
}

func (b *relayBundle) run(t *testing.T) {
	t.Helper()
	if _, err := b.relay.RunOnce(context.Background(), 50); err != nil {
		t.Fatalf("relay: %v", err)
	}
}

func (b *relayBundle) row(t *testing.T, stableID string) models.OutboxRow {
	t.Helper()
	rows, err := b.store.AlertRows(context.Background(), b.ws, 100)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range rows {
		if r.StableID == stableID {
			return r
		}
	}
	t.Fatalf("no alert row %s", stableID)
	return models.OutboxRow{}
}

func testRelayDeliversOncePerChannelWithRetries(t *testing.T, store *models.Store) {
	b := setupRelay(t, store)
	b.channel(t, "/ok", "")
	b.channel(t, "/flaky", "")
	b.fake.answers["/flaky"] = []int{503, 503}
	b.enqueue(t, "alert:x", alert.Payload{Type: "health", Severity: "warning", Title: "t", DedupKey: "health:x"})

	b.run(t)
	if r := b.row(t, "alert:x"); r.Status != "pending" || r.Attempts != 1 {
		t.Fatalf("after a failure: status %s attempts %d", r.Status, r.Attempts)
	}
	b.run(t) // not due yet: nothing happens
	if b.fake.count("/flaky") != 1 {
		t.Fatalf("retried before the backoff elapsed")
	}
	b.now = b.now.Add(alert.Backoff(1) + time.Second)
	b.run(t)
	b.now = b.now.Add(alert.Backoff(2) + time.Second)
	b.run(t)
	r := b.row(t, "alert:x")
	if r.Status != models.AlertSent || r.SentAt == nil || r.Attempts != 3 {
		t.Fatalf("status %s attempts %d sent_at %v, want sent after 3 attempts", r.Status, r.Attempts, r.SentAt)
	}
	if ok, flaky := b.fake.count("/ok"), b.fake.count("/flaky"); ok != 1 || flaky != 3 {
		t.Fatalf("hits ok=%d flaky=%d: the healthy channel must get the alert exactly once", ok, flaky)
	}
	b.now = b.now.Add(time.Hour)
	b.run(t)
	if b.fake.count("/ok") != 1 {
		t.Fatal("a sent alert was sent again")
	}
}

func testRelayDeadLettersWhatCannotBeDelivered(t *testing.T, store *models.Store) {
	b := setupRelay(t, store)
	b.channel(t, "/down", "")
	b.fake.answers["/down"] = []int{503, 503, 503, 503}
	b.enqueue(t, "alert:down", alert.Payload{Type: "health", Severity: "critical", Title: "down"})
	for i := 1; i <= 3; i++ {
		b.run(t)
		b.now = b.now.Add(alert.Backoff(i) + time.Second)
	}
	r := b.row(t, "alert:down")
	if r.Status != models.AlertFailed || r.Attempts != 3 {
		t.Fatalf("status %s attempts %d, want failed after 3", r.Status, r.Attempts)
	}
	dls, err := b.store.DeadLetterList(context.Background(), models.DeadLetterFilter{WorkspaceID: b.ws, Kind: alert.KindAlertFailed}, models.Page{Limit: 10})
	if err != nil || len(dls) != 1 || dls[0].OutboxID == nil || *dls[0].OutboxID != r.ID {
		t.Fatalf("dead letters %+v (%v), want one alert_failed for the row", dls, err)
	}

	// A permanent error (404) dead-letters at once.
	b.channel(t, "/gone", "")
	b.fake.answers["/gone"] = []int{404}
	b.enqueue(t, "alert:gone", alert.Payload{Type: "health", Severity: "critical", Title: "gone"})
	// /down recovers: only /gone fails, and permanently.
	b.fake.answers["/down"] = nil
	b.run(t)
	if r := b.row(t, "alert:gone"); r.Status != models.AlertFailed || r.Attempts != 1 {
		t.Fatalf("status %s attempts %d, want failed after 1 attempt", r.Status, r.Attempts)
	}
	if b.fake.count("/gone") != 1 {
		t.Fatalf("a permanent failure was retried")
	}
}

func testRelaySkipsAndSuppresses(t *testing.T, store *models.Store) {
	b := setupRelay(t, store)
	b.enqueue(t, "alert:nochan", alert.Payload{Type: "health", Severity: "info", Title: "quiet"})
	b.run(t)
	if r := b.row(t, "alert:nochan"); r.Status != models.AlertNoChannel {
		t.Fatalf("status %s, want no_channel", r.Status)
	}
	b.channel(t, "/critical-only", alert.SeverityCritical)
	b.enqueue(t, "alert:info", alert.Payload{Type: "health", Severity: "info", Title: "fyi"})
	b.enqueue(t, "alert:crit", alert.Payload{Type: "health", Severity: "critical", Title: "fire"})
	// The lifecycle engine's alert for a loop_suspected dead letter: the breaker already alerted.
	b.enqueue(t, "alert:dead_letter:9", map[string]any{"type": "dead_letter", "dead_letter_id": 9, "kind": "loop_suspected", "reason": "loop"})
	b.enqueue(t, "alert:dead_letter:10", map[string]any{"type": "dead_letter", "dead_letter_id": 10, "kind": "invalid_mapping", "reason": "bad field"})
	b.run(t)
	for id, want := range map[string]string{"alert:info": models.AlertNoChannel, "alert:crit": models.AlertSent,
		"alert:dead_letter:9": models.AlertSuppressed, "alert:dead_letter:10": models.AlertNoChannel} {
		if r := b.row(t, id); r.Status != want {
			t.Errorf("%s: status %s, want %s", id, r.Status, want)
		}
	}
	if n := b.fake.count("/critical-only"); n != 1 {
		t.Fatalf("critical-only channel got %d alerts, want 1", n)
	}
	if got := b.fake.bodies[0]; got.Title != "fire" || got.DedupKey != "leadgate:"+b.slug+":alert:crit" {
		t.Fatalf("delivered %+v", got)
	}
}

package syncer_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/leadgate/leadgate/crm/syncer"
	"github.com/leadgate/leadgate/models"
)

func (e *syncEnv) sideEffect(contactID, stableID, action string) models.OutboxRow {
	e.t.Helper()
	body, _ := json.Marshal(map[string]any{"contact_id": contactID, "cause": "enter:SQL", "action": action, "params": map[string]string{"list": "7"}})
	if _, err := e.store.OutboxAdd(e.ctx, models.OutboxRow{WorkspaceID: e.ws.ID, ContactID: &contactID, Kind: models.OutboxSideEffect,
		StableID: stableID, Action: action, Payload: body}); err != nil {
		e.t.Fatal(err)
	}
	var row models.OutboxRow
	e.store.DB().Raw(`SELECT * FROM outbox WHERE workspace_id = ? AND stable_id = ?`, e.ws.ID, stableID).Scan(&row)
	return row
}

func (e *syncEnv) sideEffectRelay() *syncer.SideEffectRelay {
	return &syncer.SideEffectRelay{Store: e.store, Box: e.box, Connector: e.conn, Log: e.relay.Log, BackoffStart: 20 * time.Millisecond, Attempts: 4,
		Egress: loopbackEgress()}
}

func (e *syncEnv) deliverUntil(r *syncer.SideEffectRelay, id int64, done func(models.OutboxRow) bool) models.OutboxRow {
	e.t.Helper()
	var row models.OutboxRow
	for range 100 {
		if _, err := r.Deliver(e.ctx); err != nil {
			e.t.Fatal(err)
		}
		e.store.DB().Raw(`SELECT * FROM outbox WHERE id = ?`, id).Scan(&row)
		if done(row) {
			return row
		}
		time.Sleep(30 * time.Millisecond)
	}
	e.t.Fatalf("side effect %d never settled: %+v", id, row)
	return row
}

// The generic webhook gets the side effect with Idempotency-Key = its stable id on every attempt; 503s are
// retried with backoff until it succeeds, and it is marked sent once.
func TestSideEffectWebhookRetriesWithStableIdempotencyKey(t *testing.T) {
	t.Parallel()
	e := newSyncEnv(t)
	var mu sync.Mutex
	var keys []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		keys = append(keys, r.Header.Get("Idempotency-Key"))
		if len(keys) <= 2 {
			w.WriteHeader(http.StatusServiceUnavailable)
			return
		}
		w.WriteHeader(http.StatusNoContent)
	}))
	defer srv.Close()
	sealed, _ := e.box.Seal("hook-secret")
	if err := e.store.SideEffectWebhookPut(e.ctx, models.SideEffectWebhook{WorkspaceID: e.ws.ID, URL: srv.URL, SecretEnc: sealed, Enabled: true}); err != nil {
		t.Fatal(err)
	}
	c := e.contact("jane@example.com", "SQL")
	row := e.sideEffect(c.ID, "se:abc:enter:SQL:nurture", "nurture")
	got := e.deliverUntil(e.sideEffectRelay(), row.ID, func(r models.OutboxRow) bool { return r.Status != "pending" })

	if got.Status != models.OutboxSent || got.Attempts != 3 {
		t.Errorf("row status %s attempts %d; want sent after 3 attempts", got.Status, got.Attempts)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(keys) != 3 {
		t.Fatalf("webhook got %d requests, want 3", len(keys))
	}
	for _, k := range keys {
		if k != row.StableID {
			t.Errorf("Idempotency-Key %q, want the stable id %q", k, row.StableID)
		}
	}
}

// A 4xx answer is not retried: the side effect is dead-lettered with the reason.
func TestSideEffectRejectedIsDeadLettered(t *testing.T) {
	t.Parallel()
	e := newSyncEnv(t)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusUnprocessableEntity) }))
	defer srv.Close()
	if err := e.store.SideEffectWebhookPut(e.ctx, models.SideEffectWebhook{WorkspaceID: e.ws.ID, URL: srv.URL, Enabled: true}); err != nil {
		t.Fatal(err)
	}
	c := e.contact("jane@example.com", "SQL")
	row := e.sideEffect(c.ID, "se:abc:created:sales_task", "sales_task")
	got := e.deliverUntil(e.sideEffectRelay(), row.ID, func(r models.OutboxRow) bool { return r.Status != "pending" })
	if got.Status != models.OutboxDead {
		t.Fatalf("row status %s, want dead", got.Status)
	}
	if n := e.count(`SELECT count(*) FROM dead_letters WHERE outbox_id = ? AND kind = 'side_effect_failed' AND reason LIKE '%422%'`, row.ID); n != 1 {
		t.Errorf("side_effect_failed dead letters naming the 422 = %d, want 1", n)
	}
}

// Without a webhook, a sandbox destination runs the action natively, once per stable id even when the relay
// delivers it twice (a crash between the action and the bookkeeping).
func TestSideEffectRunsNativelyInSandboxOnce(t *testing.T) {
	t.Parallel()
	e := newSyncEnv(t)
	d := e.addDestination(models.Destination{Kind: "sandbox"}, "")
	c := e.contact("jane@example.com", "SQL")
	row := e.sideEffect(c.ID, "se:abc:enter:SQL:start_automation", "start_automation")
	r := e.sideEffectRelay()
	e.deliverUntil(r, row.ID, func(r models.OutboxRow) bool { return r.Status == models.OutboxSent })
	e.store.DB().Exec(`UPDATE outbox SET status = 'pending', next_attempt_at = now() WHERE id = ?`, row.ID) // redelivery
	e.deliverUntil(r, row.ID, func(r models.OutboxRow) bool { return r.Status == models.OutboxSent })
	if n := e.count(`SELECT count(*) FROM sandbox_actions WHERE destination_id = ? AND stable_id = ?`, d.ID, row.StableID); n != 1 {
		t.Errorf("sandbox ran the action %d times, want 1", n)
	}
}

package app_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/leadgate/leadgate/ingest"
	"github.com/leadgate/leadgate/internal/testkit"
	"github.com/leadgate/leadgate/models"
)

// groupItem is a single-event delivery as ingest hands it to the store.
func groupItem(ws, sourceID int64, key, email string) models.IngestItem {
	e := email
	return models.IngestItem{Key: key, Event: models.Event{
		ID: uuid.Must(uuid.NewV7()).String(), WorkspaceID: ws, SourceID: sourceID, EventType: "form_submitted",
		Channel: "web_form", OccurredAt: time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC), Email: &e,
		Fields: json.RawMessage(`{"utm_source":"ads"}`), Payload: json.RawMessage(`{"email":"` + email + `"}`),
		ContentType: "application/json", Status: models.EventPending,
	}}
}

// TestIngestStoreGroup specifies the group insert: new keys become events with exactly the values a single
// insert stores, a key repeated inside the group or already stored is a duplicate naming the stored event,
// and each key's duplicate counter grows by the number of its repeats.
func TestIngestStoreGroup(t *testing.T) {
	t.Parallel()
	h := newHarness(t, opts{})
	src := h.createSource(map[string]any{"kind": "standard-webhooks"})
	ctx := context.Background()
	ws := h.wsID()

	stored, err := h.store.IngestStore(ctx, []models.IngestItem{groupItem(ws, src.ID, "p:old", "old@example.com")}, time.Hour)
	if err != nil {
		t.Fatalf("store the earlier event: %v", err)
	}
	group := []models.IngestItem{
		groupItem(ws, src.ID, "p:a", "a@example.com"),
		groupItem(ws, src.ID, "p:old", "old@example.com"),
		groupItem(ws, src.ID, "p:b", "b@example.com"),
		groupItem(ws, src.ID, "p:a", "a@example.com"),
		groupItem(ws, src.ID, "p:a", "a@example.com"),
	}
	res, err := h.store.IngestStoreGroup(ctx, group)
	if err != nil {
		t.Fatalf("IngestStoreGroup: %v", err)
	}
	want := []models.IngestResult{
		{EventID: group[0].Event.ID},
		{EventID: stored[0].EventID, Duplicate: true},
		{EventID: group[2].Event.ID},
		{EventID: group[0].Event.ID, Duplicate: true},
		{EventID: group[0].Event.ID, Duplicate: true},
	}
	for i := range want {
		if res[i] != want[i] {
			t.Errorf("item %d (%s): got %+v, want %+v", i, group[i].Key, res[i], want[i])
		}
	}
	if n := h.inboxCount(); n != 3 {
		t.Fatalf("inbox holds %d events, want 3 (old, a, b)", n)
	}
	dups := map[string]int{}
	rows, err := h.store.DB().WithContext(ctx).Raw(`SELECT key, duplicates FROM idempotency_keys WHERE workspace_id = ?`, ws).Rows()
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var k string
		var n int
		if err := rows.Scan(&k, &n); err != nil {
			t.Fatal(err)
		}
		dups[k] = n
	}
	_ = rows.Close()
	if dups["p:a"] != 2 || dups["p:old"] != 1 || dups["p:b"] != 0 {
		t.Fatalf("duplicate counters %v, want p:a=2 p:old=1 p:b=0", dups)
	}

	// A group-inserted event holds what the single-statement path stores, every column of it.
	full := func(key string) models.IngestItem {
		it := groupItem(ws, src.ID, key, "same@example.com")
		str := func(v string) *string { return &v }
		ev := &it.Event
		ev.EmailRaw, ev.Phone, ev.PhoneRaw = str(" Same@Example.com "), str("+14155550134"), str("(415) 555-0134")
		ev.EmailProblem, ev.PhoneProblem = str("email problem"), str("phone problem")
		ev.FirstName, ev.LastName, ev.Company = str("Ada"), str("Lovelace"), str("Analytical Engines")
		ev.TargetStage, ev.CurrentStage = str("Engaged"), str("Discovered")
		ev.Attribution = json.RawMessage(`{"utm_campaign":"spring"}`)
		ev.Hydration = json.RawMessage(`{"provider":"clearbit"}`)
		ev.RuleOverrides = json.RawMessage(`{"allow_regression":true}`)
		ev.Reason, ev.Attempts, ev.Spooled = "a reason", 2, true
		return it
	}
	single := full("p:single")
	grouped := full("p:grouped")
	if _, err := h.store.IngestStore(ctx, []models.IngestItem{single}, time.Hour); err != nil {
		t.Fatal(err)
	}
	if _, err := h.store.IngestStoreGroup(ctx, []models.IngestItem{grouped}); err != nil {
		t.Fatal(err)
	}
	a, err := h.store.EventGet(ctx, ws, single.Event.ID)
	if err != nil {
		t.Fatal(err)
	}
	b, err := h.store.EventGet(ctx, ws, grouped.Event.ID)
	if err != nil {
		t.Fatal(err)
	}
	a.ID, a.IdempotencyKey, a.ReceivedAt = "", "", time.Time{}
	b.ID, b.IdempotencyKey, b.ReceivedAt = "", "", time.Time{}
	if fmt.Sprintf("%+v", eventView(a)) != fmt.Sprintf("%+v", eventView(b)) {
		t.Fatalf("group insert stored\n%+v\nsingle insert stored\n%+v", eventView(b), eventView(a))
	}
}

// eventView renders an event's pointers and JSON as values for comparison.
func eventView(e models.Event) map[string]string {
	s := func(p *string) string {
		if p == nil {
			return "<nil>"
		}
		return *p
	}
	return map[string]string{"email": s(e.Email), "type": e.EventType, "channel": e.Channel, "occurred": e.OccurredAt.UTC().String(),
		"fields": string(e.Fields), "attribution": string(e.Attribution), "hydration": string(e.Hydration), "payload": string(e.Payload),
		"status": e.Status, "content_type": e.ContentType, "phone": s(e.Phone), "target": s(e.TargetStage), "spooled": fmt.Sprint(e.Spooled),
		"email_raw": s(e.EmailRaw), "email_problem": s(e.EmailProblem), "phone_raw": s(e.PhoneRaw), "phone_problem": s(e.PhoneProblem),
		"first_name": s(e.FirstName), "last_name": s(e.LastName), "company": s(e.Company), "current": s(e.CurrentStage),
		"rule_overrides": string(e.RuleOverrides), "reason": e.Reason, "attempts": fmt.Sprint(e.Attempts)}
}

// TestGroupCommitIsolatesABadDelivery: when the database refuses one item of a group (here an event
// marked applied with no identity, which a check constraint refuses), the others are still stored and
// answered, and only that item gets the error.
func TestGroupCommitIsolatesABadDelivery(t *testing.T) {
	t.Parallel()
	h, ws, sourceID := newGroupHarness(t)
	g := &ingest.GroupCommit{Store: h.store, Log: testLogger(), MaxGroup: 64, Committers: 1}
	defer g.Close()

	items := make([]models.IngestItem, 20)
	for i := range items {
		items[i] = groupItem(ws, sourceID, fmt.Sprintf("p:iso-%d", i), fmt.Sprintf("iso%d@example.com", i))
	}
	// Applied with no email, no phone and a hydration: events_applied_with_identity refuses it.
	items[7].Event.Status = models.EventApplied
	items[7].Event.Email = nil
	items[7].Event.Hydration = json.RawMessage(`{"provider":"stripe","id":"cs_1"}`)
	errs := make([]error, len(items))
	results := make([]models.IngestResult, len(items))
	var wg sync.WaitGroup
	for i := range items {
		wg.Add(1)
		go func() {
			defer wg.Done()
			results[i], _, errs[i] = g.Commit(context.Background(), items[i])
		}()
	}
	wg.Wait()
	for i := range items {
		switch {
		case i == 7 && errs[i] == nil:
			t.Errorf("item 7 (applied without an identity) was stored: %+v", results[i])
		case i != 7 && errs[i] != nil:
			t.Errorf("item %d failed with its group: %v", i, errs[i])
		case i != 7 && (results[i].EventID != items[i].Event.ID || results[i].Duplicate):
			t.Errorf("item %d answered %+v, want its own new event", i, results[i])
		}
	}
	if n := h.inboxCount(); n != 19 {
		t.Fatalf("inbox holds %d events, want 19", n)
	}
}

// newGroupHarness is the setting of the group-commit tests: a harness with a standard-webhooks source,
// and the ids of the default workspace and that source that their items carry.
func newGroupHarness(t *testing.T) (h *harness, ws, sourceID int64) {
	t.Helper()
	h = newHarness(t, opts{})
	return h, h.wsID(), h.createSource(map[string]any{"kind": "standard-webhooks"}).ID
}

// wsID is the default workspace's id.
func (h *harness) wsID() int64 {
	h.t.Helper()
	w, err := h.store.WorkspaceBySlug(context.Background(), "default")
	if err != nil {
		h.t.Fatalf("default workspace: %v", err)
	}
	return w.ID
}

// A delivery stored by the group committer is published to the Redis fast gate right after its commit
// (off the answer path, one pipeline for the keys committed meanwhile), so a retry during a later
// Postgres outage can still be answered.
func TestGroupCommittedKeyIsOnTheFastGate(t *testing.T) {
	t.Parallel()
	h := newHarness(t, opts{})
	src := h.createSource(map[string]any{"kind": "standard-webhooks"})
	id := h.accept(h.swDelivery(src, "msg_gate_1", `{"email":"gate@example.com"}`), "queued")
	got := h.gateValue("standard-webhooks:msg_gate_1")
	if !strings.HasPrefix(got, id+"|") {
		t.Fatalf("fast gate holds %q, want the event id %s", got, id)
	}
}

// gateValue waits up to 5 s for the fast-gate key of an idempotency key and returns its value.
func (h *harness) gateValue(key string) string {
	h.t.Helper()
	gk := fmt.Sprintf("lg:idem:{%d}:%s", h.wsID(), key)
	deadline := time.Now().Add(5 * time.Second)
	for {
		got, err := h.rdb.Get(context.Background(), gk).Result()
		if err == nil {
			return got
		}
		if time.Now().After(deadline) {
			keys, _ := h.rdb.Keys(context.Background(), "lg:idem:*").Result()
			h.t.Fatalf("fast gate has no key %s (%v); keys: %v", gk, err, keys)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// While a group's statement runs, the deliveries arriving meanwhile wait for it up to the stagger and
// then leave together as one group, beside it: a statement held up (here by another transaction that
// claimed the same key and has not finished) delays the others by the stagger, not by its own length.
func TestDeliveriesBehindAHeldUpStatementLeaveTogetherAfterTheStagger(t *testing.T) {
	t.Parallel()
	h, ws, sourceID := newGroupHarness(t)
	const stagger = 300 * time.Millisecond
	var mu sync.Mutex
	var sizes []int
	g := &ingest.GroupCommit{Store: h.store, Log: testLogger(), Committers: 4, Stagger: stagger,
		Sizes: prometheus.ObserverFunc(func(v float64) { mu.Lock(); sizes = append(sizes, int(v)); mu.Unlock() })}
	defer g.Close()

	release := h.holdKey(context.Background(), ws, sourceID, "p:held")
	heldDone := make(chan error, 1)
	began := time.Now()
	go func() {
		_, _, err := g.Commit(context.Background(), groupItem(ws, sourceID, "p:held", "held@example.com"))
		heldDone <- err
	}()
	h.waitForALockWait("the held item's statement never waited on its key")

	const n = 10
	var wg sync.WaitGroup
	answered := make([]time.Duration, n)
	errs := make([]error, n)
	for i := range n {
		wg.Go(func() {
			_, _, errs[i] = g.Commit(context.Background(), groupItem(ws, sourceID, fmt.Sprintf("p:behind-%d", i), fmt.Sprintf("behind%d@example.com", i)))
			answered[i] = time.Since(began)
		})
	}
	wg.Wait()
	select {
	case err := <-heldDone:
		t.Fatalf("the held-up delivery was answered (%v) while its key was still claimed elsewhere", err)
	default:
	}
	for i := range n {
		if errs[i] != nil {
			t.Fatalf("delivery %d behind the held-up statement: %v", i, errs[i])
		}
		if answered[i] < stagger {
			t.Errorf("delivery %d was answered %s after the held-up statement began, before the %s stagger", i, answered[i], stagger)
		}
	}
	mu.Lock()
	if len(sizes) != 2 || sizes[0] != 1 || sizes[1] != n {
		t.Errorf("group sizes %v, want [1 %d]: the deliveries behind the held-up one leave together", sizes, n)
	}
	mu.Unlock()

	release()
	if err := <-heldDone; err != nil {
		t.Fatalf("the held-up delivery, once its key was free: %v", err)
	}
	if got := h.inboxCount(); got != n+1 {
		t.Fatalf("inbox holds %d events, want %d", got, n+1)
	}
}

// At a moderate rate deliveries arrive a little apart; a group waits up to its linger for more of them
// instead of costing a statement and a commit each, and a lone delivery is still stored once the linger
// is up.
func TestDeliveriesArrivingWithinTheLingerShareAGroup(t *testing.T) {
	t.Parallel()
	h, ws, sourceID := newGroupHarness(t)
	var mu sync.Mutex
	var sizes []int
	g := &ingest.GroupCommit{Store: h.store, Log: testLogger(), Linger: 2 * time.Second, MinGroup: 6,
		Sizes: prometheus.ObserverFunc(func(v float64) { mu.Lock(); sizes = append(sizes, int(v)); mu.Unlock() })}
	defer g.Close()

	var wg sync.WaitGroup
	errs := make([]error, 6)
	for i := range 6 {
		wg.Go(func() {
			_, _, errs[i] = g.Commit(context.Background(), groupItem(ws, sourceID, fmt.Sprintf("p:linger-%d", i), fmt.Sprintf("linger%d@example.com", i)))
		})
		time.Sleep(5 * time.Millisecond)
	}
	wg.Wait()
	if _, _, err := g.Commit(context.Background(), groupItem(ws, sourceID, "p:linger-lone", "lone@example.com")); err != nil {
		t.Fatalf("a lone delivery: %v", err)
	}
	for i, err := range errs {
		if err != nil {
			t.Fatalf("delivery %d: %v", i, err)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if len(sizes) != 2 || sizes[0] != 6 || sizes[1] != 1 {
		t.Errorf("group sizes %v, want [6 1]: six deliveries 5 ms apart in one group, then the lone one", sizes)
	}
	if got := h.inboxCount(); got != 7 {
		t.Fatalf("inbox holds %d events, want 7", got)
	}
}

// The linger counts from a delivery's arrival: one that already waited behind the statement in flight
// for longer than the linger leaves in the next group without lingering again. Here the first group's
// statement waits on a key another transaction holds while the clock moves on an hour, the linger; the
// delivery queued behind it is then stored at once instead of an hour later.
func TestADeliveryThatWaitedBehindAStatementDoesNotLingerAgain(t *testing.T) {
	t.Parallel()
	h, ws, sourceID := newGroupHarness(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()

	var clock atomic.Int64 // seconds since the Unix epoch
	clock.Store(time.Date(2026, 12, 7, 9, 0, 0, 0, time.UTC).Unix())
	var reads atomic.Int32
	now := func() time.Time { reads.Add(1); return time.Unix(clock.Load(), 0) }
	g := &ingest.GroupCommit{Store: h.store, Log: testLogger(), Committers: 1, Linger: time.Hour, MinGroup: 2,
		Stagger: time.Hour, Timeout: time.Minute, Now: now}
	defer g.Close()

	release := h.holdKey(ctx, ws, sourceID, "p:held")
	var first sync.WaitGroup
	firstErrs := make([]error, 2)
	for i, key := range []string{"p:held", "p:beside-held"} {
		first.Go(func() {
			_, _, firstErrs[i] = g.Commit(ctx, groupItem(ws, sourceID, key, fmt.Sprintf("first%d@example.com", i)))
		})
	}
	h.waitForALockWait("the first group's statement never waited on the held key")
	queuedReads := reads.Load()
	late := make(chan error, 1)
	go func() {
		_, _, err := g.Commit(ctx, groupItem(ws, sourceID, "p:late", "late@example.com"))
		late <- err
	}()
	testkit.Eventually(t, 10*time.Second, "the late delivery was never queued", func() bool { return reads.Load() > queuedReads })
	clock.Add(int64(time.Hour / time.Second))
	release()
	first.Wait()
	for i, err := range firstErrs {
		if err != nil {
			t.Fatalf("first group, delivery %d: %v", i, err)
		}
	}
	if err := <-late; err != nil {
		t.Fatalf("the delivery that waited an hour behind the first group lingered again: %v", err)
	}
	if got := h.inboxCount(); got != 3 {
		t.Fatalf("inbox holds %d events, want 3", got)
	}
}

// Once FullGroup deliveries wait, they leave as a group beside the statement in flight instead of waiting
// for it: here that statement waits on a key another transaction holds, and the two deliveries queued
// behind it are stored while it still waits.
func TestAFullQueueDoesNotWaitForTheStatementInFlight(t *testing.T) {
	t.Parallel()
	h, ws, sourceID := newGroupHarness(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	g := &ingest.GroupCommit{Store: h.store, Log: testLogger(), Committers: 2, MinGroup: 1, FullGroup: 2, Stagger: time.Hour,
		Timeout: time.Minute}
	defer g.Close()

	release := h.holdKey(ctx, ws, sourceID, "p:held")
	held := make(chan error, 1)
	go func() {
		_, _, err := g.Commit(ctx, groupItem(ws, sourceID, "p:held", "held@example.com"))
		held <- err
	}()
	h.waitForALockWait("the first group's statement never waited on the held key")
	var behind sync.WaitGroup
	errs := make([]error, 2)
	for i := range 2 {
		behind.Go(func() {
			_, _, errs[i] = g.Commit(ctx, groupItem(ws, sourceID, fmt.Sprintf("p:behind-%d", i), fmt.Sprintf("behind%d@example.com", i)))
		})
	}
	behind.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("delivery %d queued behind the held statement: %v", i, err)
		}
	}
	select {
	case err := <-held:
		t.Fatalf("the held statement finished before its key was released: %v", err)
	default:
	}
	release()
	if err := <-held; err != nil {
		t.Fatalf("the held delivery once its key was released: %v", err)
	}
	if got := h.inboxCount(); got != 3 {
		t.Fatalf("inbox holds %d events, want 3", got)
	}
}

// holdKey claims key in a transaction it leaves open, so that a group statement claiming the same key
// waits on it; release ends that transaction.
func (h *harness) holdKey(ctx context.Context, ws, sourceID int64, key string) (release func()) {
	h.t.Helper()
	tx := h.store.DB().WithContext(ctx).Begin()
	h.t.Cleanup(func() { tx.Rollback() })
	if err := tx.Exec(`INSERT INTO idempotency_keys (workspace_id, key, event_id, source_id) VALUES (?, ?, ?, ?)`,
		ws, key, uuid.Must(uuid.NewV7()).String(), sourceID).Error; err != nil {
		h.t.Fatal(err)
	}
	return func() {
		if err := tx.Rollback().Error; err != nil {
			h.t.Fatal(err)
		}
	}
}

// waitForALockWait waits until a statement on this test's database waits for a lock, and fails with msg
// when none does within 10 s.
func (h *harness) waitForALockWait(msg string) {
	h.t.Helper()
	testkit.Eventually(h.t, 10*time.Second, msg, func() bool {
		var waiting int64
		h.store.DB().Raw(`SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'`).Scan(&waiting)
		return waiting > 0
	})
}

// An item whose JSON column is not a JSON document cannot share a group statement: the group stores
// nothing and says so, and the committer then stores its items one by one, so only that one fails.
func TestAGroupWithAnItemThatIsNotJSONStoresNothing(t *testing.T) {
	t.Parallel()
	h, ws, sourceID := newGroupHarness(t)
	bad := groupItem(ws, sourceID, "p:not-json", "bad@example.com")
	bad.Event.Payload = json.RawMessage(`{"email":`)
	group := []models.IngestItem{groupItem(ws, sourceID, "p:fine", "fine@example.com"), bad}
	if _, err := h.store.IngestStoreGroup(context.Background(), group); !errors.Is(err, models.ErrGroupUnencodable) {
		t.Fatalf("IngestStoreGroup = %v, want ErrGroupUnencodable", err)
	}
	if n := h.inboxCount(); n != 0 {
		t.Fatalf("inbox holds %d events, want none", n)
	}
}

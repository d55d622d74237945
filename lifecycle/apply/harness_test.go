package apply_test

import (
	"context"
	"encoding/json"
	"log/slog"
	"os"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/leadgate/leadgate/internal/testkit"
	"github.com/leadgate/leadgate/lifecycle"
	"github.com/leadgate/leadgate/lifecycle/apply"
	"github.com/leadgate/leadgate/models"
)

// env is one test's Postgres database with an Applier on it. The queue is a
// recorder: tests drive Apply themselves.
type env struct {
	t       testing.TB
	ctx     context.Context
	store   *models.Store
	ws      int64 // the default workspace
	queue   *recordingQueue
	applier *apply.Applier
	clock   *clock
}

// clock is the Applier's Now; tests move it instead of sleeping.
type clock struct{ offset atomic.Int64 }

func (c *clock) Now() time.Time          { return time.Now().UTC().Add(time.Duration(c.offset.Load())) }
func (c *clock) Advance(d time.Duration) { c.offset.Add(int64(d)) }

// recordingQueue records re-enqueues instead of sending them to asynq.
type recordingQueue struct {
	mu    sync.Mutex
	calls []enqueued
}

type enqueued struct {
	EventID string
	Delay   time.Duration
}

func (q *recordingQueue) EnqueueApplyIn(_ context.Context, id string, d time.Duration) error {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.calls = append(q.calls, enqueued{id, d})
	return nil
}

func testLogger() *slog.Logger {
	if os.Getenv("LEADGATE_TEST_LOG") == "" {
		return slog.New(slog.DiscardHandler)
	}
	return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
}

func newEnv(t testing.TB) *env {
	t.Helper()
	return newEnvWith(t)
}

// newEnvWith is newEnv with options for the store's connections.
func newEnvWith(t testing.TB, opts ...models.Option) *env {
	t.Helper()
	ctx := context.Background()
	store, err := models.Open(ctx, testkit.MigratedDatabase(t), testLogger(), opts...)
	if err != nil {
		t.Fatalf("open store: %v", err)
	}
	t.Cleanup(func() { _ = store.Close() })
	if err := store.Migrate(ctx, testLogger()); err != nil {
		t.Fatalf("migrate: %v", err)
	}
	ws, err := store.WorkspaceBySlug(ctx, "default")
	if err != nil {
		t.Fatalf("default workspace: %v", err)
	}
	e := &env{t: t, ctx: ctx, store: store, ws: ws.ID, queue: &recordingQueue{}, clock: &clock{}}
	e.applier = &apply.Applier{Store: store, Queue: e.queue, Log: testLogger(), Now: e.clock.Now}
	return e
}

// workspace creates another workspace and returns its id.
func (e *env) workspace(slug string) int64 {
	e.t.Helper()
	ws, err := e.store.WorkspaceCreate(e.ctx, slug, slug)
	if err != nil {
		e.t.Fatalf("create workspace %s: %v", slug, err)
	}
	return ws.ID
}

// source creates a source of a workspace with an event type -> stage mapping.
func (e *env) source(ws int64, name, channel string, stages map[string]string) models.Source {
	e.t.Helper()
	src := models.Source{WorkspaceID: ws, Name: name, Kind: "standard-webhooks", Channel: channel,
		Config: models.SourceConfig{EventStages: stages}, Enabled: true}
	if err := e.store.SourceCreate(e.ctx, &src); err != nil {
		e.t.Fatalf("create source %s: %v", name, err)
	}
	return src
}

// saveRules stores rules as the workspace's next version.
func (e *env) saveRules(ws int64, r lifecycle.Rules) {
	e.t.Helper()
	_, err := e.store.StageRulesSave(e.ctx, ws, func(v int) (json.RawMessage, error) {
		r.Version = v
		return json.Marshal(r)
	}, "test")
	if err != nil {
		e.t.Fatalf("save rules: %v", err)
	}
}

// lead is what one test event carries.
type lead struct {
	Type        string
	At          time.Time
	Email       string
	Phone       string
	Target      string
	FirstName   string
	Fields      map[string]any
	Attribution map[string]any
}

// insert stores an event as ingest would (pending, unique key) and returns its id.
func (e *env) insert(src models.Source, l lead) string {
	e.t.Helper()
	id := uuid.Must(uuid.NewV7()).String()
	fields, _ := json.Marshal(nonNilMap(l.Fields))
	attr, _ := json.Marshal(nonNilMap(l.Attribution))
	ev := models.Event{ID: id, WorkspaceID: src.WorkspaceID, SourceID: src.ID, EventType: l.Type, Channel: src.Channel,
		OccurredAt: l.At.UTC(), ReceivedAt: time.Now().UTC(), Fields: fields, Attribution: attr, Payload: json.RawMessage(`{}`),
		Status: models.EventPending, ContentType: "application/json"}
	ev.Email, ev.Phone, ev.TargetStage, ev.FirstName = optional(l.Email), optional(l.Phone), optional(l.Target), optional(l.FirstName)
	if _, err := e.store.IngestStore(e.ctx, []models.IngestItem{{Event: ev, Key: "k-" + id}}, time.Hour); err != nil {
		e.t.Fatalf("store event: %v", err)
	}
	return id
}

// apply runs the Applier on an event and fails on anything but nil.
func (e *env) apply(id string) {
	e.t.Helper()
	if err := e.applier.Apply(e.ctx, id); err != nil {
		e.t.Fatalf("apply %s: %v", id, err)
	}
}

func (e *env) event(id string) models.Event {
	e.t.Helper()
	ev, err := e.store.EventByID(e.ctx, id)
	if err != nil {
		e.t.Fatalf("event %s: %v", id, err)
	}
	return ev
}

func (e *env) contactByEmail(ws int64, email string) models.Contact {
	e.t.Helper()
	c, err := e.store.ContactFindByEmail(e.ctx, ws, email)
	if err != nil {
		e.t.Fatalf("contact %s: %v", email, err)
	}
	return c
}

func (e *env) count(query string, args ...any) int64 {
	e.t.Helper()
	var n int64
	if err := e.store.DB().WithContext(e.ctx).Raw(query, args...).Scan(&n).Error; err != nil {
		e.t.Fatalf("count %q: %v", query, err)
	}
	return n
}

func optional(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

func nonNilMap(m map[string]any) map[string]any {
	if m == nil {
		return map[string]any{}
	}
	return m
}

// base is a fixed past instant the tests' event times are built from.
var base = time.Date(2026, 10, 31, 8, 0, 0, 0, time.UTC)

func at(sec int) time.Time { return base.Add(time.Duration(sec) * time.Second) }

package syncer_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/redis/go-redis/v9"

	"github.com/leadgate/leadgate/crm/crmfake"
	"github.com/leadgate/leadgate/crm/syncer"
	"github.com/leadgate/leadgate/internal/egress"
	"github.com/leadgate/leadgate/internal/secretbox"
	"github.com/leadgate/leadgate/internal/testkit"
	"github.com/leadgate/leadgate/lifecycle/apply"
	"github.com/leadgate/leadgate/models"
)

// syncEnv is one test's database, Redis DB, workspace and relay.
type syncEnv struct {
	t     testing.TB
	ctx   context.Context
	dbURL string
	store *models.Store
	rdb   *redis.Client
	box   *secretbox.Box
	ws    models.Workspace
	conn  *syncer.Connector
	relay *syncer.SyncRelay
}

func newSyncEnv(t testing.TB) *syncEnv {
	t.Helper()
	ctx := context.Background()
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	dbURL := testkit.MigratedDatabase(t)
	store, err := models.Open(ctx, dbURL, log)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	if err := store.Migrate(ctx, log); err != nil {
		t.Fatal(err)
	}
	opt, err := redis.ParseURL(testkit.RedisDB(t))
	if err != nil {
		t.Fatal(err)
	}
	rdb := redis.NewClient(opt)
	t.Cleanup(func() { rdb.Close() })
	box, err := secretbox.New("test secret key")
	if err != nil {
		t.Fatal(err)
	}
	ws, err := store.WorkspaceCreate(ctx, "acme-"+uuid.NewString()[:8], "Acme")
	if err != nil {
		t.Fatal(err)
	}
	conn := &syncer.Connector{Store: store, Box: box, Redis: rdb, Egress: loopbackEgress()}
	relay := &syncer.SyncRelay{Store: store, Connector: conn, Log: log, BackoffStart: 100 * time.Millisecond, PassTime: 5 * time.Second}
	return &syncEnv{t: t, ctx: ctx, dbURL: dbURL, store: store, rdb: rdb, box: box, ws: ws, conn: conn, relay: relay}
}

// acFields are the fake ActiveCampaign account's custom fields.
var acFields = []crmfake.ACField{
	{ID: "1", Title: "Last automation source", Perstag: "LAST_AUTOMATION_SOURCE"},
	{ID: "2", Title: "Sync timestamp", Perstag: "SYNC_TIMESTAMP"},
	{ID: "3", Title: "Lifecycle stage", Perstag: "STAGE"},
	{ID: "4", Title: "Budget", Perstag: "BUDGET"},
}

// addDestination creates a destination of the test workspace with a sealed token.
func (e *syncEnv) addDestination(d models.Destination, token string) models.Destination {
	e.t.Helper()
	d.WorkspaceID = e.ws.ID
	d.Enabled = true
	if d.Name == "" {
		d.Name = d.Kind
	}
	if d.BatchSize == 0 {
		d.BatchSize = 20
	}
	sealed, err := e.box.Seal(token)
	if err != nil {
		e.t.Fatal(err)
	}
	d.APITokenEnc = sealed
	if err := e.store.DestinationCreate(e.ctx, &d); err != nil {
		e.t.Fatal(err)
	}
	got, err := e.store.DestinationByID(e.ctx, d.ID)
	if err != nil {
		e.t.Fatal(err)
	}
	return got
}

// acDestination is an ActiveCampaign destination against fake.
func (e *syncEnv) acDestination(fake *crmfake.ActiveCampaign, rps int) models.Destination {
	return e.addDestination(models.Destination{Kind: "activecampaign", BaseURL: fake.URL, RateLimitRPS: rps,
		Config: models.DestinationConfig{StageField: "3", FieldMap: map[string]string{"budget": "4"}}}, "ac-token")
}

// contact creates a contact at version 1 (with its outbox row, as apply would).
func (e *syncEnv) contact(email, stage string) models.Contact {
	e.t.Helper()
	now := time.Now().UTC()
	c := models.Contact{ID: uuid.NewString(), WorkspaceID: e.ws.ID, Email: &email, Stage: stage, Fields: map[string]string{},
		FirstTouch: map[string]string{}, Tags: []string{}, ScoreBreakdown: json.RawMessage("[]"), FirstSeenAt: now, LastActivityAt: now, Version: 1}
	if err := e.store.ContactCreate(e.ctx, &c); err != nil {
		e.t.Fatal(err)
	}
	e.intent(c)
	return c
}

// change applies fn to the contact, bumps its version and writes the crm_upsert intent.
func (e *syncEnv) change(c *models.Contact, fn func(*models.Contact)) {
	e.t.Helper()
	fn(c)
	c.Version++
	if err := e.store.ContactSave(e.ctx, c); err != nil {
		e.t.Fatal(err)
	}
	e.intent(*c)
}

func (e *syncEnv) intent(c models.Contact) {
	e.t.Helper()
	payload, _ := json.Marshal(apply.IntentOf(&c))
	id := c.ID
	if _, err := e.store.OutboxAdd(e.ctx, models.OutboxRow{WorkspaceID: c.WorkspaceID, ContactID: &id, Kind: models.OutboxCRMUpsert,
		StableID: fmt.Sprintf("crm:%s:v%d", c.ID, c.Version), Version: c.Version, Action: "upsert", Payload: payload}); err != nil {
		e.t.Fatal(err)
	}
}

// drainAll fans out and drains the destination until nothing is pending (due or waiting on backoff) or
// timeout passes.
func (e *syncEnv) drainAll(d models.Destination, timeout time.Duration) {
	e.t.Helper()
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) {
		if _, err := e.relay.FanOut(e.ctx); err != nil {
			e.t.Fatal(err)
		}
		if _, err := e.relay.Drain(e.ctx, d.ID); err != nil {
			e.t.Fatal(err)
		}
		if e.pending(d) == 0 {
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
	e.t.Fatalf("destination %d still has %d pending items after %s", d.ID, e.pending(d), timeout)
}

func (e *syncEnv) pending(d models.Destination) int64 {
	var n int64
	if err := e.store.DB().Raw(`SELECT count(*) FROM sync_queue WHERE destination_id = ? AND status = 'pending'`, d.ID).Scan(&n).Error; err != nil {
		e.t.Fatal(err)
	}
	return n
}

func (e *syncEnv) count(query string, args ...any) int64 {
	e.t.Helper()
	var n int64
	if err := e.store.DB().Raw(query, args...).Scan(&n).Error; err != nil {
		e.t.Fatal(err)
	}
	return n
}

// loopbackEgress is the SSRF guard of these tests: the CRM fakes and webhook receivers listen on 127.0.0.1,
// which production refuses unless LEADGATE_EGRESS_ALLOWED_HOSTS allows it.
func loopbackEgress() *egress.Guard { return egress.Outbound([]string{"127.0.0.1"}) }

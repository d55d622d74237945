package syncer_test

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/leadgate/leadgate/crm/crmfake"
	"github.com/leadgate/leadgate/crm/syncer"
	"github.com/leadgate/leadgate/internal/testkit"
	"github.com/leadgate/leadgate/models"
)

// answerLoser stands between the relay and a CRM fake. Armed, it lets the next write through to the fake,
// which carries it out, then calls lost and never answers: the relay sees the request cut off. Armed to
// drop, it never lets the write reach the fake at all.
type answerLoser struct {
	*httptest.Server
	armed   atomic.Bool
	drop    atomic.Bool
	isWrite func(*http.Request) bool
	mu      sync.Mutex
	lost    func()
}

func newAnswerLoser(t *testing.T, target string, isWrite func(*http.Request) bool) *answerLoser {
	u, err := url.Parse(target)
	if err != nil {
		t.Fatal(err)
	}
	proxy := httputil.NewSingleHostReverseProxy(u)
	l := &answerLoser{isWrite: isWrite}
	l.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !l.isWrite(r) || !l.armed.CompareAndSwap(true, false) {
			proxy.ServeHTTP(w, r)
			return
		}
		if l.drop.Load() {
			_, _ = io.Copy(io.Discard, r.Body) // read, so that the server notices the client hang up
		} else {
			proxy.ServeHTTP(httptest.NewRecorder(), r) // carried out; the answer goes nowhere
		}
		l.mu.Lock()
		lost := l.lost
		l.mu.Unlock()
		lost()
		<-r.Context().Done()
	}))
	t.Cleanup(l.Close)
	return l
}

// arm makes the next write's answer lost, calling lost once the CRM has carried it out.
func (l *answerLoser) arm(lost func()) { l.armWith(lost, false) }

// armDrop makes the next write vanish before the CRM sees it, calling lost.
func (l *answerLoser) armDrop(lost func()) { l.armWith(lost, true) }

func (l *answerLoser) armWith(lost func(), drop bool) {
	l.mu.Lock()
	l.lost = lost
	l.mu.Unlock()
	l.drop.Store(drop)
	l.armed.Store(true)
}

// crmUnderTest is a CRM fake behind an answerLoser, with a destination that writes to it through the
// loser and a way to read a contact's budget field there.
type crmUnderTest struct {
	dest   models.Destination
	loser  *answerLoser
	budget func(email string) string
}

// answerLosingCRMs opens each CRM the in-doubt tests run against: HubSpot's batch path, ActiveCampaign's
// and GoHighLevel's per-contact paths.
func answerLosingCRMs() map[string]func(t *testing.T, e *syncEnv) crmUnderTest {
	return map[string]func(t *testing.T, e *syncEnv) crmUnderTest{
		"hubspot batch": func(t *testing.T, e *syncEnv) crmUnderTest {
			fake := crmfake.NewHubSpot(crmfake.HSOptions{Options: crmfake.Options{Token: "hs-token"},
				Properties: []string{"last_automation_source", "sync_timestamp", "budget"}})
			t.Cleanup(fake.Close)
			proxy := newAnswerLoser(t, fake.URL, func(r *http.Request) bool {
				return strings.HasSuffix(r.URL.Path, "/batch/update") || strings.HasSuffix(r.URL.Path, "/batch/upsert")
			})
			return crmUnderTest{
				loser: proxy,
				dest: e.addDestination(models.Destination{Kind: "hubspot", BaseURL: proxy.URL, RateLimitRPS: 10, BatchSize: 10,
					Config: models.DestinationConfig{FieldMap: map[string]string{"budget": "budget"}, StageMap: map[string]string{"Discovered": "lead"}}},
					"hs-token"),
				budget: func(email string) string { c, _ := fake.Contact(email); return c.Properties["budget"] },
			}
		},
		"activecampaign per contact": func(t *testing.T, e *syncEnv) crmUnderTest {
			fake := crmfake.NewActiveCampaign(crmfake.ACOptions{Options: crmfake.Options{Token: "ac-token"}, Fields: acFields})
			t.Cleanup(fake.Close)
			proxy := newAnswerLoser(t, fake.URL, func(r *http.Request) bool { return r.Method == http.MethodPut || r.Method == http.MethodPost })
			return crmUnderTest{
				loser: proxy,
				dest: e.addDestination(models.Destination{Kind: "activecampaign", BaseURL: proxy.URL, RateLimitRPS: 10,
					Config: models.DestinationConfig{StageField: "3", FieldMap: map[string]string{"budget": "4"}}}, "ac-token"),
				budget: func(email string) string { c, _ := fake.Contact(email); return c.Fields["4"] },
			}
		},
		"gohighlevel per contact": func(t *testing.T, e *syncEnv) crmUnderTest {
			fake := crmfake.NewGoHighLevel(crmfake.GHLOptions{Options: crmfake.Options{Token: "ghl-token"}, LocationID: "loc-9",
				Fields: []crmfake.GHLField{
					{ID: "cfLoop", Name: "last_automation_source", FieldKey: "contact.last_automation_source"},
					{ID: "cfSync", Name: "sync_timestamp", FieldKey: "contact.sync_timestamp"},
					{ID: "cfBudget", Name: "Budget", FieldKey: "contact.budget"},
				}})
			t.Cleanup(fake.Close)
			proxy := newAnswerLoser(t, fake.URL, func(r *http.Request) bool { return r.Method == http.MethodPut })
			return crmUnderTest{
				loser: proxy,
				dest: e.addDestination(models.Destination{Kind: "gohighlevel", BaseURL: proxy.URL, RateLimitRPS: 10,
					Config: models.DestinationConfig{LocationID: "loc-9", FieldMap: map[string]string{"budget": "contact.budget"}}}, "ghl-token"),
				budget: func(email string) string { c, _ := fake.Contact(email); return c.CustomFields["cfBudget"] },
			}
		},
	}
}

// A write cut off on the wire (a shutdown, a timeout) may still be carried out by the CRM. The next write
// of that contact must take the value it finds there for leadgate's own, not for a person's edit: the
// contact's newer value is written, and no conflict is recorded. That holds for every value of a run of
// failed writes, not only the latest: here the first is carried out and the second never arrives. Before,
// the value found was kept as an "edit" and every later change of the field was lost.
func TestAWriteWhoseAnswerWasLostIsNotTakenForAPersonsEdit(t *testing.T) {
	t.Parallel()
	for name, open := range answerLosingCRMs() {
		t.Run(name, func(t *testing.T) {
			e := newSyncEnv(t)
			f := open(t, e)
			c := e.deliveredWithBudget100(t, f, "lost-answer@example.com")

			// The second write is carried out, and its answer lost: the drain is cut off while it waits.
			e.change(&c, func(c *models.Contact) { c.Fields["budget"] = "200" })
			cutOffDrain(t, e, f.dest, f.loser.arm)
			if got := f.budget(*c.Email); got != "200" {
				t.Fatalf("the CRM holds budget %q after the cut-off write, want 200: the case under test did not happen", got)
			}
			// The third never reaches the CRM: what stands there is the second's value, not the third's.
			e.change(&c, func(c *models.Contact) { c.Fields["budget"] = "250" })
			cutOffDrain(t, e, f.dest, f.loser.armDrop)
			if got := f.budget(*c.Email); got != "200" {
				t.Fatalf("the CRM holds budget %q after the dropped write, want 200: the case under test did not happen", got)
			}

			e.writesItsOwnNewerValue(t, f, &c, "an earlier cut-off write's value was kept as an edit")
			if n := e.count(`SELECT count(*) FROM sync_state WHERE destination_id = ? AND in_doubt IS NOT NULL`, f.dest.ID); n != 0 {
				t.Errorf("%d contacts still hold in-doubt writes after a delivered write, want 0", n)
			}
		})
	}
}

// cutOffDrain drains dest once with the proxy armed by arm, which cuts the drain off at the write.
func cutOffDrain(t *testing.T, e *syncEnv, dest models.Destination, arm func(lost func())) {
	t.Helper()
	if _, err := e.relay.FanOut(e.ctx); err != nil {
		t.Fatal(err)
	}
	ctx, cut := context.WithCancel(e.ctx)
	defer cut()
	arm(cut)
	if _, err := e.relay.Drain(ctx, dest.ID); err == nil {
		t.Fatal("the cut-off drain reported success")
	}
}

// A process killed after the CRM carried a write out, and before leadgate read the answer, records nothing
// after the write. What the write carried was recorded before it was sent, so the next write of the
// contact (after the dead process's lease runs out) takes the value it finds for leadgate's own: the
// newer value is written and no conflict is recorded. Here the killed process is a relay whose Postgres
// connections are cut the moment the CRM has carried the write out.
func TestAWriteCutOffByACrashIsNotTakenForAPersonsEdit(t *testing.T) {
	t.Parallel()
	for name, open := range answerLosingCRMs() {
		t.Run(name, func(t *testing.T) {
			e := newSyncEnv(t)
			f := open(t, e)
			c := e.deliveredWithBudget100(t, f, "killed-mid-write@example.com")

			doomed, pg := e.relayThroughProxy(t, time.Second)
			e.change(&c, func(c *models.Contact) { c.Fields["budget"] = "200" })
			if _, err := e.relay.FanOut(e.ctx); err != nil {
				t.Fatal(err)
			}
			ctx, cut := context.WithCancel(e.ctx)
			defer cut()
			f.loser.arm(func() { pg.Cut(); cut() })
			if _, err := doomed.Drain(ctx, f.dest.ID); err == nil {
				t.Fatal("the killed relay's drain reported success")
			}
			if got := f.budget(*c.Email); got != "200" {
				t.Fatalf("the CRM holds budget %q after the killed write, want 200: the case under test did not happen", got)
			}

			e.writesItsOwnNewerValue(t, f, &c, "the killed write's value was kept as an edit")
		})
	}
}

// relayThroughProxy is a second relay on the test's database whose every Postgres connection runs through
// an in-test proxy: cutting the proxy leaves it unable to record anything, as if the process had died. Its
// lease is short, so the test's own relay takes the work over soon after.
func (e *syncEnv) relayThroughProxy(t *testing.T, lease time.Duration) (*syncer.SyncRelay, *testkit.Proxy) {
	t.Helper()
	u, err := url.Parse(e.dbURL)
	if err != nil {
		t.Fatal(err)
	}
	pg := testkit.NewProxy(t, u.Host)
	u.Host = pg.Addr()
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	store, err := models.Open(e.ctx, u.String(), log)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	conn := &syncer.Connector{Store: store, Box: e.box, Redis: e.rdb, Egress: loopbackEgress()}
	return &syncer.SyncRelay{Store: store, Connector: conn, Log: log, BackoffStart: 100 * time.Millisecond, PassTime: 5 * time.Second,
		Lease: lease}, pg
}

// writesItsOwnNewerValue changes the contact's budget to 300 and drains: the CRM must end up holding 300
// with no conflict recorded, because what it held before was leadgate's own earlier write. why says what
// it means when the old value stays.
func (e *syncEnv) writesItsOwnNewerValue(t *testing.T, f crmUnderTest, c *models.Contact, why string) {
	t.Helper()
	e.change(c, func(c *models.Contact) { c.Fields["budget"] = "300" })
	e.drainAll(f.dest, 20*time.Second)
	if got := f.budget(*c.Email); got != "300" {
		t.Errorf("the CRM holds budget %q, want 300 (%s)", got, why)
	}
	if n := e.count(`SELECT count(*) FROM sync_conflicts WHERE destination_id = ?`, f.dest.ID); n != 0 {
		t.Errorf("%d conflicts recorded, want 0: the value found was leadgate's own", n)
	}
}

// deliveredWithBudget100 is a contact whose budget of 100 the CRM under test holds after a clean write:
// the starting point of every in-doubt case.
func (e *syncEnv) deliveredWithBudget100(t *testing.T, f crmUnderTest, email string) models.Contact {
	t.Helper()
	c := e.contact(email, "Discovered")
	e.change(&c, func(c *models.Contact) { c.Fields["budget"] = "100" })
	e.drainAll(f.dest, 20*time.Second)
	if got := f.budget(*c.Email); got != "100" {
		t.Fatalf("first write: CRM holds budget %q, want 100", got)
	}
	return c
}

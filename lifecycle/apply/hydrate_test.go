package apply_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/leadgate/leadgate/internal/egress"
	"github.com/leadgate/leadgate/internal/secretbox"
	"github.com/leadgate/leadgate/lifecycle/apply"
	"github.com/leadgate/leadgate/lifecycle/hydrate"
	"github.com/leadgate/leadgate/models"
)

// provider is a fake of the Graph API or HubSpot's CRM API that follows their
// published descriptions: it refuses a missing or wrong token the way they do
// and, while down, answers the provider's own transient error.
type provider struct {
	name  string // meta | hubspot
	token string
	down  func() bool // the outage, judged on the test's clock
	calls atomic.Int32
	srv   *httptest.Server
}

func newProvider(t *testing.T, name, token string, down func() bool) *provider {
	p := &provider{name: name, token: token, down: down}
	p.srv = httptest.NewServer(http.HandlerFunc(p.serve))
	t.Cleanup(p.srv.Close)
	return p
}

func (p *provider) serve(w http.ResponseWriter, r *http.Request) {
	p.calls.Add(1)
	w.Header().Set("Content-Type", "application/json")
	if r.Method != http.MethodGet {
		w.WriteHeader(http.StatusMethodNotAllowed)
		return
	}
	if p.name == "meta" {
		p.graph(w, r)
		return
	}
	p.hubspot(w, r)
}

// graph serves GET /{leadgen-id}?access_token=…&fields=… (Graph API "Retrieving
// Leads", developers.facebook.com/docs/marketing-api/guides/lead-ads/retrieving).
func (p *provider) graph(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	switch {
	case p.down():
		// Graph's documented transient error: code 2, is_transient, retry later.
		w.WriteHeader(http.StatusServiceUnavailable)
		_, _ = w.Write([]byte(`{"error":{"message":"An unexpected error has occurred. Please retry your request later.","type":"OAuthException","is_transient":true,"code":2,"fbtrace_id":"AbC"}}`))
	case q.Get("access_token") != p.token:
		w.WriteHeader(http.StatusBadRequest)
		_, _ = w.Write([]byte(`{"error":{"message":"Invalid OAuth access token - Cannot parse access token","type":"OAuthException","code":190,"fbtrace_id":"AbC"}}`))
	case r.URL.Path == "/444169005" && strings.Contains(q.Get("fields"), "field_data"):
		_, _ = w.Write([]byte(`{"created_time":"2026-10-31T08:14:22+0000","id":"444169005","ad_id":"6045","form_id":"1234",
			"field_data":[{"name":"email","values":["Jane.Doe@Example.com"]},{"name":"full_name","values":["Jane Doe"]},
			{"name":"phone_number","values":["+14155550134"]}]}`))
	default:
		w.WriteHeader(http.StatusBadRequest)
		_, _ = w.Write([]byte(`{"error":{"message":"Unsupported get request. Object with ID does not exist","type":"GraphMethodException","code":100,"error_subcode":33}}`))
	}
}

// hubspot serves GET /crm/v3/objects/contacts/{contactId}?properties=… with a
// bearer token (CRM contacts v3, HubSpot's public API spec).
func (p *provider) hubspot(w http.ResponseWriter, r *http.Request) {
	switch {
	case p.down():
		w.WriteHeader(http.StatusServiceUnavailable)
		_, _ = w.Write([]byte(`{"status":"error","message":"Service Unavailable","correlationId":"5f7c","category":"SERVICE_UNAVAILABLE"}`))
	case r.Header.Get("Authorization") != "Bearer "+p.token:
		w.WriteHeader(http.StatusUnauthorized)
		_, _ = w.Write([]byte(`{"status":"error","message":"Authentication credentials not found.","correlationId":"5f7c","category":"INVALID_AUTHENTICATION"}`))
	case r.URL.Path == "/crm/v3/objects/contacts/501":
		_, _ = w.Write([]byte(`{"id":"501","properties":{"email":"bob@example.com","phone":null,"mobilephone":"+14155550199",
			"firstname":"Bob","lastname":"Stone","lifecyclestage":"lead"},"createdAt":"2026-10-01T00:00:00Z","updatedAt":"2026-10-31T08:00:00Z","archived":false}`))
	default:
		w.WriteHeader(http.StatusNotFound)
		_, _ = w.Write([]byte(`{"status":"error","message":"resource not found","correlationId":"5f7c","category":"OBJECT_NOT_FOUND"}`))
	}
}

// target is what ingest stores for this provider's id-only event.
func (p *provider) target() (json.RawMessage, string) {
	if p.name == "meta" {
		return json.RawMessage(`{"Provider":"meta","Object":"leadgen","ID":"444169005"}`), "jane.doe@example.com"
	}
	return json.RawMessage(`{"Provider":"hubspot","Object":"contact","ID":"501"}`), "bob@example.com"
}

// hydrating gives the env's Applier the real hydration client, pointed at p
// with the given token stored as the workspace's credential.
func (e *env) hydrating(p *provider, token string) *secretbox.Box {
	e.t.Helper()
	box, err := secretbox.New("test key")
	if err != nil {
		e.t.Fatal(err)
	}
	e.applier.Hydrator = &hydrate.Service{Store: e.store, Box: box, Egress: egress.Outbound([]string{"127.0.0.1"})}
	e.putToken(box, p, token)
	return box
}

func (e *env) putToken(box *secretbox.Box, p *provider, token string) {
	e.t.Helper()
	sealed, err := box.Seal(token)
	if err != nil {
		e.t.Fatal(err)
	}
	if err := e.store.ProviderCredentialPut(e.ctx, models.ProviderCredential{WorkspaceID: e.ws, Provider: p.name, TokenEnc: sealed, BaseURL: p.srv.URL}); err != nil {
		e.t.Fatal(err)
	}
}

// insertIDOnly stores an id-only event as ingest does: no email, no phone,
// the provider id in hydration.
func (e *env) insertIDOnly(src models.Source, target json.RawMessage, status string, attempts int) string {
	e.t.Helper()
	id := uuid.Must(uuid.NewV7()).String()
	ev := models.Event{ID: id, WorkspaceID: src.WorkspaceID, SourceID: src.ID, EventType: "leadgen", Channel: src.Channel,
		OccurredAt: base, ReceivedAt: time.Now().UTC(), Fields: json.RawMessage(`{}`), Attribution: json.RawMessage(`{}`),
		Hydration: target, Payload: json.RawMessage(`{}`), Status: models.EventPending, ContentType: "application/json"}
	if _, err := e.store.IngestStore(e.ctx, []models.IngestItem{{Event: ev, Key: "k-" + id}}, time.Hour); err != nil {
		e.t.Fatalf("store event: %v", err)
	}
	if status != models.EventPending || attempts > 0 {
		if err := e.store.EventSetOutcome(e.ctx, id, models.EventOutcome{Status: status, Reason: "set by the test", Attempts: attempts}); err != nil {
			e.t.Fatal(err)
		}
	}
	return id
}

// settle applies an event and, while it waits, moves the clock to its next
// attempt, until it is resolved or the clock passes limit.
func (e *env) settle(id string, limit time.Duration) models.Event {
	e.t.Helper()
	start := e.clock.Now()
	for {
		if err := e.applier.Apply(e.ctx, id); err != nil && !errors.As(err, new(*apply.BusyError)) {
			e.t.Fatalf("apply: %v", err)
		}
		ev := e.event(id)
		if ev.Resolved() || e.clock.Now().Sub(start) > limit {
			return ev
		}
		if ev.NextAttemptAt != nil {
			if wait := ev.NextAttemptAt.Sub(e.clock.Now()); wait > 0 {
				e.clock.Advance(wait)
			}
		}
	}
}

func (e *env) openDeadLetters(kind string) []models.DeadLetter {
	e.t.Helper()
	dls, err := e.store.DeadLetterList(e.ctx, models.DeadLetterFilter{WorkspaceID: e.ws, Kind: kind}, models.Page{Limit: 100})
	if err != nil {
		e.t.Fatal(err)
	}
	return dls
}

// crmContacts counts the contacts the CRM would receive: distinct contacts of
// crm_upsert outbox rows, and how many of them have no email and no phone.
func (e *env) crmContacts() (contacts, identityLess int64) {
	e.t.Helper()
	contacts = e.count(`SELECT count(DISTINCT contact_id) FROM outbox WHERE kind = ?`, models.OutboxCRMUpsert)
	identityLess = e.count(`SELECT count(*) FROM contacts WHERE email IS NULL AND phone IS NULL AND merged_into IS NULL`)
	return contacts, identityLess
}

func TestHydrationRidesOutATwoHourProviderOutage(t *testing.T) {
	for _, name := range []string{"meta", "hubspot"} {
		t.Run(name, func(t *testing.T) {
			e := newEnv(t)
			outageEnds := e.clock.Now().Add(2 * time.Hour)
			p := newProvider(t, name, "good-token", func() bool { return e.clock.Now().Before(outageEnds) })
			e.hydrating(p, "good-token")
			src := e.source(e.ws, name+" leads", "paid_social", nil)
			target, email := p.target()
			id := e.insertIDOnly(src, target, models.EventPending, 0)

			ev := e.settle(id, 24*time.Hour)

			if ev.Status != models.EventApplied || ev.Email == nil || *ev.Email != email {
				t.Fatalf("after the outage the event is %s (%s) with email %v; want applied as %s", ev.Status, ev.Reason, ev.Email, email)
			}
			if e.clock.Now().Before(outageEnds) {
				t.Fatalf("applied at %s, inside the outage", e.clock.Now())
			}
			if dls := e.openDeadLetters(""); len(dls) != 0 {
				t.Fatalf("a 2 h outage dead-lettered the lead: %+v", dls)
			}
			if c := e.contactByEmail(e.ws, email); c.ID != *ev.ContactID {
				t.Fatalf("contact %s, event's contact %s", c.ID, *ev.ContactID)
			}
			// Backing off: a handful of fetches over two hours, not one per second.
			if n := p.calls.Load(); n > int32(apply.HydrationAttempts) {
				t.Fatalf("%d fetches during a 2 h outage; the schedule should back off", n)
			}
		})
	}
}

func TestHydrationGivesUpAfterHoursWithMatchingAttemptCounts(t *testing.T) {
	e := newEnv(t)
	p := newProvider(t, "hubspot", "good-token", func() bool { return true })
	e.hydrating(p, "good-token")
	src := e.source(e.ws, "HubSpot", "crm", nil)
	target, _ := p.target()
	id := e.insertIDOnly(src, target, models.EventPending, 0)
	start := e.clock.Now()

	ev := e.settle(id, 48*time.Hour)

	if ev.Status != models.EventQuarantined {
		t.Fatalf("event %s (%s), want quarantined after the provider never came back", ev.Status, ev.Reason)
	}
	if took := e.clock.Now().Sub(start); took < 8*time.Hour {
		t.Fatalf("gave up after %s; an outage of hours must be ridden out", took)
	}
	dls := e.openDeadLetters(apply.KindHydrationFailed)
	if len(dls) != 1 {
		t.Fatalf("%d hydration dead letters, want 1", len(dls))
	}
	want := fmt.Sprintf("gave up after %d attempts", apply.HydrationAttempts)
	if ev.Attempts != apply.HydrationAttempts || dls[0].Attempts != apply.HydrationAttempts ||
		!strings.Contains(ev.Reason, want) || !strings.Contains(dls[0].Reason, want) {
		t.Fatalf("event attempts %d (%q), dead letter attempts %d (%q); both must say %q",
			ev.Attempts, ev.Reason, dls[0].Attempts, dls[0].Reason, want)
	}
	if got := p.calls.Load(); got != int32(apply.HydrationAttempts) {
		t.Fatalf("the provider was asked %d times, the event says %d attempts", got, ev.Attempts)
	}
}

func TestReplayedHydrationDeadLetterFetchesTheLeadAgain(t *testing.T) {
	for _, name := range []string{"meta", "hubspot"} {
		t.Run(name, func(t *testing.T) {
			e := newEnv(t)
			p := newProvider(t, name, "good-token", func() bool { return false })
			box := e.hydrating(p, "revoked-token") // the cause: a token the provider refuses
			src := e.source(e.ws, name+" leads", "paid_social", nil)
			target, email := p.target()
			id := e.insertIDOnly(src, target, models.EventPending, 0)

			if ev := e.settle(id, time.Hour); ev.Status != models.EventQuarantined {
				t.Fatalf("with a refused token the event is %s (%s), want quarantined", ev.Status, ev.Reason)
			}
			dls := e.openDeadLetters(apply.KindHydrationFailed)
			if len(dls) != 1 {
				t.Fatalf("%d hydration dead letters, want 1", len(dls))
			}

			// Replaying before the fix changes nothing and says why.
			_, err := e.applier.ReplayDeadLetter(e.ctx, e.ws, dls[0].ID, apply.ReplayAsIs, "", "ops@example.com")
			var oe *apply.OperatorError
			if !errors.As(err, &oe) || !oe.Conflict || !strings.Contains(oe.Message, "still open") {
				t.Fatalf("replay before the fix: %v, want a conflict saying the dead letter is still open", err)
			}
			if n := len(e.openDeadLetters(apply.KindHydrationFailed)); n != 1 {
				t.Fatalf("%d open dead letters after a failed replay, want the same one", n)
			}
			if c, _ := e.crmContacts(); c != 0 {
				t.Fatalf("a failed replay pushed %d contacts to the CRM", c)
			}

			e.putToken(box, p, "good-token") // the fix
			ev, err := e.applier.ReplayDeadLetter(e.ctx, e.ws, dls[0].ID, apply.ReplayAsIs, "", "ops@example.com")
			if err != nil {
				t.Fatalf("replay after the fix: %v", err)
			}
			if ev.Status != models.EventApplied || ev.Email == nil || *ev.Email != email {
				t.Fatalf("replayed event %s (%s) with email %v, want applied as %s", ev.Status, ev.Reason, ev.Email, email)
			}
			contacts, identityLess := e.crmContacts()
			if contacts != 1 || identityLess != 0 {
				t.Fatalf("the CRM gets %d contacts (%d without identity), want exactly one with its identity", contacts, identityLess)
			}
			if c := e.contactByEmail(e.ws, email); c.ID != *ev.ContactID {
				t.Fatalf("contact %s, event's contact %s", c.ID, *ev.ContactID)
			}
		})
	}
}

func TestNoIdentityLessEventIsEverApplied(t *testing.T) {
	t.Run("an event with neither email, phone nor provider id is rejected, not applied", func(t *testing.T) {
		e := newEnv(t)
		src := e.source(e.ws, "Form", "web_form", map[string]string{"form_submitted": "Engaged"})
		id := e.insert(src, lead{Type: "form_submitted", At: at(0), FirstName: "nobody"})
		e.apply(id)
		if ev := e.event(id); ev.Status != models.EventRejected {
			t.Fatalf("event %s (%s), want rejected", ev.Status, ev.Reason)
		}
		if n := e.count(`SELECT count(*) FROM contacts`); n != 0 {
			t.Fatalf("%d contacts created from an event without identity", n)
		}
	})
	t.Run("a retried id-only event is hydrated before it is applied", func(t *testing.T) {
		e := newEnv(t)
		p := newProvider(t, "meta", "good-token", func() bool { return false })
		e.hydrating(p, "good-token")
		src := e.source(e.ws, "Meta", "paid_social", nil)
		target, email := p.target()
		id := e.insertIDOnly(src, target, models.EventRetrying, 2)
		ev := e.settle(id, time.Hour)
		if ev.Status != models.EventApplied || ev.Email == nil || *ev.Email != email {
			t.Fatalf("event %s (%s) email %v, want applied as %s", ev.Status, ev.Reason, ev.Email, email)
		}
	})
	t.Run("replaying an id-only dead letter without a provider client applies nothing", func(t *testing.T) {
		e := newEnv(t)
		p := newProvider(t, "meta", "good-token", func() bool { return false })
		e.hydrating(p, "revoked-token")
		src := e.source(e.ws, "Meta", "paid_social", nil)
		target, _ := p.target()
		id := e.insertIDOnly(src, target, models.EventPending, 0)
		e.settle(id, time.Hour)
		dls := e.openDeadLetters(apply.KindHydrationFailed)
		if len(dls) != 1 {
			t.Fatalf("%d hydration dead letters, want 1", len(dls))
		}
		e.applier.Hydrator = nil
		for _, mode := range []apply.ReplayMode{apply.ReplayAsIs, apply.ReplayKeepStage, apply.ReplayForceStage} {
			if _, err := e.applier.ReplayDeadLetter(e.ctx, e.ws, dls[0].ID, mode, "SQL", "ops@example.com"); err == nil {
				t.Fatalf("replay %s of an id-only event with nothing to fetch it succeeded", mode)
			}
		}
		if ev := e.event(id); ev.Status != models.EventQuarantined {
			t.Fatalf("event %s after refused replays, want still quarantined", ev.Status)
		}
		if c, none := e.crmContacts(); c != 0 || none != 0 {
			t.Fatalf("%d CRM contacts, %d without identity; want none", c, none)
		}
	})
	t.Run("a provider lead without email or phone is rejected", func(t *testing.T) {
		e := newEnv(t)
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			_, _ = w.Write([]byte(`{"id":"501","properties":{"email":null,"phone":null,"mobilephone":null,"firstname":"Anon"},"archived":false}`))
		}))
		t.Cleanup(srv.Close)
		p := &provider{name: "hubspot", srv: srv}
		e.hydrating(p, "any")
		src := e.source(e.ws, "HubSpot", "crm", nil)
		target, _ := p.target()
		id := e.insertIDOnly(src, target, models.EventPending, 0)
		if ev := e.settle(id, time.Hour); ev.Status != models.EventRejected {
			t.Fatalf("event %s (%s), want rejected", ev.Status, ev.Reason)
		}
		if n := e.count(`SELECT count(*) FROM contacts`); n != 0 {
			t.Fatalf("%d contacts from a lead without identity", n)
		}
	})
	t.Run("a Meta lead whose form asked for neither email nor phone is rejected, not dead-lettered", func(t *testing.T) {
		e := newEnv(t)
		// Graph's lead object ("Retrieving Leads") for a form without contact questions.
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			_, _ = w.Write([]byte(`{"created_time":"2026-10-31T08:14:22+0000","id":"444169005","ad_id":"6045","form_id":"1234",
				"field_data":[{"name":"full_name","values":["Jane Doe"]},{"name":"favourite_colour","values":["blue"]}]}`))
		}))
		t.Cleanup(srv.Close)
		p := &provider{name: "meta", srv: srv}
		e.hydrating(p, "any")
		src := e.source(e.ws, "Meta", "paid_social", nil)
		target, _ := p.target()
		id := e.insertIDOnly(src, target, models.EventPending, 0)
		ev := e.settle(id, time.Hour)
		if ev.Status != models.EventRejected || !strings.Contains(ev.Reason, "no usable email or phone") {
			t.Fatalf("event %s (%s), want rejected for having no email or phone", ev.Status, ev.Reason)
		}
		if n := e.count(`SELECT count(*) FROM dead_letters WHERE event_id = ?`, id); n != 0 {
			t.Fatalf("%d dead letters for a lead that has no identity; a replay could not give it one", n)
		}
		if n := e.count(`SELECT count(*) FROM contacts`); n != 0 {
			t.Fatalf("%d contacts from a lead without identity", n)
		}
	})
	t.Run("the database refuses to mark an un-hydrated id-only event applied", func(t *testing.T) {
		e := newEnv(t)
		src := e.source(e.ws, "Meta", "paid_social", nil)
		id := e.insertIDOnly(src, json.RawMessage(`{"Provider":"meta","Object":"leadgen","ID":"1"}`), models.EventPending, 0)
		for _, status := range []string{models.EventApplied, models.EventUnchanged} {
			err := e.store.EventSetOutcome(e.ctx, id, models.EventOutcome{Status: status})
			if err == nil || !strings.Contains(err.Error(), "events_applied_with_identity") {
				t.Fatalf("marking it %s: %v, want the events_applied_with_identity check to refuse", status, err)
			}
		}
	})
}

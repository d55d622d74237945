package syncer_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/leadgate/leadgate/crm/crmfake"
	"github.com/leadgate/leadgate/crm/syncer"
	"github.com/leadgate/leadgate/jobs"
	"github.com/leadgate/leadgate/models"
)

// probe is the scheduler's pause probe over the test's connector, with an optional clock.
func (e *syncEnv) probe(now func() time.Time) *syncer.PauseProbe {
	return &syncer.PauseProbe{Store: e.store, Connector: e.conn, Log: slog.New(slog.NewTextHandler(io.Discard, nil)), Now: now}
}

func (e *syncEnv) destination(id int64) models.Destination {
	e.t.Helper()
	d, err := e.store.DestinationByID(e.ctx, id)
	if err != nil {
		e.t.Fatal(err)
	}
	return d
}

func (e *syncEnv) alerts() int64 {
	return e.count(`SELECT count(*) FROM outbox WHERE workspace_id = ? AND kind = 'alert'`, e.ws.ID)
}

func (e *syncEnv) deadLetters() int64 {
	return e.count(`SELECT count(*) FROM dead_letters WHERE workspace_id = ?`, e.ws.ID)
}

// halfConfiguredAC is an ActiveCampaign account that has the sync-timestamp, stage and budget fields but
// not the loop-breaker field last_automation_source.
func halfConfiguredAC() *crmfake.ActiveCampaign {
	return crmfake.NewActiveCampaign(crmfake.ACOptions{Options: crmfake.Options{Token: "ac-token"}, Fields: []crmfake.ACField{
		{ID: "2", Title: "Sync timestamp", Perstag: "SYNC_TIMESTAMP"},
		{ID: "3", Title: "Lifecycle stage", Perstag: "STAGE"},
		{ID: "4", Title: "Budget", Perstag: "BUDGET"},
	}})
}

// A half-configured ActiveCampaign account (one loop-breaker field missing) with 300 contacts racing in
// through several stages each, written concurrently while the relay and the pause probe run: no dead
// letter, the destination paused with a reason naming the field, one alert. After the loop-fields action
// (the one the API and the UI call) every contact reaches the CRM once, at its highest stage, with no
// replay by hand.
func TestHalfConfiguredActiveCampaignPausesThenDeliversEveryContactOnceAfterLoopFields(t *testing.T) {
	t.Parallel()
	e := newSyncEnv(t)
	fake := halfConfiguredAC()
	defer fake.Close()
	d := e.acDestination(fake, 200)
	stages := []string{"Discovered", "Engaged", "MQL", "SQL", "Customer"}
	const contacts, writers = 300, 6

	ctx, stop := context.WithCancel(e.ctx)
	var bg sync.WaitGroup
	bg.Add(2)
	go func() { // the sync tick's work: fan out and drain while contacts arrive
		defer bg.Done()
		for ctx.Err() == nil {
			_, _ = e.relay.FanOut(ctx)
			_, _ = e.relay.Drain(ctx, d.ID)
			time.Sleep(10 * time.Millisecond)
		}
	}()
	probe := e.probe(nil)
	go func() { // the scheduler's probe: it must not resume while the field is missing
		defer bg.Done()
		for ctx.Err() == nil {
			if _, err := probe.Run(ctx); err != nil && ctx.Err() == nil {
				t.Errorf("probe: %v", err)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}()
	final := make([]models.Contact, contacts)
	var wg sync.WaitGroup
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(uint64(w), 9))
			for i := w; i < contacts; i += writers {
				c := e.contact(emailN(i), stages[0])
				for s := 1; s <= 1+rng.IntN(len(stages)-1); s++ { // 2 to 5 stages per contact
					e.change(&c, func(c *models.Contact) { c.Stage = stages[s]; c.Fields["budget"] = fmt.Sprint(s) })
				}
				final[i] = c
			}
		}()
	}
	wg.Wait()
	// The relay and the probe see the last changes: every contact queued (and held), the destination paused.
	for deadline := time.Now().Add(20 * time.Second); (e.pending(d) < contacts || !e.destination(d.ID).Paused) && time.Now().Before(deadline); {
		time.Sleep(20 * time.Millisecond)
	}
	stop()
	bg.Wait()

	got := e.destination(d.ID)
	if !got.Paused || got.PauseCause != models.PauseSetup || !strings.Contains(got.PausedReason, "last_automation_source") ||
		!strings.Contains(got.PausedReason, "loop-fields") {
		t.Fatalf("paused %v cause %q reason %q; want a setup pause naming last_automation_source and loop-fields", got.Paused, got.PauseCause, got.PausedReason)
	}
	if dl := e.deadLetters(); dl != 0 {
		t.Errorf("dead letters = %d, want 0", dl)
	}
	if a := e.alerts(); a != 1 {
		t.Errorf("alerts = %d, want exactly 1", a)
	}
	if n := len(fake.Mutations()); n != 0 {
		t.Errorf("contact writes while the field is missing = %d, want 0", n)
	}
	if held := e.pending(d); held != contacts {
		t.Errorf("held contacts = %d, want %d", held, contacts)
	}
	if f := e.count(`SELECT failures_total FROM destinations WHERE id = ?`, d.ID); f != 0 {
		t.Errorf("failures counted = %d, want 0 (held work is no failure)", f)
	}

	a, err := e.conn.Adapter(e.ctx, got)
	if err != nil {
		t.Fatal(err)
	}
	fix, err := syncer.FixDestinationSetup(e.ctx, e.store, got, a, "ops@example.com", true)
	if err != nil {
		t.Fatal(err)
	}
	if !fix.Resumed || len(fix.Created) != 1 || fix.Created[0] != "last_automation_source" {
		t.Fatalf("fix: created %v resumed %v missing %v; want last_automation_source created and the destination resumed", fix.Created, fix.Resumed, fix.Report.Missing)
	}
	if n := e.count(`SELECT count(*) FROM audit_log WHERE action = 'destination.loop_fields.create' AND actor = 'ops@example.com' AND subject_id = ?`,
		fmt.Sprint(d.ID)); n != 1 {
		t.Errorf("audit entries of the field creation = %d, want 1", n)
	}
	e.drainAll(d, 3*time.Minute)

	if dl := e.deadLetters(); dl != 0 {
		t.Errorf("dead letters after resume = %d, want 0", dl)
	}
	if a := e.alerts(); a != 1 {
		t.Errorf("alerts after resume = %d, want still 1", a)
	}
	if n := len(fake.Contacts()); n != contacts || fake.DuplicateEmails() != 0 {
		t.Fatalf("CRM holds %d contacts (%d duplicate emails), want %d", n, fake.DuplicateEmails(), contacts)
	}
	writes := map[string]int{}
	for _, m := range fake.Mutations() {
		writes[m.ContactID]++
	}
	for i, c := range final {
		rc, ok := fake.Contact(emailN(i))
		if !ok {
			t.Fatalf("contact %s missing from the CRM", emailN(i))
		}
		if rc.Fields["3"] != c.Stage {
			t.Errorf("%s: CRM stage %q, want its highest stage %q", emailN(i), rc.Fields["3"], c.Stage)
		}
		if writes[rc.ID] != 1 {
			t.Errorf("%s: %d writes, want exactly 1", emailN(i), writes[rc.ID])
		}
	}
}

// A spent HubSpot daily quota pauses the destination until the reset (paused_until), holds the work with no
// failure and one alert; the probe leaves it paused before the reset and resumes it after, and the held
// contacts are written.
func TestDailyQuotaPausesUntilResetThenProbeResumes(t *testing.T) {
	t.Parallel()
	e := newSyncEnv(t)
	var mu sync.Mutex
	clock := time.Now()
	now := func() time.Time { mu.Lock(); defer mu.Unlock(); return clock }
	fake := crmfake.NewHubSpot(crmfake.HSOptions{Options: crmfake.Options{Token: "hs-token"}, DailyLimit: 10, Now: now,
		Properties: []string{"last_automation_source", "sync_timestamp", "budget"}})
	defer fake.Close()
	d := e.addDestination(models.Destination{Kind: "hubspot", BaseURL: fake.URL, RateLimitRPS: 100, BatchSize: 100,
		Config: models.DestinationConfig{FieldMap: map[string]string{"budget": "budget"}, StageMap: map[string]string{"Discovered": "lead"}}}, "hs-token")
	e.relay.Now = now
	a, err := e.conn.Adapter(e.ctx, d)
	if err != nil {
		t.Fatal(err)
	}
	for range 10 { // the day's requests are spent before the contacts arrive
		_ = a.TestConnection(e.ctx)
	}
	const n = 5
	for i := range n {
		e.contact(emailN(i), "Discovered")
	}
	for range 3 {
		e.pass(d)
	}
	got := e.destination(d.ID)
	if !got.Paused || got.PauseCause != models.PauseQuota || got.PausedUntil == nil || !got.PausedUntil.After(clock) {
		t.Fatalf("paused %v cause %q until %v; want a quota pause until after %v", got.Paused, got.PauseCause, got.PausedUntil, clock)
	}
	if !strings.Contains(got.PausedReason, "quota") {
		t.Errorf("reason %q does not say the quota is used up", got.PausedReason)
	}
	if dl, al := e.deadLetters(), e.alerts(); dl != 0 || al != 1 {
		t.Errorf("dead letters %d, alerts %d; want 0 and 1", dl, al)
	}
	if held := e.pending(d); held != n {
		t.Errorf("held = %d, want %d", held, n)
	}
	probe := e.probe(now)
	if k, err := probe.Run(e.ctx); err != nil || k != 0 {
		t.Fatalf("probe before the reset resumed %d (%v), want 0", k, err)
	}
	mu.Lock()
	clock = clock.Add(25 * time.Hour) // past paused_until, and the fake account's next day
	mu.Unlock()
	if k, err := probe.Run(e.ctx); err != nil || k != 1 {
		t.Fatalf("probe after the reset resumed %d (%v), want 1", k, err)
	}
	if got := e.destination(d.ID); got.Paused || got.PauseCause != "" || got.PausedUntil != nil {
		t.Fatalf("after resume: paused %v cause %q until %v", got.Paused, got.PauseCause, got.PausedUntil)
	}
	e.drainAll(d, time.Minute)
	if c := len(fake.Contacts()); c != n {
		t.Errorf("CRM holds %d contacts, want %d", c, n)
	}
	if dl := e.deadLetters(); dl != 0 {
		t.Errorf("dead letters = %d, want 0", dl)
	}
}

// Refused credentials pause the destination; the probe keeps it paused while the CRM refuses them and
// resumes it once an authenticated read passes, and the held work drains.
func TestAuthPauseResumesByItselfOnceCredentialsWork(t *testing.T) {
	t.Parallel()
	e := newSyncEnv(t)
	fake := crmfake.NewActiveCampaign(crmfake.ACOptions{Options: crmfake.Options{Token: "ac-token"}, Fields: acFields})
	defer fake.Close()
	d := e.acDestination(fake, 50)
	fake.SetAuthFailure(http.StatusUnauthorized)
	for i := range 4 {
		e.contact(emailN(i), "Discovered")
	}
	e.pass(d)
	got := e.destination(d.ID)
	if !got.Paused || got.PauseCause != models.PauseAuth {
		t.Fatalf("paused %v cause %q; want an auth pause", got.Paused, got.PauseCause)
	}
	probe := e.probe(nil)
	if k, err := probe.Run(e.ctx); err != nil || k != 0 {
		t.Fatalf("probe while refused resumed %d (%v), want 0", k, err)
	}
	fake.SetAuthFailure(0)
	if k, err := probe.Run(e.ctx); err != nil || k != 1 {
		t.Fatalf("probe once credentials work resumed %d (%v), want 1", k, err)
	}
	e.drainAll(d, 30*time.Second)
	if c := len(fake.Contacts()); c != 4 || e.deadLetters() != 0 || e.alerts() != 1 {
		t.Errorf("CRM holds %d contacts, %d dead letters, %d alerts; want 4, 0, 1", c, e.deadLetters(), e.alerts())
	}
}

// An operator's pause is never resumed by the probe: neither a pause of a healthy destination nor one
// placed over a system pause whose fault is then fixed.
func TestOperatorPauseIsNeverResumedByTheProbe(t *testing.T) {
	t.Parallel()
	e := newSyncEnv(t)
	healthy := crmfake.NewActiveCampaign(crmfake.ACOptions{Options: crmfake.Options{Token: "ac-token"}, Fields: acFields})
	defer healthy.Close()
	d1 := e.acDestination(healthy, 50)
	if err := e.store.DestinationPauseByOperator(e.ctx, d1.ID, "paused by ops@example.com"); err != nil {
		t.Fatal(err)
	}
	half := halfConfiguredAC()
	defer half.Close()
	d2 := e.acDestination(half, 50)
	e.contact(emailN(1), "Discovered")
	e.pass(d2)
	if got := e.destination(d2.ID); !got.Paused || got.PauseCause != models.PauseSetup {
		t.Fatalf("d2 paused %v cause %q; want a setup pause", got.Paused, got.PauseCause)
	}
	if err := e.store.DestinationPauseByOperator(e.ctx, d2.ID, "paused by ops@example.com"); err != nil {
		t.Fatal(err)
	}
	half.AddField(crmfake.ACField{Title: "Last automation source", Perstag: "LAST_AUTOMATION_SOURCE"}) // fixed by hand
	probe := e.probe(nil)
	for range 3 {
		if k, err := probe.Run(e.ctx); err != nil || k != 0 {
			t.Fatalf("probe resumed %d (%v), want 0", k, err)
		}
	}
	for _, id := range []int64{d1.ID, d2.ID} {
		if got := e.destination(id); !got.Paused || got.PauseCause != models.PauseOperator {
			t.Errorf("destination %d: paused %v cause %q; want the operator's pause kept", id, got.Paused, got.PauseCause)
		}
	}
	if n := len(half.Mutations()); n != 0 {
		t.Errorf("writes while paused by the operator = %d, want 0", n)
	}
}

// A custom field deleted from the account after the adapter read the field list: the write is refused
// (422 "Field N does not exist") and the destination pauses for its setup instead of dead-lettering the
// contact as an invalid mapping.
func TestDeletedFieldPausesTheDestinationNotTheContact(t *testing.T) {
	t.Parallel()
	e := newSyncEnv(t)
	fake := crmfake.NewActiveCampaign(crmfake.ACOptions{Options: crmfake.Options{Token: "ac-token"}, Fields: acFields})
	defer fake.Close()
	d := e.acDestination(fake, 50)
	e.contact(emailN(0), "Discovered")
	e.drainAll(d, 20*time.Second) // the adapter now holds the field list
	fake.RemoveField("4")         // budget, mapped
	c := e.contact(emailN(1), "Discovered")
	e.change(&c, func(c *models.Contact) { c.Fields["budget"] = "900" })
	for range 2 {
		e.pass(d)
	}
	got := e.destination(d.ID)
	if !got.Paused || got.PauseCause != models.PauseSetup {
		t.Fatalf("paused %v cause %q reason %q; want a setup pause", got.Paused, got.PauseCause, got.PausedReason)
	}
	if dl := e.deadLetters(); dl != 0 {
		t.Errorf("dead letters = %d, want 0", dl)
	}
}

// The scheduler's timetable runs the pause probe often enough that a fixed destination resumes within
// 60 s (one period plus one probe of at most 20 s).
func TestPauseProbeIsScheduledWithinAMinute(t *testing.T) {
	t.Parallel()
	for _, p := range jobs.DefaultPeriodic() {
		if p.Task().Type() != jobs.TypeSyncProbePaused {
			continue
		}
		every, err := time.ParseDuration(strings.TrimPrefix(p.Spec, "@every "))
		if err != nil || every+20*time.Second > 60*time.Second {
			t.Fatalf("pause probe every %q; want a period that leaves room for a 20 s probe within 60 s", p.Spec)
		}
		return
	}
	t.Fatal("the scheduler does not run the pause probe")
}

// A fault the probe's check cannot see (a phone-only lead while allow_null_email is off: the field check
// passes) is resumed once, and when it pauses again right away it raises no second alert and waits
// FaultRepeatWindow before the next probe, instead of alerting every 15 s.
func TestFaultTheProbeCannotSeePausesAgainWithoutASecondAlert(t *testing.T) {
	t.Parallel()
	e := newSyncEnv(t)
	fake := crmfake.NewActiveCampaign(crmfake.ACOptions{Options: crmfake.Options{Token: "ac-token"}, Fields: acFields})
	defer fake.Close()
	d := e.acDestination(fake, 50)
	phone := "+14155550134"
	now := time.Now().UTC()
	c := models.Contact{ID: uuid.NewString(), WorkspaceID: e.ws.ID, Phone: &phone, Stage: "Discovered", Fields: map[string]string{},
		FirstTouch: map[string]string{}, Tags: []string{}, ScoreBreakdown: json.RawMessage("[]"), FirstSeenAt: now, LastActivityAt: now, Version: 1}
	if err := e.store.ContactCreate(e.ctx, &c); err != nil {
		t.Fatal(err)
	}
	e.intent(c)
	e.pass(d)
	if got := e.destination(d.ID); !got.Paused || got.PauseCause != models.PauseSetup || !strings.Contains(got.PausedReason, "allow_null_email") {
		t.Fatalf("paused %v cause %q reason %q; want a setup pause naming allow_null_email", got.Paused, got.PauseCause, got.PausedReason)
	}
	probe := e.probe(nil)
	if k, err := probe.Run(e.ctx); err != nil || k != 1 {
		t.Fatalf("first probe resumed %d (%v), want 1 (its check passes)", k, err)
	}
	e.pass(d)
	got := e.destination(d.ID)
	if !got.Paused || got.PausedUntil == nil || got.PausedUntil.Before(time.Now().Add(models.FaultRepeatWindow-time.Minute)) {
		t.Fatalf("paused %v until %v; want paused again with a back-off of %s", got.Paused, got.PausedUntil, models.FaultRepeatWindow)
	}
	if k, err := probe.Run(e.ctx); err != nil || k != 0 {
		t.Errorf("probe during the back-off resumed %d (%v), want 0", k, err)
	}
	if a := e.alerts(); a != 1 {
		t.Errorf("alerts = %d, want 1", a)
	}
	if dl := e.deadLetters(); dl != 0 {
		t.Errorf("dead letters = %d, want 0", dl)
	}
}

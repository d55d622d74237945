package apply_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/leadgate/leadgate/lifecycle"
	"github.com/leadgate/leadgate/lifecycle/apply"
	"github.com/leadgate/leadgate/models"
)

// waitRetry applies an event that must come back as "retry later" and
// returns the delay it asked for.
func (e *env) waitRetry(id string) time.Duration {
	e.t.Helper()
	err := e.applier.Apply(e.ctx, id)
	var busy *apply.BusyError
	if !errors.As(err, &busy) || busy.Why == "" {
		e.t.Fatalf("apply %s = %v, want a retry-later answer", id, err)
	}
	return busy.Delay
}

// TestWaitingForContact: an event type that requires an existing contact
// waits (1.5 s, then backoff from 2 s) and applies once the contact appears;
// if it never appears it becomes a missing_contact dead letter after the
// configured attempts. The clock is moved instead of sleeping.
func TestWaitingForContact(t *testing.T) {
	e := newEnv(t)
	rules := lifecycle.DefaultRules()
	rules.RequiresContact = []string{"payment_succeeded"}
	e.saveRules(e.ws, rules)
	stripe := e.source(e.ws, "Stripe", "payments", map[string]string{"payment_succeeded": "Closed"})
	form := e.source(e.ws, "Web form", "web_form", map[string]string{"form_submitted": "Discovered"})

	t.Run("AppliesOnceTheContactAppears", func(t *testing.T) {
		const who = "payer@example.com"
		pay := e.insert(stripe, lead{Type: "payment_succeeded", At: at(100), Email: who, Fields: map[string]any{"amount": "99"}})
		if d := e.waitRetry(pay); d != 1500*time.Millisecond {
			t.Errorf("first wait = %s, want 1.5s", d)
		}
		ev := e.event(pay)
		if ev.Status != models.EventWaiting || ev.Attempts != 1 || ev.NextAttemptAt == nil {
			t.Fatalf("payment = %s attempts=%d next=%v, want waiting/1/set", ev.Status, ev.Attempts, ev.NextAttemptAt)
		}
		// Its task firing early is told to come back; no attempt is used up.
		if d := e.waitRetry(pay); d <= 0 || d > 1500*time.Millisecond {
			t.Errorf("early retry delay = %s, want (0, 1.5s]", d)
		}
		if got := e.event(pay).Attempts; got != 1 {
			t.Errorf("attempts after an early run = %d, want 1", got)
		}
		e.apply(e.insert(form, lead{Type: "form_submitted", At: at(90), Email: who}))
		if got := e.event(pay).Status; got != models.EventWaiting {
			t.Errorf("payment = %s before its retry time, want still waiting", got)
		}
		e.clock.Advance(2 * time.Second)
		e.apply(pay)
		ev = e.event(pay)
		c := e.contactByEmail(e.ws, who)
		if ev.Status != models.EventApplied || ev.ContactID == nil || *ev.ContactID != c.ID {
			t.Fatalf("payment = %s (%s) contact=%v, want applied to %s", ev.Status, ev.Reason, ev.ContactID, c.ID)
		}
		if c.Stage != "Closed" || c.Fields["amount"] != "99" {
			t.Errorf("contact stage=%s amount=%q, want Closed/99", c.Stage, c.Fields["amount"])
		}
		if n := e.count(`SELECT count(*) FROM dead_letters WHERE event_id = ?`, pay); n != 0 {
			t.Errorf("dead letters for the payment = %d, want 0", n)
		}
	})

	t.Run("DeadLetteredAfterConfiguredAttempts", func(t *testing.T) {
		e.applier.WaitAttempts = 3
		defer func() { e.applier.WaitAttempts = 0 }()
		pay := e.insert(stripe, lead{Type: "payment_succeeded", At: at(200), Email: "ghost@example.com"})
		var delays []time.Duration
		for range 3 {
			d := e.waitRetry(pay)
			delays = append(delays, d)
			e.clock.Advance(d + 10*time.Millisecond)
		}
		want := []time.Duration{1500 * time.Millisecond, 2 * time.Second, 4 * time.Second}
		for i := range want {
			if delays[i] != want[i] {
				t.Errorf("delays = %v, want %v", delays, want)
				break
			}
		}
		e.apply(pay)
		ev := e.event(pay)
		if ev.Status != models.EventQuarantined {
			t.Fatalf("payment = %s, want quarantined after 3 waits", ev.Status)
		}
		dls, err := e.store.DeadLetterList(e.ctx, models.DeadLetterFilter{WorkspaceID: e.ws, Kind: lifecycle.KindMissingContact}, models.Page{Limit: 10})
		if err != nil {
			t.Fatal(err)
		}
		if len(dls) != 1 || dls[0].EventID == nil || *dls[0].EventID != pay || !strings.Contains(dls[0].Reason, "requires an existing contact") ||
			!strings.Contains(dls[0].Reason, "3 attempts") {
			t.Fatalf("dead letters = %+v, want one missing_contact for the payment with its reason", dls)
		}
		if n := e.count(`SELECT count(*) FROM outbox WHERE kind = 'alert' AND payload->>'event_id' = ?`, pay); n != 1 {
			t.Errorf("alert rows = %d, want 1", n)
		}
		if n := e.count(`SELECT count(*) FROM contacts WHERE email = 'ghost@example.com'`); n != 0 {
			t.Errorf("a waiting event created %d contacts", n)
		}
	})
}

// TestPoisonedEvent: an event whose apply fails every time (its source is
// not in its workspace) retries with backoff from 2 s, never blocks its
// contact's later events, and is dead-lettered after PoisonAttempts.
func TestPoisonedEvent(t *testing.T) {
	e := newEnv(t)
	form := e.source(e.ws, "Web form", "web_form", map[string]string{"form_submitted": "Discovered", "demo_booked": "SQL"})
	other := e.source(e.workspace("elsewhere"), "Foreign", "web_form", nil)
	const who = "poison@example.com"

	poisoned := e.insert(form, lead{Type: "form_submitted", At: at(10), Email: who})
	// Point it at a source of another workspace: every run fails to load it.
	if err := e.store.DB().Exec(`UPDATE events SET source_id = ? WHERE id = ?`, other.ID, poisoned).Error; err != nil {
		t.Fatal(err)
	}
	later := e.insert(form, lead{Type: "form_submitted", At: at(20), Email: who, Fields: map[string]any{"budget": "5k"}})

	// The later event's run meets the older poisoned one first in the
	// contact's batch; the failure stays in its savepoint.
	e.apply(later)
	if got := e.event(later).Status; got != models.EventApplied {
		t.Fatalf("later event = %s, want applied despite the poisoned peer", got)
	}

	var delays []time.Duration
	for attempt := 1; ; attempt++ {
		err := e.applier.Apply(e.ctx, poisoned)
		if err == nil {
			break
		}
		var failed *apply.FailedError
		if !errors.As(err, &failed) {
			t.Fatalf("attempt %d: %v, want a FailedError", attempt, err)
		}
		delays = append(delays, failed.Delay)
		if attempt > 10 {
			t.Fatal("never dead-lettered")
		}
		e.clock.Advance(failed.Delay)
	}
	want := []time.Duration{2 * time.Second, 4 * time.Second, 8 * time.Second, 16 * time.Second}
	if len(delays) != len(want) {
		t.Fatalf("retry delays = %v, want %v (5 attempts)", delays, want)
	}
	for i := range want {
		if delays[i] != want[i] {
			t.Errorf("retry delays = %v, want %v", delays, want)
		}
	}
	ev := e.event(poisoned)
	if ev.Status != models.EventQuarantined || ev.Attempts != 5 {
		t.Errorf("poisoned event = %s attempts=%d, want quarantined/5", ev.Status, ev.Attempts)
	}
	dls, err := e.store.DeadLetterList(e.ctx, models.DeadLetterFilter{WorkspaceID: e.ws, Kind: "apply_failed"}, models.Page{Limit: 10})
	if err != nil {
		t.Fatal(err)
	}
	if len(dls) != 1 || !strings.Contains(dls[0].Reason, "apply failed 5 times") || dls[0].Attempts != 5 {
		t.Fatalf("dead letters = %+v, want one apply_failed after 5 attempts", dls)
	}
	if n := e.count(`SELECT count(*) FROM outbox WHERE kind = 'alert' AND payload->>'event_id' = ?`, poisoned); n != 1 {
		t.Errorf("alert rows = %d, want 1", n)
	}

	// The contact keeps moving.
	next := e.insert(form, lead{Type: "demo_booked", At: at(30), Email: who})
	e.apply(next)
	if c := e.contactByEmail(e.ws, who); c.Stage != "SQL" {
		t.Errorf("stage = %s after the next event, want SQL", c.Stage)
	}
	// A stray task for the dead-lettered event changes nothing.
	if err := e.applier.Apply(e.ctx, poisoned); err != nil {
		t.Errorf("re-run of the dead-lettered event: %v", err)
	}
	if n := e.count(`SELECT count(*) FROM dead_letters WHERE event_id = ?`, poisoned); n != 1 {
		t.Errorf("dead letters for the poisoned event = %d, want 1", n)
	}
}

package apply_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/leadgate/leadgate/internal/testkit"
	"github.com/leadgate/leadgate/lifecycle/apply"
	"github.com/leadgate/leadgate/models"
)

// holdIdentity takes the advisory lock another worker would hold while applying the person behind an
// email, until the returned release is called.
func (e *env) holdIdentity(ws int64, email string) (release func()) {
	e.t.Helper()
	db, err := e.store.SQL()
	if err != nil {
		e.t.Fatal(err)
	}
	conn, err := db.Conn(e.ctx)
	if err != nil {
		e.t.Fatal(err)
	}
	key := fmt.Sprintf("lg:%d:e:%s", ws, email)
	if _, err := conn.ExecContext(e.ctx, `SELECT pg_advisory_lock(hashtextextended($1, 0))`, key); err != nil {
		e.t.Fatal(err)
	}
	return func() {
		_, _ = conn.ExecContext(e.ctx, `SELECT pg_advisory_unlock(hashtextextended($1, 0))`, key)
		_ = conn.Close()
	}
}

// TestABatchLeavesAHeldContactForALaterBatch: a batch never waits for a contact another worker holds;
// it applies the others and leaves that contact's events pending, and the next batch applies them.
func TestABatchLeavesAHeldContactForALaterBatch(t *testing.T) {
	e := newEnv(t)
	form := e.source(e.ws, "Web form", "web_form", map[string]string{"form_submitted": "Discovered"})
	held := e.insert(form, lead{Type: "form_submitted", At: at(1), Email: "held@example.com"})
	free := e.insert(form, lead{Type: "form_submitted", At: at(2), Email: "free@example.com"})

	release := e.holdIdentity(e.ws, "held@example.com")
	claimed, deferred, err := e.applier.ApplyBatch(e.ctx, 100)
	if err != nil {
		t.Fatal(err)
	}
	if claimed != 2 || deferred != 1 {
		t.Errorf("batch claimed %d and deferred %d, want 2 and 1", claimed, deferred)
	}
	if got := e.event(free).Status; got != models.EventApplied {
		t.Errorf("the free contact's event is %s, want applied", got)
	}
	if got := e.event(held).Status; got != models.EventPending {
		t.Errorf("the held contact's event is %s, want still pending", got)
	}
	release()
	if _, _, err := e.applier.ApplyBatch(e.ctx, 100); err != nil {
		t.Fatal(err)
	}
	if got := e.event(held).Status; got != models.EventApplied {
		t.Errorf("after the release the held contact's event is %s, want applied", got)
	}
}

// TestABatchAppliesAContactsBacklogInOrder: a batch that claims one event of a person also takes the
// person's other pending events (reached through the contact's email and phone) and applies them in the
// order they happened, whatever order they arrived in: the newest stage wins, and an older event that
// arrives last is a late arrival, not a regression.
func TestABatchAppliesAContactsBacklogInOrder(t *testing.T) {
	e := newEnv(t)
	form := e.source(e.ws, "Web form", "web_form", map[string]string{"form_submitted": "Discovered"})
	mail := e.source(e.ws, "Mail", "cold_email", map[string]string{"email_replied": "Engaged"})
	voice := e.source(e.ws, "Voice", "voice", map[string]string{"call_completed": "SQL"})
	const who, phone = "order@example.com", "+14155550199"
	e.apply(e.insert(form, lead{Type: "form_submitted", At: at(10), Email: who, Phone: phone}))

	// Arrivals: the call (phone only) first, then the reply (email only), which happened before it.
	call := e.insert(voice, lead{Type: "call_completed", At: at(30), Phone: phone})
	reply := e.insert(mail, lead{Type: "email_replied", At: at(20), Email: who})
	claimed, _, err := e.applier.ApplyBatch(e.ctx, 1) // claims the call only
	if err != nil || claimed != 1 {
		t.Fatalf("ApplyBatch = %d, %v; want one claimed", claimed, err)
	}
	for _, id := range []string{call, reply} {
		if ev := e.event(id); ev.Status != models.EventApplied {
			t.Errorf("event %s = %s (%s), want applied in the same batch", id, ev.Status, ev.Reason)
		}
	}
	c := e.contactByEmail(e.ws, who)
	hist, err := e.store.StageHistoryForContact(e.ctx, c.ID)
	if err != nil {
		t.Fatal(err)
	}
	var path []string
	for _, h := range hist {
		path = append(path, h.ToStage)
	}
	if c.Stage != "SQL" || fmt.Sprint(path) != "[Discovered Engaged SQL]" {
		t.Errorf("stage %s, history %v; want SQL reached through [Discovered Engaged SQL]", c.Stage, path)
	}

	// A reply older than the stage entry, arriving now, is late: applied, stage kept.
	late := e.insert(mail, lead{Type: "email_replied", At: at(15), Email: who})
	if _, _, err := e.applier.ApplyBatch(e.ctx, 100); err != nil {
		t.Fatal(err)
	}
	if ev := e.event(late); ev.Status == models.EventQuarantined {
		t.Errorf("late reply = %s (%s), want a late arrival, not a dead letter", ev.Status, ev.Reason)
	}
	if got := e.contactByEmail(e.ws, who).Stage; got != "SQL" {
		t.Errorf("stage after the late reply = %s, want SQL", got)
	}
}

// TestABatchKeepsAFailureToItsEvent: an event whose run fails (its source is gone from its workspace)
// is recorded as a retry with a backoff, and the other events of the batch are applied.
func TestABatchKeepsAFailureToItsEvent(t *testing.T) {
	e := newEnv(t)
	form := e.source(e.ws, "Web form", "web_form", nil)
	other := e.source(e.workspace("elsewhere"), "Foreign", "web_form", nil)
	poisoned := e.insert(form, lead{Type: "form_submitted", At: at(1), Email: "poison@example.com"})
	if err := e.store.DB().Exec(`UPDATE events SET source_id = ? WHERE id = ?`, other.ID, poisoned).Error; err != nil {
		t.Fatal(err)
	}
	fine := e.insert(form, lead{Type: "form_submitted", At: at(2), Email: "fine@example.com"})
	if _, _, err := e.applier.ApplyBatch(e.ctx, 100); err != nil {
		t.Fatal(err)
	}
	if got := e.event(fine).Status; got != models.EventApplied {
		t.Errorf("the healthy event is %s, want applied", got)
	}
	ev := e.event(poisoned)
	if ev.Status != models.EventRetrying || ev.Attempts != 1 || ev.NextAttemptAt == nil || ev.NextAttemptAt.Before(e.clock.Now().Add(time.Second)) {
		t.Errorf("poisoned event = %s attempts=%d next=%v, want retrying/1/about 2 s ahead", ev.Status, ev.Attempts, ev.NextAttemptAt)
	}
	// Not due yet: a batch leaves it alone.
	if claimed, _, err := e.applier.ApplyBatch(e.ctx, 100); err != nil || claimed != 0 {
		t.Errorf("a batch before the retry time claimed %d (%v), want 0", claimed, err)
	}
}

// TestTheDrainerIsWokenByAKickAndFindsUnannouncedEventsByItself: an idle drainer applies a stored
// event as soon as it is kicked (its poll is an hour away), and one whose announcement was lost within
// its poll interval.
func TestTheDrainerIsWokenByAKickAndFindsUnannouncedEventsByItself(t *testing.T) {
	e := newEnv(t)
	form := e.source(e.ws, "Web form", "web_form", nil)
	run := func(d *apply.Drainer) (stop func()) {
		ctx, cancel := context.WithCancel(e.ctx)
		done := make(chan struct{})
		go func() { d.Run(ctx); close(done) }()
		return func() { cancel(); <-done }
	}

	kicked := &apply.Drainer{Applier: e.applier, Poll: time.Hour}
	stop := run(kicked)
	time.Sleep(50 * time.Millisecond) // its first, empty batch; then it waits
	loud := e.insert(form, lead{Type: "form_submitted", At: at(1), Email: "loud@example.com"})
	kicked.Kick()
	testkit.Eventually(t, 10*time.Second, "the announced event is applied", func() bool {
		return e.event(loud).Status == models.EventApplied
	})
	stop()

	polling := &apply.Drainer{Applier: e.applier, Poll: 50 * time.Millisecond}
	stop = run(polling)
	defer stop()
	quiet := e.insert(form, lead{Type: "form_submitted", At: at(2), Email: "quiet@example.com"})
	testkit.Eventually(t, 10*time.Second, "the unannounced event is applied", func() bool {
		return e.event(quiet).Status == models.EventApplied
	})
}

// TestABatchResolvesFieldsAsEventByEventDoes: a batch keeps each contact's field resolution from one
// event to the next instead of resolving over the whole history every time; the fields it ends with
// are exactly those of applying the same events one batch each, with source precedence, empty values,
// older values arriving late and a history stored before the batch.
func TestABatchResolvesFieldsAsEventByEventDoes(t *testing.T) {
	type step struct {
		src    int
		at     int
		fields map[string]any
	}
	steps := []step{
		{0, 1, map[string]any{"company": "Acme", "budget": "10k"}},
		{1, 2, map[string]any{"company": "ACME Inc (enriched)", "budget": ""}},
		{0, 3, map[string]any{"company": "Acme Corp", "budget": "20k", "industry": "Retail"}},
		{0, 0, map[string]any{"industry": "Wholesale", "budget": "5k"}}, // older than everything: loses on time
		{1, 4, map[string]any{"industry": ""}},
		{0, 5, map[string]any{"company": "Acme Holding"}},
	}
	final := map[string]map[string]string{}
	for _, mode := range []string{"one batch each", "one batch"} {
		e := newEnv(t)
		rules := raceRules()
		rules.SourcePrecedence = []string{"Enrichment"}
		e.saveRules(e.ws, rules)
		srcs := []models.Source{
			e.source(e.ws, "Web form", "web_form", map[string]string{"form_submitted": "Discovered"}),
			e.source(e.ws, "Enrichment", "enrichment", map[string]string{"form_submitted": "Discovered"}),
		}
		const who = "fields@example.com"
		e.apply(e.insert(srcs[0], lead{Type: "form_submitted", At: at(-1), Email: who, Fields: map[string]any{"company": "Stored Co"}}))
		var ids []string
		for _, s := range steps {
			ids = append(ids, e.insert(srcs[s.src], lead{Type: "form_submitted", At: at(s.at), Email: who, Fields: s.fields}))
			if mode == "one batch each" {
				e.apply(ids[len(ids)-1])
			}
		}
		if mode == "one batch" {
			if claimed, _, err := e.applier.ApplyBatch(e.ctx, 100); err != nil || claimed != len(steps) {
				t.Fatalf("ApplyBatch = %d, %v; want all %d events in one batch", claimed, err, len(steps))
			}
		}
		for _, id := range ids {
			if ev := e.event(id); ev.Status != models.EventApplied && ev.Status != models.EventUnchanged {
				t.Fatalf("%s: event %s = %s (%s)", mode, id, ev.Status, ev.Reason)
			}
		}
		final[mode] = e.contactByEmail(e.ws, who).Fields
	}
	want := map[string]string{"company": "ACME Inc (enriched)", "budget": "20k", "industry": "Retail"}
	for mode, got := range final {
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("%s: fields %v, want %v", mode, got, want)
		}
	}
}

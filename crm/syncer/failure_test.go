package syncer_test

import (
	"net/http"
	"testing"
	"time"

	"github.com/leadgate/leadgate/crm/crmfake"
	"github.com/leadgate/leadgate/models"
)

type queueRow struct {
	Status        string
	Attempts      int
	NextAttemptAt time.Time
	LastError     string
	DeadLetterID  *int64
}

func (e *syncEnv) queueRow(d models.Destination, contactID string) queueRow {
	e.t.Helper()
	var q queueRow
	if err := e.store.DB().Raw(`SELECT status, attempts, next_attempt_at, last_error, dead_letter_id FROM sync_queue
		WHERE destination_id = ? AND contact_id = ?`, d.ID, contactID).Scan(&q).Error; err != nil {
		e.t.Fatal(err)
	}
	return q
}

// One pass: fan out, then drain once.
func (e *syncEnv) pass(d models.Destination) {
	e.t.Helper()
	if _, err := e.relay.FanOut(e.ctx); err != nil {
		e.t.Fatal(err)
	}
	if _, err := e.relay.Drain(e.ctx, d.ID); err != nil {
		e.t.Fatal(err)
	}
}

// 429: Retry-After is honoured (every replica's limiter pauses), the item is requeued for after the pause,
// and no failure is counted.
func TestRelayRateLimitRequeuesWithoutFailure(t *testing.T) {
	t.Parallel()
	e := newSyncEnv(t)
	fake := crmfake.NewActiveCampaign(crmfake.ACOptions{Options: crmfake.Options{Token: "ac-token"}, Fields: acFields})
	defer fake.Close()
	d := e.acDestination(fake, 50)
	c := e.contact("jane@example.com", "Discovered")
	fake.FailNext(crmfake.Response{Status: http.StatusTooManyRequests, Header: http.Header{"Retry-After": {"3"}},
		Body: `{"message":"Too Many Requests"}`})
	e.relay.PassTime = 200 * time.Millisecond // one attempt, then the pause outlasts the pass
	start := time.Now()
	e.pass(d)

	q := e.queueRow(d, c.ID)
	if q.Status != "pending" || q.Attempts != 0 {
		t.Errorf("after a 429 the item is %s with %d attempts; want pending, 0 (not a failure)", q.Status, q.Attempts)
	}
	if wait := q.NextAttemptAt.Sub(start); wait < 2500*time.Millisecond {
		t.Errorf("item due again after %s; Retry-After said 3 s", wait)
	}
	got, _ := e.store.DestinationByID(e.ctx, d.ID)
	if got.FailuresTotal != 0 || got.RateLimited != 1 || got.Paused {
		t.Errorf("counters failures=%d rate_limited=%d paused=%v; want 0, 1, false (a 429 pauses the limiter, not the destination)",
			got.FailuresTotal, got.RateLimited, got.Paused)
	}
	e.drainAll(d, 15*time.Second)
	if _, ok := fake.Contact("jane@example.com"); !ok {
		t.Fatal("contact never delivered after the pause")
	}
	for _, r := range fake.Requests()[1:] {
		if r.Time.Before(start.Add(2900 * time.Millisecond)) {
			t.Fatalf("a request was sent %s after the 429, inside its Retry-After", r.Time.Sub(start))
		}
	}
}

// A 5xx is retried with exponential backoff starting at 2 s (the default), counting attempts.
func TestRelayTransientBacksOffFromTwoSeconds(t *testing.T) {
	t.Parallel()
	e := newSyncEnv(t)
	fake := crmfake.NewActiveCampaign(crmfake.ACOptions{Options: crmfake.Options{Token: "ac-token"}, Fields: acFields})
	defer fake.Close()
	d := e.acDestination(fake, 50)
	e.relay.BackoffStart = 0 // the production default
	c := e.contact("jane@example.com", "Discovered")
	fake.SetFailRate(1)
	start := time.Now()
	e.pass(d)
	end := time.Now()
	// The failure happened somewhere in the pass, so 2 s ± 50 % after it lies between 1 s after the pass
	// began and 3 s after it ended, however slow the machine made the pass itself.
	q := e.queueRow(d, c.ID)
	if q.Attempts != 1 || q.NextAttemptAt.Before(start.Add(time.Second)) || q.NextAttemptAt.After(end.Add(3*time.Second)) {
		t.Fatalf("after one 503: attempts %d, due %s after the pass began (it took %s); want 1 attempt, due 2 s ± 50 %% after the failure",
			q.Attempts, q.NextAttemptAt.Sub(start), end.Sub(start))
	}
	if q.LastError == "" {
		t.Error("the failure reason was not recorded")
	}
}

// After the inline retries a transient failure becomes a dead letter retried by the scheduler after 20 min;
// a success later resolves it.
func TestRelayTransientDeadLetterIsRetriedByScheduler(t *testing.T) {
	t.Parallel()
	e := newSyncEnv(t)
	fake := crmfake.NewActiveCampaign(crmfake.ACOptions{Options: crmfake.Options{Token: "ac-token"}, Fields: acFields})
	defer fake.Close()
	d := e.acDestination(fake, 50)
	e.relay.InlineAttempts, e.relay.BackoffStart = 2, 50*time.Millisecond
	c := e.contact("jane@example.com", "Discovered")
	fake.SetFailRate(1)
	for i := 0; i < 20 && e.queueRow(d, c.ID).Status != "dead"; i++ {
		e.pass(d)
		time.Sleep(150 * time.Millisecond)
	}
	q := e.queueRow(d, c.ID)
	if q.Status != "dead" || q.DeadLetterID == nil {
		t.Fatalf("queue row %+v; want dead behind a dead letter", q)
	}
	dl, err := e.store.DeadLetterGet(e.ctx, e.ws.ID, *q.DeadLetterID)
	if err != nil || dl.Kind != "transient" || dl.Reason == "" || dl.NextRetryAt == nil || dl.OutboxID == nil {
		t.Fatalf("dead letter %+v (%v); want transient with reason, next retry and outbox id", dl, err)
	}
	if due := time.Until(*dl.NextRetryAt); due < 19*time.Minute || due > 21*time.Minute {
		t.Errorf("first scheduler retry in %s, want 20 min", due)
	}
	// Meanwhile the contact changes: the retry must send the CURRENT state.
	e.change(&c, func(c *models.Contact) { c.Stage = "SQL" })
	fake.SetFailRate(0)
	e.store.DB().Exec(`UPDATE dead_letters SET next_retry_at = now() WHERE id = ?`, dl.ID)
	if n, err := e.store.SyncRetryDueDeadLetters(e.ctx); err != nil || n != 1 {
		t.Fatalf("revived %d (%v), want 1", n, err)
	}
	e.drainAll(d, 10*time.Second)
	got, _ := fake.Contact("jane@example.com")
	if got.Fields["3"] != "SQL" {
		t.Errorf("stage in CRM = %q, want the current SQL", got.Fields["3"])
	}
	dl, _ = e.store.DeadLetterGet(e.ctx, e.ws.ID, dl.ID)
	if dl.Status != models.DeadLetterReplayed {
		t.Errorf("dead letter status %s, want replayed", dl.Status)
	}
}

// A validation failure dead-letters that contact as invalid_mapping with one alert; the rest of the batch is
// delivered. Replaying it after the mapping is fixed sends the current state.
func TestRelayInvalidMappingDeadLettersOneAndContinues(t *testing.T) {
	t.Parallel()
	e := newSyncEnv(t)
	fake := crmfake.NewActiveCampaign(crmfake.ACOptions{Options: crmfake.Options{Token: "ac-token"}, Fields: acFields})
	defer fake.Close()
	d := e.addDestination(models.Destination{Kind: "activecampaign", BaseURL: fake.URL, RateLimitRPS: 50,
		Config: models.DestinationConfig{StageField: "3", StageMap: map[string]string{"Discovered": "discovered"}}}, "ac-token")
	ok1 := e.contact("a@example.com", "Discovered")
	bad := e.contact("b@example.com", "Closed") // no mapping for Closed
	ok2 := e.contact("c@example.com", "Discovered")
	e.drainAll(d, 10*time.Second)

	for _, c := range []models.Contact{ok1, ok2} {
		if _, ok := fake.Contact(*c.Email); !ok {
			t.Errorf("%s not delivered", *c.Email)
		}
	}
	q := e.queueRow(d, bad.ID)
	if q.Status != "dead" || q.DeadLetterID == nil {
		t.Fatalf("bad contact's queue row %+v, want dead", q)
	}
	dl, _ := e.store.DeadLetterGet(e.ctx, e.ws.ID, *q.DeadLetterID)
	if dl.Kind != "invalid_mapping" || dl.NextRetryAt != nil {
		t.Errorf("dead letter kind %s next retry %v; want invalid_mapping, never auto-retried", dl.Kind, dl.NextRetryAt)
	}
	if a := e.count(`SELECT count(*) FROM outbox WHERE workspace_id = ? AND kind = 'alert'`, e.ws.ID); a != 1 {
		t.Errorf("alerts = %d, want 1", a)
	}
	// Fix the mapping, replay: the current state goes out.
	d.Config.StageMap["Closed"] = "closed"
	if err := e.store.DestinationUpdate(e.ctx, &d); err != nil {
		t.Fatal(err)
	}
	if _, err := e.store.SyncReplayDeadLetter(e.ctx, e.ws.ID, dl.ID, "tester"); err != nil {
		t.Fatal(err)
	}
	e.drainAll(d, 10*time.Second)
	if got, ok := fake.Contact("b@example.com"); !ok || got.Fields["3"] != "closed" {
		t.Errorf("replayed contact in CRM: %+v (%v), want stage closed", got, ok)
	}
}

package syncer_test

import (
	"net/http"
	"testing"
	"time"

	"github.com/leadgate/leadgate/crm/crmfake"
	"github.com/leadgate/leadgate/models"
)

// Three versions of one contact coalesce into one write of the newest state; older outbox rows are
// superseded and the newest is sent once every destination has it.
func TestRelayCoalescesVersionsIntoOneWrite(t *testing.T) {
	t.Parallel()
	e := newSyncEnv(t)
	fake := crmfake.NewActiveCampaign(crmfake.ACOptions{Options: crmfake.Options{Token: "ac-token"}, Fields: acFields})
	defer fake.Close()
	d := e.acDestination(fake, 50)
	c := e.contact("jane@example.com", "Discovered")
	e.change(&c, func(c *models.Contact) { c.Stage = "Engaged" })
	e.change(&c, func(c *models.Contact) { c.Stage = "SQL"; c.Fields["budget"] = "10k" })

	e.drainAll(d, 10*time.Second)

	got, ok := fake.Contact("jane@example.com")
	if !ok || got.Fields["3"] != "SQL" || got.Fields["4"] != "10k" || got.Fields["1"] != "leadgate" {
		t.Fatalf("fake holds %+v (found %v); want stage SQL, budget 10k, loop flag", got, ok)
	}
	if n := len(fake.Mutations()); n != 1 {
		t.Errorf("contact writes = %d, want 1 (coalesced)", n)
	}
	if n := e.count(`SELECT count(*) FROM outbox WHERE contact_id = ? AND status = 'superseded'`, c.ID); n != 2 {
		t.Errorf("superseded outbox rows = %d, want 2", n)
	}
	if n := e.count(`SELECT count(*) FROM outbox WHERE contact_id = ? AND status = 'sent' AND version = 3`, c.ID); n != 1 {
		t.Errorf("sent outbox rows at v3 = %d, want 1", n)
	}
	st, err := e.store.SyncStateGet(e.ctx, d.ID, c.ID)
	if err != nil || st.RemoteID != got.ID || st.LastVersion != 3 || st.Written["3"] != "SQL" {
		t.Fatalf("sync state %+v (%v); want remote id %s, version 3, written stage SQL", st, err, got.ID)
	}
	// A re-run of the same outbox (a crashed relay's replay) sends nothing more.
	before := len(fake.Requests())
	e.drainAll(d, 5*time.Second)
	if len(fake.Requests()) != before {
		t.Errorf("an idle relay sent %d requests", len(fake.Requests())-before)
	}
	stats, err := e.store.StatsGet(e.ctx, e.ws.ID)
	if err != nil || stats.OutboxPending != 0 {
		t.Errorf("outbox_pending = %d (%v), want 0", stats.OutboxPending, err)
	}
}

// A human edit in the CRM between two syncs survives the second sync and is recorded as a conflict.
func TestRelayKeepsHumanEditAndRecordsConflict(t *testing.T) {
	t.Parallel()
	e := newSyncEnv(t)
	fake := crmfake.NewActiveCampaign(crmfake.ACOptions{Options: crmfake.Options{Token: "ac-token"}, Fields: acFields})
	defer fake.Close()
	d := e.acDestination(fake, 50)
	c := e.contact("jane@example.com", "Discovered")
	e.change(&c, func(c *models.Contact) { c.Fields["budget"] = "10k" })
	e.drainAll(d, 10*time.Second)
	remote, _ := fake.Contact("jane@example.com")

	if !fake.HumanEdit(remote.ID, "4", "25k (called)") {
		t.Fatal("human edit failed")
	}
	e.change(&c, func(c *models.Contact) { c.Fields["budget"] = "12k"; c.Stage = "Engaged" })
	e.drainAll(d, 10*time.Second)

	got, _ := fake.Contact("jane@example.com")
	if got.Fields["4"] != "25k (called)" {
		t.Errorf("budget = %q; the human edit was overwritten", got.Fields["4"])
	}
	if got.Fields["3"] != "Engaged" {
		t.Errorf("stage = %q, want Engaged (unconflicted fields still sync)", got.Fields["3"])
	}
	cs, err := e.store.SyncConflicts(e.ctx, d.ID, c.ID, models.Page{Limit: 10})
	if err != nil || len(cs) != 1 || cs[0].Field != "4" || cs[0].OurLast != "10k" || cs[0].Remote != "25k (called)" {
		t.Fatalf("conflicts = %+v (%v); want one on field 4: ours 10k, remote 25k (called)", cs, err)
	}
}

// A 401 storm pauses the destination once with one alert, dead-letters nothing, and loses nothing: after the
// token is fixed and the destination resumed, every contact arrives once.
func TestRelayAuthStormPausesOnceAndLosesNothing(t *testing.T) {
	t.Parallel()
	e := newSyncEnv(t)
	fake := crmfake.NewActiveCampaign(crmfake.ACOptions{Options: crmfake.Options{Token: "ac-token"}, Fields: acFields})
	defer fake.Close()
	d := e.acDestination(fake, 50)
	fake.SetAuthFailure(http.StatusUnauthorized)
	const n = 12
	for i := range n {
		e.contact(emailN(i), "Discovered")
	}
	for range 3 { // several ticks during the storm
		if _, err := e.relay.FanOut(e.ctx); err != nil {
			t.Fatal(err)
		}
		if _, err := e.relay.Drain(e.ctx, d.ID); err != nil {
			t.Fatal(err)
		}
	}
	got, _ := e.store.DestinationByID(e.ctx, d.ID)
	if !got.Paused {
		t.Fatal("destination not paused after 401s")
	}
	if a := e.count(`SELECT count(*) FROM outbox WHERE workspace_id = ? AND kind = 'alert'`, e.ws.ID); a != 1 {
		t.Errorf("alerts = %d, want 1", a)
	}
	if dl := e.count(`SELECT count(*) FROM dead_letters WHERE workspace_id = ?`, e.ws.ID); dl != 0 {
		t.Errorf("dead letters = %d, want 0", dl)
	}
	if sent := len(fake.Requests()); sent > 2 {
		t.Errorf("requests during the storm = %d; a paused destination must stop sending", sent)
	}

	fake.SetAuthFailure(0)
	if err := e.store.DestinationResume(e.ctx, d.ID); err != nil {
		t.Fatal(err)
	}
	e.drainAll(d, 20*time.Second)
	if len(fake.Contacts()) != n || fake.DuplicateEmails() != 0 {
		t.Fatalf("fake holds %d contacts (%d duplicate emails), want %d", len(fake.Contacts()), fake.DuplicateEmails(), n)
	}
}

func emailN(i int) string { return "lead" + itoa(i) + "@example.com" }

func itoa(i int) string {
	const digits = "0123456789"
	if i < 10 {
		return digits[i : i+1]
	}
	return itoa(i/10) + digits[i%10:i%10+1]
}

// A workspace with no destination has nothing to deliver to: its contacts' intents are marked skipped
// (and sent) at fan-out, and nothing is queued.
func TestRelaySkipsIntentsOfAWorkspaceWithoutDestinations(t *testing.T) {
	t.Parallel()
	e := newSyncEnv(t)
	c := e.contact("nobody-listens@example.com", "Discovered")
	e.change(&c, func(c *models.Contact) { c.Stage = "Engaged" })
	if _, err := e.relay.FanOut(e.ctx); err != nil {
		t.Fatal(err)
	}
	if n := e.count(`SELECT count(*) FROM outbox WHERE contact_id = ? AND status = 'skipped' AND sent_at IS NOT NULL`, c.ID); n != 1 {
		t.Errorf("skipped outbox rows with a send time = %d, want 1 (the newest version)", n)
	}
	if n := e.count(`SELECT count(*) FROM outbox WHERE contact_id = ? AND status = 'superseded'`, c.ID); n != 1 {
		t.Errorf("superseded outbox rows = %d, want 1 (the older version)", n)
	}
	if n := e.count(`SELECT count(*) FROM sync_queue WHERE contact_id = ?`, c.ID); n != 0 {
		t.Errorf("queued items = %d, want 0", n)
	}
}

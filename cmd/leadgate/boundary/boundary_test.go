//go:build proof

package boundary

import (
	"net/http"
	"testing"
	"time"

	"github.com/leadgate/leadgate/cmd/leadgate/chaos"
	"github.com/leadgate/leadgate/internal/failpoint"
	"github.com/leadgate/leadgate/lifecycle"
)

// The synthetic lead of every boundary.
const (
	email = "jane.doe@example.com"
	phone = "+14155550134"
)

// TestCRMAcceptedBeforeSuccessRecorded: the CRM accepted the upsert and leadgate died before recording
// it. After the restart the batch is sent again; the adapter finds the contact by email (already holding
// the desired values), so the CRM holds one contact written once, and leadgate records the delivery.
func TestCRMAcceptedBeforeSuccessRecorded(t *testing.T) {
	t.Parallel()
	r := newRig(t, failpoint.SyncAfterCRMAccept)
	ev := r.send(nil, "form", "msg_boundary_a", form("form_submitted", " Jane.Doe@Example.com", "Jane", time.Now().Add(-time.Minute),
		map[string]any{"phone": "(415) 555-0134", "company": "Acme"}))
	r.waitKilled(r.lg, failpoint.SyncAfterCRMAccept)

	ids := r.contactIDs(email)
	if len(ids) != 1 {
		t.Fatalf("leadgate contacts at the kill: %v, want 1", ids)
	}
	if cs := r.crmContacts(); len(cs) != 1 || cs[0].Email != email {
		t.Fatalf("the CRM at the kill: %+v, want the accepted contact", cs)
	}
	if _, _, found := r.syncState(ids[0]); found {
		t.Fatal("the sync state is recorded at the kill: the failpoint did not stop before the success was recorded")
	}
	_, writesAtKill := r.crmWrites()
	requestsAtKill := len(r.crm.AC.Requests())

	r.start(r.lg)
	r.settle("delivery recorded", func() bool { _, _, found := r.syncState(ids[0]); return found })

	c := r.only(email)
	cs := r.crmContacts()
	if len(cs) != 1 {
		t.Fatalf("the CRM holds %d contacts, want 1 (no duplicate): %+v", len(cs), cs)
	}
	got := cs[0]
	if got.Email != email || got.Phone != phone || got.FirstName != "Jane" || got.Fields[chaos.StageFieldID] != "Discovered" {
		t.Errorf("CRM contact = %+v, want %s / %s / Jane / stage Discovered", got, email, phone)
	}
	if c.FirstName != "Jane" || c.Stage != "Discovered" || c.Phone != phone {
		t.Errorf("leadgate contact = %+v, want Jane, Discovered, %s", c, phone)
	}
	// The resend looked the contact up by email, found it holding the desired values and wrote nothing:
	// one write in all, and the delivery recorded against the contact the first write created.
	creates, writes := r.crmWrites()
	if writesAtKill != 1 || writes != 1 || creates != 1 {
		t.Errorf("CRM contact writes: %d at the kill, %d in all (%d creates); want exactly 1 write, the create", writesAtKill, writes, creates)
	}
	if n := len(r.crm.AC.Requests()); n <= requestsAtKill {
		t.Errorf("no CRM request after the restart (%d in all): the delivery was recorded without checking the CRM", n)
	}
	remoteID, version, _ := r.syncState(c.ID)
	if remoteID != got.ID || version != c.Version {
		t.Errorf("sync state = remote %q version %d, want %q version %d", remoteID, version, got.ID, c.Version)
	}
	if st, why := r.eventStatus(ev); st != "applied" {
		t.Errorf("event %s = %s (%s), want applied", ev, st, why)
	}
	for _, o := range r.outbox("crm_upsert") {
		if o.Status != "sent" {
			t.Errorf("crm_upsert %s is %s, want sent", o.StableID, o.Status)
		}
	}
	if dl := r.openDeadLetters(); len(dl) > 0 {
		t.Errorf("open dead letters: %v", dl)
	}
}

// TestSideEffectRecordedNotDispatched: the onboarding side effect of a new contact is in the outbox when
// the process dies: before the relay took it, after it claimed it, or after the receiver got it but
// before it was marked sent. The receiver acts once per Idempotency-Key; it must see exactly one key, and
// a second delivery only where the first was never recorded as sent.
func TestSideEffectRecordedNotDispatched(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, point   string
		atKill, total int // deliveries at the kill and in the end
	}{
		{"committed by apply, relay not started", failpoint.ApplyAfterCommit, 0, 1},
		{"claimed by the relay, not sent", failpoint.SideEffectBeforeSend, 0, 1},
		{"sent, not marked sent", failpoint.SideEffectAfterSend, 1, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			r := newRig(t, tc.point)
			ev := r.send(nil, "form", "msg_boundary_b", form("form_submitted", email, "Jane", time.Now().Add(-time.Minute), nil))
			r.waitKilled(r.lg, tc.point)

			ids := r.contactIDs(email)
			if len(ids) != 1 {
				t.Fatalf("leadgate contacts at the kill: %v, want 1", ids)
			}
			key := "se:" + lifecycle.SideEffectID(ids[0], lifecycle.CauseCreated, "start_onboarding")
			rows := r.outbox("side_effect")
			if len(rows) != 1 || rows[0].StableID != key || rows[0].Status != "pending" {
				t.Fatalf("side-effect outbox at the kill: %+v, want one pending %s", rows, key)
			}
			if n, _ := r.recv.deliveries(); n != tc.atKill {
				t.Fatalf("deliveries at the kill: %d, want %d", n, tc.atKill)
			}

			r.start(r.lg)
			r.settle("side effect sent", func() bool {
				rows := r.outbox("side_effect")
				return len(rows) == 1 && rows[0].Status == "sent" && len(r.crmContacts()) == 1
			})
			total, perKey := r.recv.deliveries()
			if total != tc.total || perKey[key] != tc.total || len(perKey) != 1 {
				t.Errorf("receiver got %d deliveries %v; want %d, all under %s (one effective action)", total, perKey, tc.total, key)
			}
			if st, why := r.eventStatus(ev); st != "applied" {
				t.Errorf("event = %s (%s), want applied", st, why)
			}
			if cs := r.crmContacts(); len(cs) != 1 || cs[0].FirstName != "Jane" {
				t.Errorf("CRM = %+v, want one contact Jane", cs)
			}
			if dl := r.openDeadLetters(); len(dl) > 0 {
				t.Errorf("open dead letters: %v", dl)
			}
		})
	}
}

// TestHumanCorrectionDuringApply: an email reply that sets first_name is being applied when the worker
// dies inside its transaction; while it is down an operator corrects first_name through the web process.
// After the restart the reply is applied (its stage counts) but the human correction stays the value,
// in leadgate and in the CRM, although the reply is the more recent observation.
func TestHumanCorrectionDuringApply(t *testing.T) {
	t.Parallel()
	r := newRig(t)
	web, err := r.lg.Sibling("web", map[string]string{"LEADGATE_SPOOL_DIR": "off"}, "--role", "web")
	if err != nil {
		t.Fatal(err)
	}
	r.start(web)
	t.Cleanup(web.Stop)
	t0 := time.Now().Add(-time.Hour)
	r.send(web, "form", "msg_boundary_c1", form("form_submitted", email, "Jane", t0, map[string]any{"phone": phone}))
	r.settle("the form reached the CRM", func() bool {
		cs := r.crmContacts()
		return len(cs) == 1 && cs[0].FirstName == "Jane"
	})

	r.restart(r.lg, failpoint.ApplyBeforeCommit)
	// The reply is stamped after the correction will be (its sender's clock runs ahead): the correction
	// must win on authority, not on recency.
	reply := r.send(web, "email", "msg_boundary_c2", form("email_replied", email, "Janet", time.Now().Add(10*time.Minute), nil))
	r.waitKilled(r.lg, failpoint.ApplyBeforeCommit)
	if st, _ := r.eventStatus(reply); resolved(st) {
		t.Fatalf("the reply is %s at the kill: its transaction should have died with the process", st)
	}
	ids := r.contactIDs(email)
	if len(ids) != 1 {
		t.Fatalf("contacts at the kill: %v", ids)
	}
	var corrected struct{ Contact contact }
	err = web.API(r.ctx, http.MethodPost, "/workspaces/"+workspace+"/contacts/"+ids[0]+"/corrections",
		map[string]string{"field": "first_name", "value": "Jane-Marie"}, &corrected)
	if err != nil || corrected.Contact.FirstName != "Jane-Marie" {
		t.Fatalf("correction while the worker is down: %+v, %v", corrected.Contact, err)
	}

	r.start(r.lg)
	r.settle("reply resolved and the CRM at the contact's latest version", func() bool {
		st, _ := r.eventStatus(reply)
		return resolved(st) && r.synced(ids[0])
	})
	c := r.only(email)
	if c.FirstName != "Jane-Marie" || c.Stage != "Engaged" {
		t.Errorf("leadgate contact: first_name %q stage %q, want Jane-Marie (the correction) and Engaged (the reply)", c.FirstName, c.Stage)
	}
	if cs := r.crmContacts(); len(cs) != 1 || cs[0].FirstName != "Jane-Marie" || cs[0].Fields[chaos.StageFieldID] != "Engaged" {
		t.Errorf("CRM = %+v, want one contact Jane-Marie at Engaged", cs)
	}
	if st, why := r.eventStatus(reply); st != "applied" {
		t.Errorf("reply = %s (%s), want applied", st, why)
	}
	if _, version, _ := r.syncState(c.ID); version != c.Version {
		t.Errorf("synced version %d, contact version %d", version, c.Version)
	}
	if dl := r.openDeadLetters(); len(dl) > 0 {
		t.Errorf("open dead letters: %v", dl)
	}
}

// The Meta lead as the fake Graph API answers it: verified on the first read, empty values on a retry.
var (
	verifiedLead = map[string]string{"email": email, "phone_number": "(415) 555-0134", "first_name": "Jane", "job_title": "CTO"}
	emptyLead    = map[string]string{"email": email, "phone_number": "", "first_name": "", "job_title": ""}
)

// TestEnrichmentAnswerStoredBeforeApply: the provider's answer is stored on the event and the process
// dies before the event is applied. The restart applies the stored answer without asking the provider
// again (it would now answer empty values).
func TestEnrichmentAnswerStoredBeforeApply(t *testing.T) {
	t.Parallel()
	r := newRig(t, failpoint.HydrateAfterStore)
	r.graph.lead("L100", verifiedLead, emptyLead)
	ev := r.send(nil, "meta", "L100", metaLead("L100", time.Now().Add(-time.Minute)))
	r.waitKilled(r.lg, failpoint.HydrateAfterStore)
	if got := r.eventEmail(ev); got != email || len(r.contactIDs(email)) != 0 {
		t.Fatalf("at the kill: event email %q, contacts %v; want the stored answer and no contact yet", got, r.contactIDs(email))
	}

	r.start(r.lg)
	r.settle("lead applied and synced", func() bool { return len(r.crmContacts()) == 1 })
	if n := r.graph.readsOf("L100"); n != 1 {
		t.Errorf("the provider was read %d times, want 1 (the stored answer is used)", n)
	}
	c := r.only(email)
	if c.FirstName != "Jane" || c.Phone != phone || c.Fields["job_title"] != "CTO" {
		t.Errorf("leadgate contact = %+v, want Jane, %s, job_title CTO", c, phone)
	}
	if cs := r.crmContacts(); cs[0].FirstName != "Jane" || cs[0].Phone != phone {
		t.Errorf("CRM = %+v, want Jane %s", cs, phone)
	}
	if st, why := r.eventStatus(ev); st != "applied" {
		t.Errorf("event = %s (%s), want applied", st, why)
	}
	if dl := r.openDeadLetters(); len(dl) > 0 {
		t.Errorf("open dead letters: %v", dl)
	}
}

// TestEnrichmentEmptyOnRetry: the person is known with verified values from an earlier Meta lead; a
// second lead's provider answer is lost with the process, and the retry's answer has empty values. The
// verified values stay, in leadgate and in the CRM, and the second lead's outcome is recorded.
func TestEnrichmentEmptyOnRetry(t *testing.T) {
	t.Parallel()
	r := newRig(t)
	r.graph.lead("L200", verifiedLead)
	r.graph.lead("L201", verifiedLead, emptyLead)
	first := r.send(nil, "meta", "L200", metaLead("L200", time.Now().Add(-time.Hour)))
	r.settle("first lead synced", func() bool {
		cs := r.crmContacts()
		return len(cs) == 1 && cs[0].FirstName == "Jane" && cs[0].Phone == phone
	})

	r.restart(r.lg, failpoint.HydrateAfterFetch)
	second := r.send(nil, "meta", "L201", metaLead("L201", time.Now().Add(-time.Minute)))
	r.waitKilled(r.lg, failpoint.HydrateAfterFetch)
	if n, got := r.graph.readsOf("L201"), r.eventEmail(second); n != 1 || got != "" {
		t.Fatalf("at the kill: %d reads, event email %q; want 1 read and nothing stored", n, got)
	}

	r.start(r.lg)
	r.settle("second lead resolved", func() bool { st, _ := r.eventStatus(second); return resolved(st) })
	if n := r.graph.readsOf("L201"); n != 2 {
		t.Errorf("the provider was read %d times for the second lead, want 2 (the retry read it again)", n)
	}
	c := r.only(email)
	if c.FirstName != "Jane" || c.Phone != phone || c.Fields["job_title"] != "CTO" {
		t.Errorf("leadgate contact = %+v, want the verified Jane, %s, job_title CTO", c, phone)
	}
	cs := r.crmContacts()
	if len(cs) != 1 || cs[0].FirstName != "Jane" || cs[0].Phone != phone {
		t.Errorf("CRM = %+v, want one contact Jane %s", cs, phone)
	}
	for _, id := range []string{first, second} {
		if st, why := r.eventStatus(id); !resolved(st) || st == "quarantined" {
			t.Errorf("event %s = %s (%s), want applied or unchanged", id, st, why)
		}
	}
	if dl := r.openDeadLetters(); len(dl) > 0 {
		t.Errorf("open dead letters: %v", dl)
	}
}

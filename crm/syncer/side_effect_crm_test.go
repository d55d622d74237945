package syncer_test

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/leadgate/leadgate/crm"
	"github.com/leadgate/leadgate/crm/crmfake"
	"github.com/leadgate/leadgate/lifecycle/apply"
	"github.com/leadgate/leadgate/models"
)

// crmCase is one CRM kind under test: its fake and a destination pointing at it.
type crmCase struct {
	dest     models.Destination
	deleted  func() []string
	requests func() []crmfake.Request
	fail     func(crmfake.Response)
	exists   func(remoteID string) bool
	count    func() int
	reviewed func(remoteID string) (tags []string, notes []string) // AC/GHL: tags and notes of a record
	merges   func() []crmfake.HSMerge                              // HubSpot
}

var hsTestProps = []string{"last_automation_source", "sync_timestamp"}

func (e *syncEnv) crmCases() map[string]func() crmCase {
	return map[string]func() crmCase{
		crm.KindActiveCampaign: func() crmCase {
			f := crmfake.NewActiveCampaign(crmfake.ACOptions{Options: crmfake.Options{Token: "ac-token"}, Fields: acFields})
			e.t.Cleanup(f.Close)
			get := func(id string) (crmfake.ACContact, bool) {
				cs := f.Contacts()
				i := slices.IndexFunc(cs, func(c crmfake.ACContact) bool { return c.ID == id })
				if i < 0 {
					return crmfake.ACContact{}, false
				}
				return cs[i], true
			}
			return crmCase{dest: e.acDestination(f, 50), deleted: f.Deleted, requests: f.Requests, fail: f.FailNext,
				exists:   func(id string) bool { _, ok := get(id); return ok },
				count:    func() int { return len(f.Contacts()) },
				reviewed: func(id string) ([]string, []string) { c, _ := get(id); return c.Tags, c.Notes }}
		},
		crm.KindGoHighLevel: func() crmCase {
			f := crmfake.NewGoHighLevel(crmfake.GHLOptions{Options: crmfake.Options{Token: "ghl-token"}, LocationID: "loc-1",
				Fields: []crmfake.GHLField{{ID: "cfLoop", Name: "last_automation_source"}, {ID: "cfSync", Name: "sync_timestamp"}, {ID: "cfStage", Name: "stage"}}})
			e.t.Cleanup(f.Close)
			get := func(id string) (crmfake.GHLContact, bool) {
				cs := f.Contacts()
				i := slices.IndexFunc(cs, func(c crmfake.GHLContact) bool { return c.ID == id })
				if i < 0 {
					return crmfake.GHLContact{}, false
				}
				return cs[i], true
			}
			d := e.addDestination(models.Destination{Kind: crm.KindGoHighLevel, BaseURL: f.URL, RateLimitRPS: 50,
				Config: models.DestinationConfig{LocationID: "loc-1", StageField: "cfStage"}}, "ghl-token")
			return crmCase{dest: d, deleted: f.Deleted, requests: f.Requests, fail: f.FailNext,
				exists:   func(id string) bool { _, ok := get(id); return ok },
				count:    func() int { return len(f.Contacts()) },
				reviewed: func(id string) ([]string, []string) { c, _ := get(id); return c.Tags, c.Notes }}
		},
		crm.KindHubSpot: func() crmCase {
			f := crmfake.NewHubSpot(crmfake.HSOptions{Options: crmfake.Options{Token: "hs-token"}, Properties: hsTestProps})
			e.t.Cleanup(f.Close)
			d := e.addDestination(models.Destination{Kind: crm.KindHubSpot, BaseURL: f.URL, RateLimitRPS: 50,
				Config: models.DestinationConfig{StageMap: map[string]string{"Discovered": "lead", "Engaged": "marketingqualifiedlead", "SQL": "salesqualifiedlead"}}}, "hs-token")
			return crmCase{dest: d, deleted: f.Deleted, requests: f.Requests, fail: f.FailNext, merges: f.Merges,
				exists: func(id string) bool {
					return slices.ContainsFunc(f.Contacts(), func(c crmfake.HSContact) bool { return c.ID == id })
				},
				count: func() int { return len(f.Contacts()) }}
		},
	}
}

// remoteID is the record id leadgate holds for the contact at d.
func (e *syncEnv) remoteID(d models.Destination, contactID string) string {
	e.t.Helper()
	st, err := e.store.SyncStateGet(e.ctx, d.ID, contactID)
	if err != nil {
		e.t.Fatalf("sync state of %s: %v", contactID, err)
	}
	return st.RemoteID
}

// eraseWithCRMDelete erases a contact the way POST .../contacts/{id}/erase {"crm_delete": true} does, and
// returns the crm_delete side effect it queued.
func (e *syncEnv) eraseWithCRMDelete(c models.Contact) models.OutboxRow {
	e.t.Helper()
	err := e.store.Tx(e.ctx, func(tx *models.Store) error {
		recs, err := tx.ContactCRMRecords(e.ctx, c.ID)
		if err != nil {
			return err
		}
		if err := tx.ContactErase(e.ctx, c, models.EraseSyncState); err != nil {
			return err
		}
		_, err = tx.QueueCRMDelete(e.ctx, c, recs)
		return err
	})
	if err != nil {
		e.t.Fatal(err)
	}
	var row models.OutboxRow
	e.store.DB().Raw(`SELECT * FROM outbox WHERE workspace_id = ? AND stable_id = ?`, e.ws.ID, "erase:"+c.ID).Scan(&row)
	return row
}

func countRequests(reqs []crmfake.Request, method, pathPrefix string) int {
	n := 0
	for _, r := range reqs {
		if r.Method == method && strings.HasPrefix(r.Path, pathPrefix) {
			n++
		}
	}
	return n
}

// Erasing a synced contact with crm_delete deletes its record from each real CRM exactly once: the first
// DELETE answers 503, the retry deletes it, the row ends sent (not dead-lettered) and later passes send
// nothing more.
func TestSideEffectCRMDeleteDeletesTheRecordOnceAfterA503(t *testing.T) {
	t.Parallel()
	for _, kind := range []string{crm.KindActiveCampaign, crm.KindHubSpot, crm.KindGoHighLevel} {
		t.Run(kind, func(t *testing.T) {
			e := newSyncEnv(t)
			cc := e.crmCases()[kind]()
			c := e.contact("erase.me@example.com", "Discovered")
			keep := e.contact("keep.me@example.com", "Discovered")
			e.drainAll(cc.dest, 20*time.Second)
			remote := e.remoteID(cc.dest, c.ID)
			if remote == "" || !cc.exists(remote) || cc.count() != 2 {
				t.Fatalf("setup: remote id %q exists=%v count=%d", remote, cc.exists(remote), cc.count())
			}

			row := e.eraseWithCRMDelete(c)
			cc.fail(crmfake.Response{Method: "DELETE", Status: 503, Body: `{"message":"Service Unavailable"}`})
			relay := e.sideEffectRelay()
			got := e.deliverUntil(relay, row.ID, func(r models.OutboxRow) bool { return r.Status != models.OutboxPending })
			for range 3 {
				if _, err := relay.Deliver(e.ctx); err != nil {
					t.Fatal(err)
				}
			}

			if got.Status != models.OutboxSent || got.Attempts != 2 {
				t.Errorf("row %s after %d attempts (%s); want sent after 2", got.Status, got.Attempts, got.LastError)
			}
			if d := cc.deleted(); !slices.Equal(d, []string{remote}) {
				t.Errorf("fake deleted %v, want exactly [%s]", d, remote)
			}
			if n := countRequests(cc.requests(), "DELETE", "/"); n != 2 {
				t.Errorf("DELETE requests = %d, want 2 (the 503 and the retry)", n)
			}
			if cc.exists(remote) || !cc.exists(e.remoteID(cc.dest, keep.ID)) {
				t.Errorf("erased record exists=%v; the other contact's record must stay", cc.exists(remote))
			}
			if n := e.count(`SELECT count(*) FROM dead_letters WHERE workspace_id = ?`, e.ws.ID); n != 0 {
				t.Errorf("dead letters = %d, want 0", n)
			}
		})
	}
}

// A crm_delete naming two destinations carries out each once: a failure at one does not repeat the delete
// at the other on retry.
func TestSideEffectCRMDeleteProgressIsKeptPerDestination(t *testing.T) {
	t.Parallel()
	e := newSyncEnv(t)
	cases := e.crmCases()
	hs, ac := cases[crm.KindHubSpot](), cases[crm.KindActiveCampaign]()
	c := e.contact("two.crms@example.com", "Discovered")
	e.drainAll(hs.dest, 20*time.Second)
	e.drainAll(ac.dest, 20*time.Second)
	row := e.eraseWithCRMDelete(c)
	ac.fail(crmfake.Response{Method: "DELETE", Status: 503})
	ac.fail(crmfake.Response{Method: "DELETE", Status: 503})
	got := e.deliverUntil(e.sideEffectRelay(), row.ID, func(r models.OutboxRow) bool { return r.Status != models.OutboxPending })
	if got.Status != models.OutboxSent {
		t.Fatalf("row %s: %s", got.Status, got.LastError)
	}
	if n := countRequests(hs.requests(), "DELETE", "/"); n != 1 || len(hs.deleted()) != 1 {
		t.Errorf("HubSpot DELETE requests %d deleted %v, want 1 and 1", n, hs.deleted())
	}
	if n := countRequests(ac.requests(), "DELETE", "/"); n != 3 || len(ac.deleted()) != 1 {
		t.Errorf("ActiveCampaign DELETE requests %d deleted %v, want 3 (two 503s) and 1", n, ac.deleted())
	}
	var p struct {
		Done []int64 `json:"done"`
	}
	_ = json.Unmarshal(got.Payload, &p)
	if !slices.Equal(slices.Sorted(slices.Values(p.Done)), []int64{hs.dest.ID, ac.dest.ID}) {
		t.Errorf("payload done %v, want both destinations", p.Done)
	}
}

// A leadgate merge of two contacts synced to the same CRM reaches the CRM once: HubSpot merges the two
// records (and leadgate follows the merged record's new id); ActiveCampaign and GoHighLevel tag the loser's
// record for review with a note naming the survivor. The survivor's record is updated by the normal sync
// and no new duplicate appears; the loser's mapping is retired.
func TestLeadgateMergeIsCarriedToTheCRM(t *testing.T) {
	t.Parallel()
	for _, kind := range []string{crm.KindActiveCampaign, crm.KindHubSpot, crm.KindGoHighLevel} {
		t.Run(kind, func(t *testing.T) {
			e := newSyncEnv(t)
			cc := e.crmCases()[kind]()
			survivor := e.contact("jane@example.com", "Discovered")
			loser := e.contact("jane.doe@example.com", "Engaged")
			e.drainAll(cc.dest, 20*time.Second)
			sRemote, lRemote := e.remoteID(cc.dest, survivor.ID), e.remoteID(cc.dest, loser.ID)
			if sRemote == "" || lRemote == "" || sRemote == lRemote || cc.count() != 2 {
				t.Fatalf("setup: remote ids %q %q, %d records", sRemote, lRemote, cc.count())
			}

			applier := &apply.Applier{Store: e.store, Queue: noQueue{}, Log: e.relay.Log}
			merged, err := applier.MergeContacts(e.ctx, e.ws.ID, survivor.ID, loser.ID, "tester")
			if err != nil {
				t.Fatalf("merge: %v", err)
			}
			if merged.Stage != "Engaged" {
				t.Fatalf("survivor stage %q, want Engaged (the higher)", merged.Stage)
			}
			if st, _ := e.store.SyncStateGet(e.ctx, cc.dest.ID, loser.ID); st.RemoteID != "" {
				t.Errorf("loser still mapped to %q after the merge", st.RemoteID)
			}
			e.drainAll(cc.dest, 20*time.Second) // the survivor's update
			var row models.OutboxRow
			e.store.DB().Raw(`SELECT * FROM outbox WHERE workspace_id = ? AND stable_id = ?`, e.ws.ID, "merge:"+loser.ID+":"+survivor.ID).Scan(&row)
			if row.ID == 0 || row.Action != models.ActionCRMMerge {
				t.Fatalf("no crm_merge side effect queued: %+v", row)
			}
			got := e.deliverUntil(e.sideEffectRelay(), row.ID, func(r models.OutboxRow) bool { return r.Status != models.OutboxPending })
			if got.Status != models.OutboxSent {
				t.Fatalf("crm_merge %s: %s", got.Status, got.LastError)
			}

			// A later change of the survivor updates its record; nothing is created.
			e.change(&merged, func(c *models.Contact) { c.Stage = "SQL" })
			e.drainAll(cc.dest, 20*time.Second)
			now := e.remoteID(cc.dest, merged.ID)
			switch kind {
			case crm.KindHubSpot:
				m := cc.merges()
				if len(m) != 1 || m[0].PrimaryID != sRemote || m[0].MergedID != lRemote {
					t.Fatalf("HubSpot merges %+v, want one of %s into %s", m, lRemote, sRemote)
				}
				if now != m[0].NewID || cc.count() != 1 || !cc.exists(now) {
					t.Errorf("survivor mapped to %q, fake merged record %s, %d records; want the merged record only", now, m[0].NewID, cc.count())
				}
			default:
				tags, notes := cc.reviewed(lRemote)
				if !slices.Contains(tags, crm.MergeReviewTag) || len(notes) == 0 || !strings.Contains(notes[len(notes)-1], sRemote) {
					t.Errorf("loser record tags %v notes %q; want %s and a note naming %s", tags, notes, crm.MergeReviewTag, sRemote)
				}
				if sTags, _ := cc.reviewed(sRemote); slices.Contains(sTags, crm.MergeReviewTag) {
					t.Errorf("survivor record tagged for review: %v", sTags)
				}
				if now != sRemote || cc.count() != 2 {
					t.Errorf("survivor mapped to %q (was %s), %d records; want its own record and no new one", now, sRemote, cc.count())
				}
			}
			if n := e.count(`SELECT count(*) FROM dead_letters WHERE workspace_id = ?`, e.ws.ID); n != 0 {
				t.Errorf("dead letters = %d, want 0", n)
			}
			if n := e.count(`SELECT count(*) FROM sync_state WHERE destination_id = ? AND contact_id = ? AND last_version = ?`, cc.dest.ID, merged.ID, merged.Version); n != 1 {
				t.Errorf("survivor's latest version %d not synced", merged.Version)
			}
		})
	}
}

// A paused destination holds a crm_delete without spending its attempts (an expired token must not turn
// erasures into dead letters); a 429 holds it for Retry-After, also uncounted; then it is deleted once.
func TestSideEffectCRMDeleteWaitsForAPausedOrRateLimitedDestination(t *testing.T) {
	t.Parallel()
	e := newSyncEnv(t)
	cc := e.crmCases()[crm.KindHubSpot]()
	c := e.contact("held@example.com", "Discovered")
	e.drainAll(cc.dest, 20*time.Second)
	remote := e.remoteID(cc.dest, c.ID)
	if err := e.store.DB().Exec(`UPDATE destinations SET paused = true WHERE id = ?`, cc.dest.ID).Error; err != nil {
		t.Fatal(err)
	}
	row := e.eraseWithCRMDelete(c)
	relay := e.sideEffectRelay()
	for range 3 {
		if _, err := relay.Deliver(e.ctx); err != nil {
			t.Fatal(err)
		}
		e.store.DB().Exec(`UPDATE outbox SET next_attempt_at = now() WHERE id = ?`, row.ID) // the wait passes
	}
	var got models.OutboxRow
	e.store.DB().Raw(`SELECT * FROM outbox WHERE id = ?`, row.ID).Scan(&got)
	if got.Status != models.OutboxPending || got.Attempts != 0 || !strings.Contains(got.LastError, "paused") {
		t.Errorf("while paused: row %s attempts %d (%q), want pending, 0 attempts, paused", got.Status, got.Attempts, got.LastError)
	}
	if n := countRequests(cc.requests(), "DELETE", "/"); n != 0 {
		t.Errorf("DELETE requests while paused = %d, want 0", n)
	}

	e.store.DB().Exec(`UPDATE destinations SET paused = false WHERE id = ?`, cc.dest.ID)
	cc.fail(crmfake.Response{Method: "DELETE", Status: 429, Header: map[string][]string{"Retry-After": {"1"}},
		Body: `{"status":"error","message":"You have reached your ten secondly limit.","policyName":"TEN_SECONDLY_ROLLING"}`})
	if _, err := relay.Deliver(e.ctx); err != nil {
		t.Fatal(err)
	}
	e.store.DB().Raw(`SELECT * FROM outbox WHERE id = ?`, row.ID).Scan(&got)
	if got.Status != models.OutboxPending || got.Attempts != 0 || !got.NextAttemptAt.After(time.Now()) {
		t.Errorf("after a 429: row %s attempts %d next %s, want pending, uncounted, due after Retry-After", got.Status, got.Attempts, got.NextAttemptAt)
	}
	got = e.deliverUntil(relay, row.ID, func(r models.OutboxRow) bool { return r.Status != models.OutboxPending })
	if got.Status != models.OutboxSent || got.Attempts != 1 || !slices.Equal(cc.deleted(), []string{remote}) {
		t.Errorf("row %s attempts %d, fake deleted %v; want sent at the first counted attempt, [%s]", got.Status, got.Attempts, cc.deleted(), remote)
	}
}

// A merge where only the loser has a record at a destination hands that record to the survivor: the
// survivor's next sync updates it by id (no new record, no search, no crm_merge to run), so the CRM keeps
// one record for the person and an erase of the survivor can find it.
func TestMergeHandsTheLosersRecordToTheSurvivor(t *testing.T) {
	t.Parallel()
	e := newSyncEnv(t)
	cc := e.crmCases()[crm.KindActiveCampaign]()
	loser := e.contact("jane.doe@example.com", "Engaged")
	e.drainAll(cc.dest, 20*time.Second)
	lRemote := e.remoteID(cc.dest, loser.ID)
	survivor := e.contact("jane@example.com", "Discovered") // not synced yet
	if lRemote == "" || cc.count() != 1 {
		t.Fatalf("setup: loser remote %q, %d records", lRemote, cc.count())
	}
	applier := &apply.Applier{Store: e.store, Queue: noQueue{}, Log: e.relay.Log}
	merged, err := applier.MergeContacts(e.ctx, e.ws.ID, survivor.ID, loser.ID, "tester")
	if err != nil {
		t.Fatalf("merge: %v", err)
	}
	if got := e.remoteID(cc.dest, survivor.ID); got != lRemote {
		t.Fatalf("survivor mapped to %q after the merge, want the loser's record %s", got, lRemote)
	}
	e.change(&merged, func(c *models.Contact) { c.Stage = "SQL" })
	e.drainAll(cc.dest, 20*time.Second)
	if now := e.remoteID(cc.dest, merged.ID); now != lRemote || cc.count() != 1 {
		t.Fatalf("survivor mapped to %q, %d records in the CRM; want %s and 1", now, cc.count(), lRemote)
	}
	if n := e.count(`SELECT count(*) FROM outbox WHERE workspace_id = ? AND action = ?`, e.ws.ID, models.ActionCRMMerge); n != 0 {
		t.Errorf("%d crm_merge side effects queued; want none (one record only)", n)
	}
}

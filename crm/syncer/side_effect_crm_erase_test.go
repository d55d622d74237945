package syncer_test

import (
	"slices"
	"testing"
	"time"

	"github.com/leadgate/leadgate/crm"
	"github.com/leadgate/leadgate/crm/syncer"
	"github.com/leadgate/leadgate/lifecycle/apply"
	"github.com/leadgate/leadgate/models"
)

// Erasing a survivor with crm_delete also deletes the CRM records of the contacts merged into it, through
// a chain of merges: ActiveCampaign and GoHighLevel keep a loser's record (tagged for review) after a
// leadgate merge, holding the person's data. Every record of the merge tree is deleted once, another
// contact's record stays, and nothing is dead-lettered. HubSpot merged the records itself: its one
// remaining record is deleted.
func TestEraseOfASurvivorDeletesTheRecordsMergedIntoIt(t *testing.T) {
	t.Parallel()
	for _, kind := range []string{crm.KindActiveCampaign, crm.KindGoHighLevel, crm.KindHubSpot} {
		t.Run(kind, func(t *testing.T) {
			e := newSyncEnv(t)
			cc := e.crmCases()[kind]()
			survivor := e.contact("jane@example.com", "Discovered")
			loser := e.contact("jane.doe@example.com", "Engaged")
			first := e.contact("j.doe@example.com", "Discovered") // merged into the loser before the loser was merged
			keep := e.contact("keep.me@example.com", "Discovered")
			e.drainAll(cc.dest, 20*time.Second)
			before := map[string]string{}
			for _, c := range []models.Contact{survivor, loser, first, keep} {
				before[c.ID] = e.remoteID(cc.dest, c.ID)
				if before[c.ID] == "" {
					t.Fatalf("setup: %s has no record", *c.Email)
				}
			}

			applier := &apply.Applier{Store: e.store, Queue: noQueue{}, Log: e.relay.Log}
			relay := e.sideEffectRelay()
			for _, m := range []struct{ survivor, loser string }{{loser.ID, first.ID}, {survivor.ID, loser.ID}} {
				if _, err := applier.MergeContacts(e.ctx, e.ws.ID, m.survivor, m.loser, "tester"); err != nil {
					t.Fatalf("merge: %v", err)
				}
				e.drainAll(cc.dest, 20*time.Second)
				e.settleSideEffects(relay)
			}
			if kind != crm.KindHubSpot && cc.count() != 4 {
				t.Fatalf("setup: %d records after the merges, want 4 (losers kept for review)", cc.count())
			}

			// The merged contacts' rows keep their names (merges clear email and phone only).
			e.store.DB().Exec(`UPDATE contacts SET first_name = 'Jane' WHERE id IN (?, ?, ?)`, survivor.ID, loser.ID, first.ID)
			s, err := e.store.ContactGet(e.ctx, e.ws.ID, survivor.ID)
			if err != nil {
				t.Fatal(err)
			}
			e.eraseWithCRMDelete(s)
			e.settleSideEffects(relay)

			if cc.count() != 1 || !cc.exists(before[keep.ID]) {
				t.Fatalf("%d records left (keep's exists=%v); want only the other contact's", cc.count(), cc.exists(before[keep.ID]))
			}
			if kind != crm.KindHubSpot {
				for _, c := range []models.Contact{survivor, loser, first} {
					if n := len(slices.DeleteFunc(cc.deleted(), func(id string) bool { return id != before[c.ID] })); n != 1 {
						t.Errorf("%s's record %s deleted %d times, want once", *c.Email, before[c.ID], n)
					}
				}
			}
			if n := e.count(`SELECT count(*) FROM outbox WHERE workspace_id = ? AND action = 'crm_delete' AND status <> 'sent'`, e.ws.ID); n != 0 {
				t.Errorf("%d crm_delete side effects not sent", n)
			}
			if n := e.count(`SELECT count(*) FROM dead_letters WHERE workspace_id = ?`, e.ws.ID); n != 0 {
				t.Errorf("dead letters = %d, want 0", n)
			}
			if n := e.count(`SELECT count(*) FROM contacts WHERE id IN (?, ?, ?) AND (first_name IS NOT NULL OR email IS NOT NULL OR erased_at IS NULL)`,
				survivor.ID, loser.ID, first.ID); n != 0 {
				t.Errorf("%d contacts of the merge tree keep personal data", n)
			}
		})
	}
}

// settleSideEffects runs the relay until no side effect of the workspace is pending.
func (e *syncEnv) settleSideEffects(r *syncer.SideEffectRelay) {
	e.t.Helper()
	for range 100 {
		if _, err := r.Deliver(e.ctx); err != nil {
			e.t.Fatal(err)
		}
		if e.count(`SELECT count(*) FROM outbox WHERE workspace_id = ? AND kind = ? AND status = 'pending'`, e.ws.ID, models.OutboxSideEffect) == 0 {
			return
		}
		time.Sleep(30 * time.Millisecond)
	}
	e.t.Fatal("side effects never settled")
}

package syncer_test

import (
	"net/http"
	"testing"
	"time"

	"github.com/leadgate/leadgate/crm/crmfake"
	"github.com/leadgate/leadgate/models"
)

// resync queues every contact of the destination again, as the API and `leadgate resync` do.
func (e *syncEnv) resync(d models.Destination) int64 {
	e.t.Helper()
	var n int64
	err := e.store.Tx(e.ctx, func(tx *models.Store) error {
		var err error
		if n, err = tx.SyncRequeueAll(e.ctx, d.ID); err != nil {
			return err
		}
		_, err = tx.SyncMarkBulk(e.ctx, d.ID)
		return err
	})
	if err != nil {
		e.t.Fatal(err)
	}
	return n
}

func acWrites(fake *crmfake.ActiveCampaign) (perContact, imports int) {
	for _, r := range fake.Requests() {
		switch {
		case r.Method == http.MethodPost && (r.Path == "/api/3/contact/sync" || r.Path == "/api/3/contacts"),
			r.Method == http.MethodPut && len(r.Path) > len("/api/3/contacts/"):
			perContact++
		case r.Path == "/api/3/import/bulk_import":
			imports++
		}
	}
	return perContact, imports
}

// A burst of 10 or more live leads new to ActiveCampaign goes through the bulk importer with the account's
// automations; a whole-destination resync of 10 or more contacts goes through it without them (one request
// per 250), keeps every remote id and duplicates nothing; a live change of a contact the CRM already holds
// is a per-contact write (it checks for a person's edit first); a resync of fewer than 10 stays per contact.
func TestResyncToActiveCampaignUsesBulkImport(t *testing.T) {
	t.Parallel()
	e := newSyncEnv(t)
	fake := crmfake.NewActiveCampaign(crmfake.ACOptions{Options: crmfake.Options{Token: "ac-token"}, Fields: acFields})
	defer fake.Close()
	d := e.acDestination(fake, 50)
	const n = 30
	cs := make([]models.Contact, n)
	for i := range cs {
		cs[i] = e.contact(emailN(i), "Discovered")
	}
	e.drainAll(d, time.Minute)
	live, imports := acWrites(fake)
	if b := fake.BulkImports(); live != 0 || imports != 1 || len(b[0].Contacts) != n || b[0].ExcludeAutomations {
		t.Fatalf("live burst of %d new leads: %d per-contact writes, %d imports; want one import with the account's automations", n, live, imports)
	}
	ids := map[string]string{}
	for _, c := range cs {
		st, _ := e.store.SyncStateGet(e.ctx, d.ID, c.ID)
		ids[c.ID] = st.RemoteID
	}

	// The CRM lost a value (a bad import on its side); the resync puts leadgate's state back.
	for _, c := range cs[:5] {
		e.change(&c, func(c *models.Contact) { c.Stage = "SQL" })
	}
	if e.pending(d) != 0 {
		t.Fatal("changes were queued before the fan-out")
	}
	if q := e.resync(d); q != n {
		t.Fatalf("resync queued %d, want %d", q, n)
	}
	e.drainAll(d, 2*time.Minute)
	live2, imports2 := acWrites(fake)
	if imports2 != 2 || live2 != live {
		t.Errorf("resync: %d imports and %d more per-contact writes; want 1 import and none", imports2, live2-live)
	}
	if b := fake.BulkImports(); len(b) != 2 || len(b[1].Contacts) < n-5 || !b[1].ExcludeAutomations {
		t.Errorf("bulk imports %+v", b)
	}
	if len(fake.Contacts()) != n || fake.DuplicateEmails() != 0 {
		t.Fatalf("fake holds %d contacts (%d duplicates), want %d", len(fake.Contacts()), fake.DuplicateEmails(), n)
	}
	for i, c := range cs {
		st, err := e.store.SyncStateGet(e.ctx, d.ID, c.ID)
		if err != nil || st.RemoteID != ids[c.ID] {
			t.Errorf("%s: remote id %q after the resync, was %q (%v)", *c.Email, st.RemoteID, ids[c.ID], err)
		}
		want := "Discovered"
		if i < 5 {
			want = "SQL"
		}
		if got, _ := fake.Contact(*c.Email); got.Fields["3"] != want {
			t.Errorf("%s: stage %q in the CRM, want %q", *c.Email, got.Fields["3"], want)
		}
	}
	if left := e.count(`SELECT count(*) FROM sync_queue WHERE destination_id = ?`, d.ID); left != 0 {
		t.Errorf("%d items left in the queue", left)
	}

	// A live change after the resync is a per-contact write again.
	e.change(&cs[7], func(c *models.Contact) { c.Stage = "Engaged" })
	e.drainAll(d, time.Minute)
	if live3, imports3 := acWrites(fake); imports3 != 2 || live3 != live2+1 {
		t.Errorf("live change after the resync: %d per-contact writes, %d imports", live3-live2, imports3-imports2)
	}
}

func TestSmallResyncToActiveCampaignStaysPerContact(t *testing.T) {
	t.Parallel()
	e := newSyncEnv(t)
	fake := crmfake.NewActiveCampaign(crmfake.ACOptions{Options: crmfake.Options{Token: "ac-token"}, Fields: acFields})
	defer fake.Close()
	d := e.acDestination(fake, 50)
	for i := range 9 {
		e.contact(emailN(i), "Discovered")
	}
	e.drainAll(d, time.Minute)
	e.resync(d)
	e.drainAll(d, time.Minute)
	if _, imports := acWrites(fake); imports != 0 || len(fake.Contacts()) != 9 {
		t.Errorf("resync of 9: %d imports, %d contacts; want per-contact writes only", imports, len(fake.Contacts()))
	}
}

package models

import (
	"context"
	"testing"
)

// handoverFixture is a workspace with one live destination and one contact in it, and a workspace with
// none.
type handoverFixture struct {
	st                 *Store
	dest               int64
	contact, elsewhere string
	bare               int64
}

func newHandoverFixture(t *testing.T) handoverFixture {
	t.Helper()
	f := handoverFixture{st: migratedStore(t)}
	db := f.st.DB()
	if err := db.Raw(`INSERT INTO destinations (workspace_id, name, kind) VALUES (1, 'crm', 'sandbox') RETURNING id`).Scan(&f.dest).Error; err != nil {
		t.Fatal(err)
	}
	if err := db.Raw(`INSERT INTO workspaces (slug, name) VALUES ('bare', 'No destination') RETURNING id`).Scan(&f.bare).Error; err != nil {
		t.Fatal(err)
	}
	contact := func(ws int64) string {
		var id string
		if err := db.Raw(`INSERT INTO contacts (id, workspace_id, first_seen_at, last_activity_at) VALUES (gen_random_uuid(), ?, now(), now())
			RETURNING id::text`, ws).Scan(&id).Error; err != nil {
			t.Fatal(err)
		}
		return id
	}
	f.contact, f.elsewhere = contact(1), contact(f.bare)
	return f
}

func upsertRow(ws int64, contact *string, stable string, version int64) OutboxRow {
	return OutboxRow{WorkspaceID: ws, ContactID: contact, Kind: OutboxCRMUpsert, StableID: stable, Version: version, Action: "upsert"}
}

func (f handoverFixture) add(t *testing.T, rows ...OutboxRow) {
	t.Helper()
	ctx := context.Background()
	if err := f.st.Tx(ctx, func(tx *Store) error { return tx.OutboxAddAll(ctx, rows) }); err != nil {
		t.Fatal(err)
	}
}

func (f handoverFixture) statuses(t *testing.T) map[string]string {
	t.Helper()
	var rows []struct{ StableID, Status string }
	if err := f.st.DB().Raw(`SELECT stable_id, status FROM outbox`).Scan(&rows).Error; err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, r := range rows {
		out[r.StableID] = r.Status
	}
	return out
}

type queuedItem struct {
	Version  int64
	StableID string
}

func (f handoverFixture) queued(t *testing.T) []queuedItem {
	t.Helper()
	var items []queuedItem
	if err := f.st.DB().Raw(`SELECT q.version, o.stable_id FROM sync_queue q JOIN outbox o ON o.id = q.outbox_id
		WHERE q.destination_id = ? AND q.contact_id = ?::uuid AND q.status = 'pending'`, f.dest, f.contact).Scan(&items).Error; err != nil {
		t.Fatal(err)
	}
	return items
}

// The transaction that writes a contact's desired CRM state also queues it for the workspace's
// destinations: the newest version is queued, the older ones written with it are superseded, and rows
// of other kinds wait for their own relay.
func TestOutboxRowsAreHandedToTheSyncQueueInTheirOwnTransaction(t *testing.T) {
	f := newHandoverFixture(t)
	f.add(t,
		upsertRow(1, &f.contact, "c:2", 2),
		upsertRow(1, &f.contact, "c:3", 3),
		upsertRow(1, &f.contact, "c:1", 1),
		OutboxRow{WorkspaceID: 1, ContactID: &f.contact, Kind: OutboxSideEffect, StableID: "task", Action: "sales_task"},
	)
	got := f.statuses(t)
	want := map[string]string{"c:1": OutboxSuperseded, "c:2": OutboxSuperseded, "c:3": OutboxQueued, "task": OutboxPending}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("outbox %s is %q, want %q (all: %v)", k, got[k], v, got)
		}
	}
	if q := f.queued(t); len(q) != 1 || q[0] != (queuedItem{Version: 3, StableID: "c:3"}) {
		t.Errorf("sync queue holds %+v, want version 3 from outbox row c:3", q)
	}
	n, err := f.st.SyncFanOut(context.Background(), 100)
	if err != nil || n != 0 {
		t.Errorf("the relay's fan-out found %d rows left to hand over (%v), want none", n, err)
	}
}

// A later version replaces the queued one and supersedes its outbox row; a stable id written before is
// neither written nor queued again.
func TestALaterVersionReplacesTheQueuedOneAndARepeatedStableIDQueuesNothing(t *testing.T) {
	f := newHandoverFixture(t)
	f.add(t, upsertRow(1, &f.contact, "c:1", 1))
	f.add(t, upsertRow(1, &f.contact, "c:2", 2))
	if got := f.statuses(t); got["c:1"] != OutboxSuperseded || got["c:2"] != OutboxQueued {
		t.Errorf("outbox after version 2: %v, want c:1 superseded and c:2 queued", got)
	}
	if q := f.queued(t); len(q) != 1 || q[0] != (queuedItem{Version: 2, StableID: "c:2"}) {
		t.Errorf("sync queue holds %+v, want version 2 from c:2", q)
	}
	// A replay writes c:1 again (its stable id exists) alongside nothing newer.
	f.add(t, upsertRow(1, &f.contact, "c:1", 1))
	if q := f.queued(t); len(q) != 1 || q[0].Version != 2 {
		t.Errorf("after a replay of c:1 the sync queue holds %+v, want version 2 still", q)
	}
	var rows int64
	if err := f.st.DB().Raw(`SELECT count(*) FROM outbox`).Scan(&rows).Error; err != nil {
		t.Fatal(err)
	}
	if rows != 2 {
		t.Errorf("outbox holds %d rows after the replay, want 2", rows)
	}
}

// With no destination to deliver to, the row is done at once, as the relay's fan-out would mark it.
func TestAnUpsertInAWorkspaceWithoutDestinationsIsSkipped(t *testing.T) {
	f := newHandoverFixture(t)
	f.add(t, upsertRow(f.bare, &f.elsewhere, "e:1", 1))
	var row struct {
		Status string
		Sent   bool
	}
	if err := f.st.DB().Raw(`SELECT status, sent_at IS NOT NULL AS sent FROM outbox WHERE stable_id = 'e:1'`).Scan(&row).Error; err != nil {
		t.Fatal(err)
	}
	if row.Status != OutboxSkipped || !row.Sent {
		t.Errorf("outbox row is %+v, want skipped with a sent time", row)
	}
	var queued int64
	if err := f.st.DB().Raw(`SELECT count(*) FROM sync_queue`).Scan(&queued).Error; err != nil {
		t.Fatal(err)
	}
	if queued != 0 {
		t.Errorf("sync queue holds %d items, want none", queued)
	}
}

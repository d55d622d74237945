package syncer_test

import (
	"io"
	"log/slog"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/leadgate/leadgate/crm/sandbox"
	"github.com/leadgate/leadgate/crm/syncer"
	"github.com/leadgate/leadgate/models"
)

// The drift check reports a field a human changed in the CRM since leadgate wrote it, and successive runs
// bounded to a few contacts each walk every synced contact (resuming where the last run stopped, wrapping
// at the end) rather than re-reading the first ones forever.
func TestDriftCheckWalksEveryContactAcrossRuns(t *testing.T) {
	t.Parallel()
	e := newSyncEnv(t)
	d := e.addDestination(models.Destination{Kind: "sandbox", Name: "sandbox"}, "unused")
	for _, email := range []string{"a@example.com", "b@example.com", "c@example.com", "d@example.com", "e@example.com"} {
		e.contact(email, "Engaged")
	}
	e.drainAll(d, 30*time.Second)

	states, err := e.store.SyncStatesPage(e.ctx, d.ID, "", 100)
	if err != nil || len(states) != 5 {
		t.Fatalf("sync states after the sync: %d, %v; want 5", len(states), err)
	}
	last := states[len(states)-1] // the contact a run from the start reaches last
	field := ""
	for _, k := range slices.Sorted(maps.Keys(last.Written)) {
		if !strings.HasPrefix(k, "_") && k != "last_automation_source" && k != "sync_timestamp" && last.Written[k] != "" {
			field = k
			break
		}
	}
	if field == "" {
		t.Fatalf("no written field to edit in %v", last.Written)
	}
	sb := sandbox.New(e.store.DB(), d.ID, sandbox.Options{})
	if err := sb.HumanEdit(e.ctx, last.RemoteID, field, "edited by a person"); err != nil {
		t.Fatal(err)
	}

	check := &syncer.DriftCheck{Store: e.store, Connector: e.conn, Log: slog.New(slog.NewTextHandler(io.Discard, nil)), MaxContacts: 2}
	runs := []int{}
	for range 3 { // 2 + 2 + 1 contacts: the third run reaches the edited one
		n, err := check.Run(e.ctx, d)
		if err != nil {
			t.Fatal(err)
		}
		runs = append(runs, n)
	}
	if !slices.Equal(runs, []int{0, 0, 1}) {
		t.Fatalf("drift found per run %v, want [0 0 1]: the walk must resume where it stopped", runs)
	}
	drift, err := e.store.SyncDriftList(e.ctx, d.ID, 10)
	if err != nil {
		t.Fatal(err)
	}
	if len(drift) != 1 || drift[0].ContactID != last.ContactID || drift[0].Field != field ||
		drift[0].Written != last.Written[field] || drift[0].Remote != "edited by a person" {
		t.Fatalf("drift %+v, want %s.%s written %q, remote %q", drift, last.ContactID, field, last.Written[field], "edited by a person")
	}
	// The fourth run wraps to the start; a full lap later the finding is still there, not duplicated.
	for range 3 {
		if _, err := check.Run(e.ctx, d); err != nil {
			t.Fatal(err)
		}
	}
	if drift, _ := e.store.SyncDriftList(e.ctx, d.ID, 10); len(drift) != 1 {
		t.Fatalf("after a second lap: %d findings, want 1", len(drift))
	}
}

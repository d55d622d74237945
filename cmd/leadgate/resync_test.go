package main

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/leadgate/leadgate/models"
)

// `leadgate resync` queues every live contact of a destination and marks the work for a bulk import (the
// relay uses it for ActiveCampaign when 10 or more are due); a one-contact resync is not marked.
func TestResyncQueuesContactsForBulkImport(t *testing.T) {
	ctx := context.Background()
	store, dbURL := migratedStore(t)
	ws, err := store.WorkspaceCreate(ctx, "resync-"+uuid.NewString()[:8], "Resync")
	if err != nil {
		t.Fatal(err)
	}
	d := models.Destination{WorkspaceID: ws.ID, Name: "AC", Kind: "activecampaign", BaseURL: "https://acct.api-us1.com", Enabled: true, BatchSize: 20}
	if err := store.DestinationCreate(ctx, &d); err != nil {
		t.Fatal(err)
	}
	var ids []string
	for i := range 12 {
		email := "r" + strings.Repeat("x", i) + "@example.com"
		now := time.Now().UTC()
		c := models.Contact{ID: uuid.NewString(), WorkspaceID: ws.ID, Email: &email, Stage: "Discovered", Fields: map[string]string{},
			FirstTouch: map[string]string{}, Tags: []string{}, ScoreBreakdown: json.RawMessage("[]"), FirstSeenAt: now, LastActivityAt: now, Version: 1}
		if err := store.ContactCreate(ctx, &c); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, c.ID)
	}
	getenv := func(k string) string {
		return map[string]string{"LEADGATE_DATABASE_URL": dbURL, "LEADGATE_SECRET_KEY": "resync test secret key"}[k]
	}
	count := func(q string) int64 {
		var n int64
		if err := store.DB().Raw(q, d.ID).Scan(&n).Error; err != nil {
			t.Fatal(err)
		}
		return n
	}
	resync := func(args ...string) string {
		var out, errs bytes.Buffer
		if err := cmdResync(ctx, append([]string{"--workspace", ws.Slug}, args...), &out, &errs, getenv); err != nil {
			t.Fatalf("resync %v: %v (%s)", args, err, errs.String())
		}
		return out.String()
	}

	if out := resync("--contact", ids[0]); !strings.Contains(out, "1 queued") {
		t.Errorf("one-contact resync printed %q", out)
	}
	if n := count(`SELECT count(*) FROM sync_queue WHERE destination_id = ? AND bulk`); n != 0 {
		t.Errorf("a one-contact resync marked %d items for bulk import", n)
	}
	if out := resync(); !strings.Contains(out, "12 queued") {
		t.Errorf("destination resync printed %q", out)
	}
	if n := count(`SELECT count(*) FROM sync_queue WHERE destination_id = ? AND bulk AND status = 'pending'`); n != 12 {
		t.Errorf("%d items marked for bulk import, want 12", n)
	}
}

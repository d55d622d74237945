package api_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/leadgate/leadgate/models"
)

// POST /destinations/{id}/resync {} queues every live contact and marks the work for the CRM's bulk
// import (the relay sends it through ActiveCampaign's importer when 10 or more are due); a one-contact
// resync queues that contact only, unmarked.
func TestDestinationResyncMarksWorkForBulkImport(t *testing.T) {
	t.Parallel()
	e := newLCEnv(t)
	d := models.Destination{WorkspaceID: e.ws, Name: "AC", Kind: "activecampaign", BaseURL: "https://acct.api-us1.com", BatchSize: 20}
	if err := e.store.DestinationCreate(e.ctx, &d); err != nil { // disabled: nothing is sent during the test
		t.Fatal(err)
	}
	var ids []string
	for i := range 12 {
		email := fmt.Sprintf("resync%d@example.com", i)
		now := time.Now().UTC()
		c := models.Contact{ID: uuid.NewString(), WorkspaceID: e.ws, Email: &email, Stage: "Discovered", Fields: map[string]string{},
			FirstTouch: map[string]string{}, Tags: []string{}, ScoreBreakdown: json.RawMessage("[]"), FirstSeenAt: now, LastActivityAt: now, Version: 1}
		if err := e.store.ContactCreate(e.ctx, &c); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, c.ID)
	}
	count := func(cond string) int64 {
		var n int64
		e.store.DB().Raw(`SELECT count(*) FROM sync_queue WHERE destination_id = ? AND `+cond, d.ID).Scan(&n)
		return n
	}
	path := fmt.Sprintf("/destinations/%d/resync", d.ID)
	if status, body := e.call("POST", path, map[string]any{"contact_id": ids[3]}); status != http.StatusAccepted || body["queued"] != float64(1) {
		t.Fatalf("one-contact resync: %d %v", status, body)
	}
	if n := count("bulk"); n != 0 {
		t.Errorf("a one-contact resync marked %d items for bulk import", n)
	}
	if status, body := e.call("POST", path, map[string]any{}); status != http.StatusAccepted || body["queued"] != float64(12) {
		t.Fatalf("destination resync: %d %v", status, body)
	}
	if n := count("bulk AND status = 'pending'"); n != 12 {
		t.Errorf("%d items marked for bulk import, want 12", n)
	}
}

package app_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
)

// TestEraseLeavesNoPersonalFieldAnywhere: a contact that went through ingest,
// apply (with a correction, a dead letter and an audit trail) and the sandbox
// CRM is exported, then erased; afterwards no column of any table holds its
// email, phone or name, and the export held all of it before.
func TestEraseLeavesNoPersonalFieldAnywhere(t *testing.T) {
	t.Parallel()
	h := newHarness(t, opts{})
	ctx := context.Background()
	src := h.createSource(map[string]any{"kind": "standard-webhooks", "channel": "web_form", "event_stages": map[string]string{"form_submitted": "Discovered"}})
	const email, phone, last = "zelda.quixote@erase.example", "+14155550987", "Quixote"
	send := func(id, body string) string {
		r := h.send(h.swDelivery(src, id, body))
		if r.Status != http.StatusOK {
			t.Fatalf("deliver %s: %s", id, r)
		}
		eventID := r.str("event_id")
		if err := h.app.Applier.Apply(ctx, eventID); err != nil {
			t.Fatalf("apply %s: %v", id, err)
		}
		return eventID
	}
	send("msg_erase_1", `{"event_type":"form_submitted","occurred_at":"2026-11-01T10:00:00Z","email":" Zelda.Quixote@Erase.example ","phone":"(415) 555-0987","first_name":"zelda","last_name":"quixote","company":"Windmills Ltd","fields":{"budget":"10k"},"attribution":{"utm_source":"ads"}}`)
	send("msg_erase_2", `{"event_type":"call","occurred_at":"2026-11-01T11:00:00Z","email":"zelda.quixote@erase.example","target_stage":"SQL"}`)
	send("msg_erase_3", `{"event_type":"reply","occurred_at":"2026-11-01T12:00:00Z","email":"zelda.quixote@erase.example","target_stage":"Engaged"}`) // a regression: dead letter

	list := h.api(http.MethodGet, "/contacts?email="+email, nil)
	contacts, _ := list.JSON["contacts"].([]any)
	if len(contacts) != 1 {
		t.Fatalf("contacts: %s", list)
	}
	id := contacts[0].(map[string]any)["id"].(string)
	if r := h.api(http.MethodPost, "/contacts/"+id+"/corrections", map[string]string{"field": "company", "value": "Windmills Quixote Ltd"}); r.Status != http.StatusOK {
		t.Fatalf("correction: %s", r)
	}
	// The sandbox CRM receives the contact.
	if _, err := h.app.Sync.Relay.FanOut(ctx); err != nil {
		t.Fatal(err)
	}
	dests, err := h.store.DestinationList(ctx, 1)
	if err != nil || len(dests) == 0 {
		t.Fatalf("default workspace destinations: %v %v", dests, err)
	}
	if _, err := h.app.Sync.Relay.Drain(ctx, dests[0].ID); err != nil {
		t.Fatal(err)
	}
	if n := countMatches(t, h, email); n == 0 {
		t.Fatal("setup: the email is nowhere before the erase")
	}

	export := h.api(http.MethodGet, "/contacts/"+id+"/export", nil)
	if export.Status != http.StatusOK {
		t.Fatalf("export: %s", export)
	}
	raw, _ := json.Marshal(export.JSON)
	for _, want := range []string{email, phone, last, "Windmills Quixote Ltd", `"budget"`, "utm_source", "msg_erase", "state_conflict"} {
		if !strings.Contains(string(raw), want) {
			t.Errorf("export lacks %q", want)
		}
	}
	for _, part := range []string{"events", "observations", "stage_history", "outbox", "dead_letters", "audit"} {
		if items, _ := export.JSON[part].([]any); len(items) == 0 {
			t.Errorf("export part %s is empty", part)
		}
	}

	if r := h.api(http.MethodPost, "/contacts/"+id+"/erase", map[string]bool{"crm_delete": true}); r.Status != http.StatusOK {
		t.Fatalf("erase: %s", r)
	}
	for _, needle := range []string{email, "zelda.quixote", "5550987", last, "Windmills"} {
		if n := countMatches(t, h, needle); n != 0 {
			t.Errorf("%q still appears in %d column values after the erase", needle, n)
		}
	}
	var erased int64
	h.store.DB().Raw(`SELECT count(*) FROM contacts WHERE id = ? AND erased_at IS NOT NULL`, id).Scan(&erased)
	if erased != 1 {
		t.Error("contact row not marked erased")
	}
	var audits int64
	h.store.DB().Raw(`SELECT count(*) FROM audit_log WHERE action IN ('contact.export', 'contact.erase') AND subject_id = ?`, id).Scan(&audits)
	if audits != 2 {
		t.Errorf("audit entries for export and erase: %d, want 2", audits)
	}
}

// countMatches scans every text-like column of every table for needle
// (case-insensitive) and reports each hit.
func countMatches(t *testing.T, h *harness, needle string) int {
	t.Helper()
	cols := []struct {
		TableName  string
		ColumnName string
	}{}
	err := h.store.DB().Raw(`SELECT c.table_name, c.column_name FROM information_schema.columns c
		JOIN information_schema.tables tb ON tb.table_name = c.table_name AND tb.table_schema = c.table_schema
		WHERE c.table_schema = 'public' AND tb.table_type = 'BASE TABLE'
		  AND c.data_type IN ('text', 'character varying', 'jsonb', 'json', 'bytea', 'ARRAY')`).Scan(&cols).Error
	if err != nil {
		t.Fatal(err)
	}
	total := 0
	for _, c := range cols {
		var n int64
		q := fmt.Sprintf(`SELECT count(*) FROM %q WHERE %q::text ILIKE ?`, c.TableName, c.ColumnName)
		if err := h.store.DB().Raw(q, "%"+needle+"%").Scan(&n).Error; err != nil {
			t.Fatalf("scan %s.%s: %v", c.TableName, c.ColumnName, err)
		}
		if n > 0 {
			t.Logf("%q found in %s.%s (%d rows)", needle, c.TableName, c.ColumnName, n)
			total += int(n)
		}
	}
	return total
}

// TestViewersSeePayloadsWithPersonalFieldsMasked: the same event read by an
// editor shows the payload; read by a viewer, its personal values are masked.
func TestViewersSeePayloadsWithPersonalFieldsMasked(t *testing.T) {
	t.Parallel()
	h := newHarness(t, opts{})
	src := h.createSource(map[string]any{"kind": "standard-webhooks"})
	r := h.send(h.swDelivery(src, "msg_mask_1", `{"event_type":"form_submitted","email":"masked.person@example.com","phone":"(415) 555-0111","first_name":"Masked","fields":{"budget":"10k"}}`))
	if r.Status != http.StatusOK {
		t.Fatalf("deliver: %s", r)
	}
	id := r.str("event_id")
	_, viewer, err := h.store.TokenCreate(context.Background(), "viewer", "viewer")
	if err != nil {
		t.Fatal(err)
	}
	get := func(token string) string {
		req, _ := http.NewRequest(http.MethodGet, h.srv.URL+"/api/v1/workspaces/default/events/"+id, nil)
		req.Header.Set("Authorization", "Bearer "+token)
		rep := h.do(req)
		if rep.Status != http.StatusOK {
			t.Fatalf("get event: %s", rep)
		}
		return string(rep.Raw)
	}
	full, masked := get(h.admin), get(viewer)
	for _, personal := range []string{"masked.person@example.com", "555-0111", "Masked"} {
		if !strings.Contains(full, personal) {
			t.Errorf("admin view lacks %q", personal)
		}
	}
	var doc struct {
		Payload map[string]any `json:"payload"`
	}
	if err := json.Unmarshal([]byte(masked), &doc); err != nil {
		t.Fatal(err)
	}
	payload, _ := json.Marshal(doc.Payload)
	for _, personal := range []string{"masked.person@example.com", "555-0111", "Masked"} {
		if strings.Contains(string(payload), personal) {
			t.Errorf("viewer sees %q in the payload: %s", personal, payload)
		}
	}
	if !strings.Contains(string(payload), "10k") {
		t.Errorf("masking removed non-personal data: %s", payload)
	}
}

package crm_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"testing"
	"time"

	"github.com/leadgate/leadgate/crm"
	"github.com/leadgate/leadgate/crm/crmfake"
)

func bulkOf(t *testing.T, d crm.Destination) crm.BulkImporter {
	t.Helper()
	bi, ok := d.(crm.BulkImporter)
	if !ok {
		t.Fatalf("%s adapter has no bulk import", d.Kind())
	}
	if lo, hi := bi.BulkLimits(); lo != 10 || hi != 250 {
		t.Fatalf("BulkLimits = %d, %d; want AC's documented 10, 250", lo, hi)
	}
	return bi
}

func bulkContacts(n int) []crm.Contact {
	out := make([]crm.Contact, n)
	for i := range out {
		out[i] = crm.Contact{LeadgateID: fmt.Sprintf("lg-%d", i), Version: 1, Email: fmt.Sprintf("lead%02d@example.com", i),
			FirstName: "Lead", Stage: "Engaged", Fields: map[string]string{"budget": fmt.Sprint(i)},
			FirstTouch: map[string]string{"utm_source": "ads"}, Tags: []string{"backfill"}}
	}
	return out
}

func countPath(reqs []crmfake.Request, method, path string) int {
	n := 0
	for _, r := range reqs {
		if r.Method == method && r.Path == path {
			n++
		}
	}
	return n
}

// A resync of 15 contacts, 3 of which AC already holds (one linked by remote id, two unknown to leadgate),
// goes out as one asynchronous import: its batch is followed until completed, every contact ends with its
// remote id (read back from the ids the import status lists), values already written are not sent, and a
// person's edit of a value leadgate wrote before stands. First-touch values are set only where empty: the
// 12 contacts the import created get them in a second import that starts no automations, the 3 older ones
// through the per-contact path, which reads first (and keeps the values they hold).
func TestActiveCampaignBulkImportTracksBatchAndRecordsRemoteIDs(t *testing.T) {
	t.Parallel()
	fake, d := newAC(t, crmfake.ACOptions{})
	bi := bulkOf(t, d)
	batch := bulkContacts(15)
	old := time.Now().Add(-24 * time.Hour)
	linked := fake.AddContact(crmfake.ACContact{Email: batch[0].Email, Fields: map[string]string{"3": "sql", "4": "newsletter"}, CDate: old})
	batch[0].RemoteID = linked
	// Leadgate wrote "engaged" before; a person moved the contact on to "sql" since: that edit stands.
	batch[0].Previous = map[string]string{"3": "engaged"}
	unknown1 := fake.AddContact(crmfake.ACContact{Email: batch[1].Email, Fields: map[string]string{"4": "partner"}, CDate: old})
	unknown2 := fake.AddContact(crmfake.ACContact{Email: batch[2].Email, CDate: old})

	results := bi.BulkImport(context.Background(), batch, crm.BulkOptions{})

	if len(results) != len(batch) {
		t.Fatalf("%d results for %d contacts", len(results), len(batch))
	}
	imports := fake.BulkImports()
	if len(imports) != 2 || len(imports[0].Contacts) != 15 || !imports[0].Done || imports[0].Polls < 2 {
		t.Fatalf("imports %+v; want one completed batch of 15 followed by status reads, then the first-touch import", imports)
	}
	if ft := imports[1]; len(ft.Contacts) != 12 || !ft.ExcludeAutomations || len(ft.Created) != 0 || ft.Contacts[0].Email != batch[3].Email {
		t.Errorf("first-touch import %+v; want the 12 created contacts, no automations, nothing created", ft)
	}
	reqs := fake.Requests()
	if n := countPath(reqs, http.MethodPost, "/api/3/contact/sync") + countPath(reqs, http.MethodPost, "/api/3/contacts"); n != 0 {
		t.Errorf("%d per-contact writes; the whole batch should go through the importer", n)
	}
	if n := countPath(reqs, http.MethodGet, "/api/3/import/info"); n < 2 {
		t.Errorf("status reads = %d, want the batch followed until completed", n)
	}
	for i, r := range results {
		c, ok := fake.Contact(batch[i].Email)
		if r.Err != nil || !ok || r.RemoteID != c.ID {
			t.Fatalf("%s: result %+v, fake id %q", batch[i].Email, r, c.ID)
		}
		if wantCreated := i >= 3; r.Created != wantCreated {
			t.Errorf("%s: Created = %v, want %v", batch[i].Email, r.Created, wantCreated)
		}
		if r.Calls == 0 || r.Written["5"] != fmt.Sprint(i) && r.Written["BUDGET"] != fmt.Sprint(i) {
			t.Errorf("%s: calls %d written %v", batch[i].Email, r.Calls, r.Written)
		}
		if c.Fields["1"] != "leadgate" || c.Fields["2"] == "" || c.Fields["5"] != fmt.Sprint(i) {
			t.Errorf("%s: fake fields %v; want loop-breaker flag, sync time and budget", batch[i].Email, c.Fields)
		}
	}
	if c, _ := fake.Contact(batch[0].Email); c.Fields["3"] != "sql" || c.Fields["4"] != "newsletter" {
		t.Errorf("linked contact fields %v; the person's stage edit and the first-touch value must stand", c.Fields)
	}
	if c, _ := fake.Contact(batch[1].Email); c.Fields["3"] != "engaged" || c.Fields["4"] != "partner" || c.ID != unknown1 {
		t.Errorf("existing contact %+v; want updated to engaged with its utm_source kept", c)
	}
	if r := results[2]; r.RemoteID != unknown2 || r.Created || r.Written["4"] != "ads" {
		t.Errorf("existing contact unknown to leadgate: %+v, want its id %s and utm_source set where empty", r, unknown2)
	}
	if c, _ := fake.Contact(batch[2].Email); c.Fields["4"] != "ads" {
		t.Errorf("older contact without a utm_source: %v, want it set", c.Fields)
	}
	if c, _ := fake.Contact(batch[9].Email); c.Fields["3"] != "engaged" || c.Fields["4"] != "ads" || len(c.Tags) != 1 || results[9].Written["4"] != "ads" {
		t.Errorf("created contact %+v (written %v); want stage engaged, tag backfill, first-touch value", c, results[9].Written)
	}
	if len(fake.Contacts()) != 15 || fake.DuplicateEmails() != 0 {
		t.Errorf("fake holds %d contacts (%d duplicates), want 15", len(fake.Contacts()), fake.DuplicateEmails())
	}
}

// The importer is not for small batches of live leads or for what it cannot carry: fewer than 10 live
// contacts, contacts without an email, deal mode and notes go through the per-contact path; a contact the
// import rejects is retried per contact and gets its exact error while the rest succeed.
func TestActiveCampaignBulkImportRoutesWhatItCannotCarry(t *testing.T) {
	t.Parallel()
	t.Run("fewer than 10 live", func(t *testing.T) {
		fake, d := newAC(t, crmfake.ACOptions{})
		for _, r := range bulkOf(t, d).BulkImport(context.Background(), bulkContacts(9), crm.BulkOptions{Live: true}) {
			mustOK(t, r)
		}
		if len(fake.BulkImports()) != 0 || len(fake.Contacts()) != 9 {
			t.Errorf("imports %d, contacts %d; want 9 per-contact writes", len(fake.BulkImports()), len(fake.Contacts()))
		}
	})
	t.Run("phone only and notes", func(t *testing.T) {
		fake, d := newAC(t, crmfake.ACOptions{AllowNullEmail: true}, func(c *crm.Config) { c.AllowNullEmail = true })
		batch := bulkContacts(12)
		batch[3].Email, batch[3].Phone = "", "+14155550100"
		batch[4].Note = "form_submitted"
		results := bulkOf(t, d).BulkImport(context.Background(), batch, crm.BulkOptions{})
		for _, r := range results {
			mustOK(t, r)
		}
		imports := fake.BulkImports()
		if len(imports) != 2 || len(imports[0].Contacts) != 10 {
			t.Fatalf("imports %+v, want one of the 10 importable contacts (and its first-touch import)", imports)
		}
		if c, ok := fake.Contact(batch[4].Email); !ok || len(c.Notes) != 1 || results[4].RemoteID != c.ID {
			t.Errorf("contact with a note: %+v %+v", c, results[4])
		}
		if len(fake.Contacts()) != 12 {
			t.Errorf("fake holds %d contacts, want 12", len(fake.Contacts()))
		}
	})
	t.Run("rejected contact", func(t *testing.T) {
		fake, d := newAC(t, crmfake.ACOptions{})
		batch := bulkContacts(11)
		batch[5].Email = "not-an-email"
		results := bulkOf(t, d).BulkImport(context.Background(), batch, crm.BulkOptions{})
		for i, r := range results {
			if i == 5 {
				if crm.ClassOf(r.Err) != crm.Invalid {
					t.Errorf("rejected contact: %v, want an invalid (mapping) error from the per-contact retry", r.Err)
				}
				continue
			}
			mustOK(t, r)
		}
		if imports := fake.BulkImports(); len(imports) != 2 || len(imports[0].Failed) != 1 || len(imports[1].Contacts) != 10 {
			t.Errorf("imports %+v, want one batch reporting one failure", imports)
		}
	})
}

// AC's importer answers its own rate limit with a 400 "Rate limit exceeded.": a rate limit for every
// contact of the batch, not a validation error. A 503 while reading the status does not fail the batch.
func TestActiveCampaignBulkImportRateLimit400AndStatus503(t *testing.T) {
	t.Parallel()
	fake, d := newAC(t, crmfake.ACOptions{ImportsPerMinute: 1})
	bi := bulkOf(t, d)
	fake.FailNext(crmfake.Response{Method: http.MethodGet, Path: "/api/3/import/info", Status: http.StatusServiceUnavailable,
		Body: `{"message":"Service Unavailable"}`})
	for _, r := range bi.BulkImport(context.Background(), bulkContacts(10), crm.BulkOptions{}) {
		mustOK(t, r)
	}
	second := bulkContacts(12)[2:]
	for i := range second {
		second[i].Email = "again-" + second[i].Email
	}
	results := bi.BulkImport(context.Background(), second, crm.BulkOptions{})
	for _, r := range results {
		var e *crm.Error
		if crm.ClassOf(r.Err) != crm.RateLimited || !errors.As(r.Err, &e) || e.Status != http.StatusBadRequest {
			t.Fatalf("over the importer's limit: %v, want a rate limit (HTTP 400)", r.Err)
		}
	}
	var last crmfake.Request
	for _, r := range fake.Requests() {
		if r.Path == "/api/3/import/bulk_import" {
			last = r
		}
	}
	var body map[string]any
	if err := json.Unmarshal(last.Body, &body); err != nil || last.Status != http.StatusBadRequest {
		t.Errorf("last import request %d %s", last.Status, last.Body)
	}
	if len(fake.Contacts()) != 10 {
		t.Errorf("fake holds %d contacts, want the first batch's 10", len(fake.Contacts()))
	}
}

// The importer's single-contact limit is 20 a minute and its 400 carries no Retry-After: the wait is a
// slot of that minute (3 s), not the 1 s default that would hit the limit again.
func TestActiveCampaignBulkImportSingleContactLimitWaitsASlot(t *testing.T) {
	t.Parallel()
	_, d := newAC(t, crmfake.ACOptions{SingleImportsPerMinute: 1, ImportPolls: 1})
	bi := bulkOf(t, d)
	mustOK(t, bi.BulkImport(context.Background(), bulkContacts(1), crm.BulkOptions{})[0])
	second := bulkContacts(2)[1:]
	r := bi.BulkImport(context.Background(), second, crm.BulkOptions{})[0]
	var e *crm.Error
	if crm.ClassOf(r.Err) != crm.RateLimited || !errors.As(r.Err, &e) || e.RetryAfter < 3*time.Second {
		t.Errorf("second single-contact import in a minute: %v, want a rate limit waiting at least 3 s", r.Err)
	}
}

// A contact counts as written only when the import status confirms it: a row the import fails and a row it
// silently drops (listed in neither "success" nor "failure") are both sent again through the per-contact
// path, which finds any earlier write by email, so each ends in the CRM exactly once with its values.
func TestActiveCampaignBulkImportResendsFailedAndUnconfirmedRowsOnce(t *testing.T) {
	t.Parallel()
	fake, d := newAC(t, crmfake.ACOptions{ImportPolls: 1})
	batch := bulkContacts(20)
	for i := range batch {
		batch[i].FirstTouch = nil
	}
	fake.FailImportRows(1)
	fake.DropImportRows(1)
	results := bulkOf(t, d).BulkImport(context.Background(), batch, crm.BulkOptions{})
	for i, r := range results {
		mustOK(t, r)
		c, ok := fake.Contact(batch[i].Email)
		if !ok || r.RemoteID != c.ID || c.Fields["3"] != "engaged" || c.Fields["5"] != fmt.Sprint(i) {
			t.Errorf("%s: result %+v, fake %+v; want its id and values", batch[i].Email, r, c)
		}
	}
	imports := fake.BulkImports()
	if len(imports) != 1 || len(imports[0].Failed) != 1 || len(imports[0].Created) != 18 {
		t.Fatalf("imports %+v; want one import that created 18, failed 1 and dropped 1", imports)
	}
	reqs := fake.Requests()
	if n := countPath(reqs, http.MethodPost, "/api/3/contact/sync") + countPath(reqs, http.MethodPost, "/api/3/contacts"); n != 2 {
		t.Errorf("%d per-contact writes, want 2 (the failed and the dropped row)", n)
	}
	if len(fake.Contacts()) != 20 || fake.DuplicateEmails() != 0 {
		t.Errorf("fake holds %d contacts (%d duplicate emails), want 20", len(fake.Contacts()), fake.DuplicateEmails())
	}
}

// Live work in bulk never overwrites a person's edit: a contact with a new value for a field leadgate wrote
// before goes through the per-contact path, which reads first, keeps the edit and reports the conflict;
// the rest of the burst goes through the importer with the account's automations (setting "live").
func TestActiveCampaignLiveBulkImportLeavesConflictChecksToThePerContactPath(t *testing.T) {
	t.Parallel()
	fake, d := newAC(t, crmfake.ACOptions{ImportPolls: 1})
	batch := bulkContacts(12)
	for i := range batch {
		batch[i].FirstTouch = nil
	}
	edited := fake.AddContact(crmfake.ACContact{Email: batch[0].Email, Fields: map[string]string{"3": "sql"}, CDate: time.Now().Add(-time.Hour)})
	batch[0].RemoteID, batch[0].Previous = edited, map[string]string{"3": "discovered"}
	results := bulkOf(t, d).BulkImport(context.Background(), batch, crm.BulkOptions{Live: true})
	for _, r := range results {
		mustOK(t, r)
	}
	imports := fake.BulkImports()
	if len(imports) != 1 || len(imports[0].Contacts) != 11 || imports[0].ExcludeAutomations || slices.ContainsFunc(imports[0].Contacts,
		func(c crmfake.ACBulkContact) bool { return c.Email == batch[0].Email }) {
		t.Fatalf("imports %+v; want the 11 new contacts, with automations", imports)
	}
	if c, _ := fake.Contact(batch[0].Email); c.Fields["3"] != "sql" || len(results[0].Conflicts) != 1 {
		t.Errorf("edited contact %v, conflicts %v; want the person's stage kept and a conflict", c.Fields, results[0].Conflicts)
	}
}

package crmfake

import (
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"
)

// ActiveCampaign's bulk importer (POST /api/3/import/bulk_import, GET /api/3/import/info): asynchronous.
// A batch is queued with a batchId; its status reads "waiting", then "active", and it is applied and
// "completed" on the status read number ACOptions.ImportPolls (default 2). Like AC, the status of a
// completed batch lists the ids of the contacts it imported, created or updated ("success"), and the emails
// it could not import ("failure").

// ACBulkImport is one import batch as the fake received it.
type ACBulkImport struct {
	BatchID            string
	Contacts           []ACBulkContact
	ExcludeAutomations bool
	Polls              int
	Done               bool
	Created            []string // ids of contacts the batch created
	Updated            []string // ids of existing contacts it updated
	Failed             []string // emails it rejected
}

// ACBulkContact is one contact of an import batch.
type ACBulkContact struct {
	Email     string            `json:"email"`
	FirstName string            `json:"first_name"`
	LastName  string            `json:"last_name"`
	Phone     string            `json:"phone"`
	Tags      []string          `json:"tags"`
	Fields    []ACBulkFieldJSON `json:"fields"`
}

// ACBulkFieldJSON is a custom field value of an import contact: {"id": 3, "value": "SQL"}.
type ACBulkFieldJSON struct {
	ID    any    `json:"id"`
	Value string `json:"value"`
}

// BulkImports returns every import batch received, oldest first.
func (f *ActiveCampaign) BulkImports() []ACBulkImport {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := make([]ACBulkImport, 0, len(f.importOrder))
	for _, id := range f.importOrder {
		b := *f.imports[id]
		b.Contacts, b.Created, b.Updated, b.Failed = slices.Clone(b.Contacts), slices.Clone(b.Created), slices.Clone(b.Updated), slices.Clone(b.Failed)
		out = append(out, b)
	}
	return out
}

func acImportInvalid(w http.ResponseWriter, reasons []any) {
	writeJSON(w, http.StatusBadRequest, map[string]any{"success": 0,
		"message": "JSON payload did not pass validation. Please check the failureReasons.", "failureReasons": reasons})
}

// The importer's documented limits (reference/bulk-import-contacts and the help centre's "Use the Bulk
// Contact Importer API"): at most 250 contacts per request, a payload under 400,000 bytes, 100 requests a
// minute with several contacts and 20 a minute with one.
const (
	acImportMaxContacts  = 250
	acImportMaxBytes     = 400_000
	acImportsPerMinute   = 100
	acSinglesPerMinute   = 20
	acImportRateInterval = time.Minute
)

// POST /api/3/import/bulk_import: every contact needs an email; custom field entries are
// {"id": <integer field id>, "value": <string>} (a string id is refused); exclude_automations is a boolean
// and, unless true, the import starts the account's automations for every contact it writes.
func (f *ActiveCampaign) bulkImport(w http.ResponseWriter, r *http.Request) {
	raw, err := readAll(r)
	if err != nil {
		acImportInvalid(w, []any{"read body: " + err.Error()})
		return
	}
	if len(raw) >= acImportMaxBytes {
		acImportInvalid(w, []any{fmt.Sprintf("payload is %d bytes; it must be under %d bytes", len(raw), acImportMaxBytes)})
		return
	}
	var in struct {
		Contacts           []ACBulkContact `json:"contacts"`
		ExcludeAutomations *bool           `json:"exclude_automations"`
	}
	if err := json.Unmarshal(raw, &in); err != nil {
		acImportInvalid(w, []any{"JSON payload: " + err.Error()})
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if !f.admitImport(w, len(in.Contacts) == 1) {
		return
	}
	switch {
	case len(in.Contacts) == 0:
		acImportInvalid(w, []any{"contacts: at least one contact is required"})
		return
	case len(in.Contacts) > acImportMaxContacts:
		acImportInvalid(w, []any{fmt.Sprintf("contacts: at most %d contacts may be imported per request", acImportMaxContacts)})
		return
	}
	var reasons []any
	for i, c := range in.Contacts {
		if strings.TrimSpace(c.Email) == "" {
			reasons = append(reasons, map[string]any{"contact": i, "failureReason": "email is required"})
		}
		for _, fv := range c.Fields {
			if !isJSONInteger(fv.ID) {
				reasons = append(reasons, map[string]any{"contact": i, "failureReason": fmt.Sprintf("fields[].id must be an integer, got %s", fv.ID)})
			}
		}
	}
	if len(reasons) > 0 {
		acImportInvalid(w, reasons)
		return
	}
	b := &ACBulkImport{BatchID: fmt.Sprintf("00000000-0000-4000-8000-%012d", len(f.importOrder)+1), Contacts: in.Contacts,
		ExcludeAutomations: in.ExcludeAutomations != nil && *in.ExcludeAutomations}
	if f.imports == nil {
		f.imports = map[string]*ACBulkImport{}
	}
	f.imports[b.BatchID] = b
	f.importOrder = append(f.importOrder, b.BatchID)
	writeJSON(w, http.StatusOK, map[string]any{"success": 1, "queued_contacts": len(in.Contacts), "batchId": b.BatchID,
		"message": "Contact import queued"})
}

// admitImport applies the importer's per-minute limits, answering its 400 "Rate limit exceeded." (caller
// holds the lock).
func (f *ActiveCampaign) admitImport(w http.ResponseWriter, single bool) bool {
	lim := cmpInt(f.acOpts.ImportsPerMinute, acImportsPerMinute)
	kind := "multi-contact"
	if single {
		lim, kind = cmpInt(f.acOpts.SingleImportsPerMinute, acSinglesPerMinute), "single-contact"
	}
	now := time.Now()
	cut := now.Add(-acImportRateInterval)
	times := slices.DeleteFunc(f.importTimes[single], func(t time.Time) bool { return !t.After(cut) })
	if len(times) >= lim {
		f.importTimes[single] = times
		writeJSON(w, http.StatusBadRequest, map[string]any{"success": 0, "message": "Rate limit exceeded.",
			"failureReasons": []string{fmt.Sprintf("Up to %d %s imports may be requested per minute.", lim, kind)}})
		return false
	}
	f.importTimes[single] = append(times, now)
	return true
}

func cmpInt(v, def int) int {
	if v > 0 {
		return v
	}
	return def
}

// isJSONInteger reports whether a decoded JSON value is an integer number (not a string of digits).
func isJSONInteger(v any) bool {
	n, ok := v.(float64)
	return ok && n == float64(int64(n)) && n > 0
}

// GET /api/3/import/info?batchId=
func (f *ActiveCampaign) bulkImportInfo(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	defer f.mu.Unlock()
	b := f.imports[r.URL.Query().Get("batchId")]
	if b == nil {
		acNotFound(w, "import batch", r.URL.Query().Get("batchId"))
		return
	}
	b.Polls++
	polls := f.acOpts.ImportPolls
	if polls <= 0 {
		polls = 2
	}
	if !b.Done && b.Polls >= polls {
		f.runImport(r, b)
	}
	switch {
	case b.Done:
		writeJSON(w, http.StatusOK, map[string]any{"status": "completed", "success": nonNil(append(slices.Clone(b.Created), b.Updated...)),
			"failure": nonNil(b.Failed)})
	case b.Polls == 1:
		writeJSON(w, http.StatusOK, map[string]any{"status": "waiting", "success": []string{}, "failure": []string{}})
	default:
		writeJSON(w, http.StatusOK, map[string]any{"status": "active", "success": []string{}, "failure": []string{}})
	}
}

// runImport applies a batch: each contact is matched by email, updated or created (caller holds the lock).
// An invalid email or an unknown field id fails that contact only.
func (f *ActiveCampaign) runImport(r *http.Request, b *ACBulkImport) {
	b.Done = true
	for _, in := range b.Contacts {
		email := strings.ToLower(strings.TrimSpace(in.Email))
		valid := strings.Contains(email, "@")
		for _, fv := range in.Fields {
			id := anyString(fv.ID)
			valid = valid && slices.ContainsFunc(f.acOpts.Fields, func(x ACField) bool { return x.ID == id })
		}
		switch {
		case !valid || f.importFail > 0:
			f.importFail = max(f.importFail-1, 0)
			b.Failed = append(b.Failed, in.Email)
			continue
		case f.importDrop > 0:
			f.importDrop--
			continue
		}
		c := f.byEmail(email)
		created := c == nil
		if created {
			c = f.addContact()
			c.Email = email
			b.Created = append(b.Created, c.ID)
		} else {
			b.Updated = append(b.Updated, c.ID)
		}
		for dst, v := range map[*string]string{&c.FirstName: in.FirstName, &c.LastName: in.LastName, &c.Phone: in.Phone} {
			if v != "" {
				*dst = v
			}
		}
		m := ACMutation{Time: time.Now(), Method: r.Method, Path: "/api/3/import/bulk_import", ContactID: c.ID, FieldValues: map[string]string{}}
		for _, fv := range in.Fields {
			c.Fields[anyString(fv.ID)] = fv.Value
			m.FieldValues[anyString(fv.ID)] = fv.Value
		}
		for _, t := range in.Tags {
			if t = strings.TrimSpace(t); t != "" && !hasTag(c, t) {
				id := f.tagIDOf(t)
				if id == "" {
					id = f.newID()
					f.tags[id] = t // the importer creates missing tags
				}
				c.Tags = append(c.Tags, f.tags[id])
			}
		}
		c.UDate = time.Now()
		f.mutations = append(f.mutations, m)
		if !b.ExcludeAutomations {
			f.runAutomations(c.ID, created, "/api/3/import/bulk_import")
		}
	}
}

// FailImportRows makes the importer fail the next n valid contacts it applies (listed in the status's
// "failure", nothing written), as AC does for a row it cannot take.
func (f *ActiveCampaign) FailImportRows(n int) {
	f.mu.Lock()
	f.importFail += n
	f.mu.Unlock()
}

// DropImportRows makes the importer skip the next n valid contacts it applies without a trace: nothing
// written and neither "success" nor "failure" lists them (an answer that cannot be trusted).
func (f *ActiveCampaign) DropImportRows(n int) {
	f.mu.Lock()
	f.importDrop += n
	f.mu.Unlock()
}

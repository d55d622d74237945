package crmfake

import (
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"
)

// ActiveCampaign's bulk importer (POST /api/3/import/bulk_import, GET /api/3/import/info): asynchronous.
// A batch is queued with a batchId; its status reads "waiting", then "active", and it is applied and
// "completed" on the status read number ACOptions.ImportPolls (default 2). Like AC, the status of a
// completed batch lists the ids of the contacts it created ("success") and the emails it could not import
// ("failure"); updated contacts appear in neither.

// ACBulkImport is one import batch as the fake received it.
type ACBulkImport struct {
	BatchID  string
	Contacts []ACBulkContact
	Polls    int
	Done     bool
	Created  []string // ids of contacts the batch created
	Failed   []string // emails it rejected
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
		b.Contacts, b.Created, b.Failed = slices.Clone(b.Contacts), slices.Clone(b.Created), slices.Clone(b.Failed)
		out = append(out, b)
	}
	return out
}

func acImportInvalid(w http.ResponseWriter, reasons []any) {
	writeJSON(w, http.StatusBadRequest, map[string]any{"success": 0,
		"message": "JSON payload did not pass validation. Please check the failureReasons.", "failureReasons": reasons})
}

// POST /api/3/import/bulk_import
func (f *ActiveCampaign) bulkImport(w http.ResponseWriter, r *http.Request) {
	var in struct {
		Contacts           []ACBulkContact `json:"contacts"`
		ExcludeAutomations bool            `json:"exclude_automations"`
	}
	if !decode(w, r, &in, func(w http.ResponseWriter, msg string) { acImportInvalid(w, []any{msg}) }) {
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if lim := f.acOpts.ImportsPerMinute; lim > 0 {
		cut := time.Now().Add(-time.Minute)
		f.importTimes = slices.DeleteFunc(f.importTimes, func(t time.Time) bool { return !t.After(cut) })
		if len(f.importTimes) >= lim {
			writeJSON(w, http.StatusBadRequest, map[string]any{"success": 0, "message": "Rate limit exceeded.",
				"failureReasons": []string{fmt.Sprintf("Up to %d imports may be requested per minute.", lim)}})
			return
		}
		f.importTimes = append(f.importTimes, time.Now())
	}
	switch {
	case len(in.Contacts) == 0:
		acImportInvalid(w, []any{"contacts: at least one contact is required"})
		return
	case len(in.Contacts) > 250:
		acImportInvalid(w, []any{"contacts: at most 250 contacts may be imported per request"})
		return
	}
	var reasons []any
	for i, c := range in.Contacts {
		if strings.TrimSpace(c.Email) == "" {
			reasons = append(reasons, map[string]any{"contact": i, "failureReason": "email is required"})
		}
	}
	if len(reasons) > 0 {
		acImportInvalid(w, reasons)
		return
	}
	b := &ACBulkImport{BatchID: fmt.Sprintf("00000000-0000-4000-8000-%012d", len(f.importOrder)+1), Contacts: in.Contacts}
	if f.imports == nil {
		f.imports = map[string]*ACBulkImport{}
	}
	f.imports[b.BatchID] = b
	f.importOrder = append(f.importOrder, b.BatchID)
	writeJSON(w, http.StatusOK, map[string]any{"success": 1, "queued_contacts": len(in.Contacts), "batchId": b.BatchID,
		"message": "Contact import queued"})
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
		writeJSON(w, http.StatusOK, map[string]any{"status": "completed", "success": nonNil(b.Created), "failure": nonNil(b.Failed)})
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
		if !valid {
			b.Failed = append(b.Failed, in.Email)
			continue
		}
		c := f.byEmail(email)
		if c == nil {
			c = &ACContact{ID: f.newID(), Email: email, Fields: map[string]string{}, CDate: time.Now()}
			f.contacts[c.ID] = c
			f.order = append(f.order, c.ID)
			b.Created = append(b.Created, c.ID)
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
			if t = strings.TrimSpace(t); t != "" && !slices.Contains(c.Tags, t) {
				if f.tagIDOf(t) == "" {
					f.tags[f.newID()] = t // the importer creates missing tags
				}
				c.Tags = append(c.Tags, t)
			}
		}
		c.UDate = time.Now()
		f.mutations = append(f.mutations, m)
	}
}

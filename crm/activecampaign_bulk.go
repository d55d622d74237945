package crm

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"
)

// BulkImporter is an adapter with an asynchronous bulk import for backfills and resyncs (ActiveCampaign's
// POST /import/bulk_import). Live sync never uses it: the import is queued on the CRM's side and takes
// seconds to minutes, and it cannot detect human edits (see BulkImport).
type BulkImporter interface {
	// BulkLimits is the smallest batch worth importing in bulk (smaller ones go through Upsert) and the
	// largest one request may carry.
	BulkLimits() (min, max int)
	// BulkImport writes the batch through the bulk importer and waits for it to finish; results are in
	// batch order, like Upsert's.
	BulkImport(ctx context.Context, batch []Contact) []Result
}

// ActiveCampaign's documented importer limits: at most 250 contacts per request; for 10 or fewer the
// Contacts API is the right tool.
const (
	acBulkMin = 10
	acBulkMax = 250
)

// acBulkPoll is how long BulkImport waits before status read n (from 0): 1 s, 2 s, 4 s, then every 8 s. AC
// asks for a short delay before the first one (a status read at once may answer "status": false).
func acBulkPoll(n int) time.Duration {
	return time.Second << min(n, 3)
}

// acBulkTimeout bounds the wait for one import batch; a batch still queued after it is retried later.
const acBulkTimeout = 15 * time.Minute

func (a *activeCampaign) BulkLimits() (int, int) { return acBulkMin, acBulkMax }

type acBulkContact struct {
	Email     string        `json:"email"`
	FirstName string        `json:"first_name,omitempty"`
	LastName  string        `json:"last_name,omitempty"`
	Phone     string        `json:"phone,omitempty"`
	Tags      []string      `json:"tags,omitempty"`
	Fields    []acBulkField `json:"fields,omitempty"`
}

type acBulkField struct {
	ID    flexString `json:"id"`
	Value string     `json:"value"`
}

// BulkImport sends the batch in one bulk import and follows its batch id until AC reports it done.
//
// What it writes differs from Upsert, which reads every contact first: the importer overwrites without
// looking, so it sends only what leadgate has not written before (a value equal to what leadgate last
// wrote is left alone: the CRM still holds it, or a person changed it and that change must stand), never
// first-touch fields (they are set only where empty, which needs a read) and never removes tags. A person
// editing a field between leadgate's last write and the import, when leadgate also has a new value for
// it, is not detected (the per-contact path would record a conflict): docs/crm-sync.md.
//
// Contacts the importer cannot carry go through Upsert in the same call: those without an email (the
// importer keys on it), in deal mode (deals need per-contact calls), with a note or a tag to remove. A
// contact the import reports as failed is retried through Upsert too, which gives its exact error.
// Remote ids: known ones are kept; the import status lists the ids of created contacts (read back in
// pages of 100 to learn their emails); any other is looked up by email.
func (a *activeCampaign) BulkImport(ctx context.Context, batch []Contact) []Result {
	out := make([]Result, len(batch))
	var bulk, single []int
	for i, c := range batch {
		out[i] = Result{LeadgateID: c.LeadgateID, RemoteID: c.RemoteID, Written: c.Previous}
		if a.bulkable(c) {
			bulk = append(bulk, i)
		} else {
			single = append(single, i)
		}
	}
	if len(bulk) > acBulkMax {
		single = append(single, bulk[acBulkMax:]...)
		bulk = bulk[:acBulkMax]
	}
	if len(bulk) < acBulkMin {
		single, bulk = append(single, bulk...), nil
	}
	if len(bulk) > 0 {
		failed := a.bulkImport(ctx, batch, bulk, out)
		single = append(single, failed...)
	}
	slices.Sort(single)
	if len(single) > 0 {
		cs := make([]Contact, len(single))
		for j, i := range single {
			cs[j] = batch[i]
		}
		for j, res := range a.Upsert(ctx, cs) {
			res.Calls += out[single[j]].Calls
			out[single[j]] = res
		}
	}
	return out
}

// bulkable reports whether the importer can carry c exactly.
func (a *activeCampaign) bulkable(c Contact) bool {
	if c.Email == "" || a.cfg.StageMode == StageModeDeal || noteToAppend(c) != "" {
		return false
	}
	_, remove, _ := tagChanges(c.Tags, c.Previous)
	return len(remove) == 0
}

// bulkImport imports batch[idx...] and fills their results; it returns the indexes that must go through
// Upsert (reported as failed by the import).
func (a *activeCampaign) bulkImport(ctx context.Context, batch []Contact, idx []int, out []Result) []int {
	calls := 0
	fail := func(err error) []int {
		share(out, idx, calls)
		for _, i := range idx {
			out[i].Err = err
		}
		return nil
	}
	refs := []string{a.cfg.LoopField, a.cfg.SyncField}
	wants := make([][]want, len(batch))
	for _, i := range idx {
		w, err := a.cfg.wants(batch[i], acNative)
		if err != nil {
			out[i].Err = err
			continue
		}
		wants[i] = w
		refs = append(refs, a.fieldRefs(w)...)
	}
	ids, err := a.resolveFields(ctx, refs, &calls)
	if err != nil {
		return fail(err)
	}
	body := struct {
		Contacts           []acBulkContact `json:"contacts"`
		ExcludeAutomations bool            `json:"exclude_automations"`
	}{ExcludeAutomations: false}
	written := map[int]map[string]string{}
	var sent []int
	for _, i := range idx {
		if out[i].Err != nil {
			continue
		}
		bc, w := a.bulkContact(batch[i], wants[i], ids)
		body.Contacts = append(body.Contacts, bc)
		written[i] = w
		sent = append(sent, i)
	}
	idx = sent
	if len(idx) == 0 {
		return nil
	}
	var queued struct {
		Success flexString `json:"success"`
		BatchID string     `json:"batchId"`
	}
	if _, err := a.api.do(ctx, call{method: http.MethodPost, path: "/import/bulk_import", in: body, out: &queued}, &calls); err != nil {
		return fail(err)
	}
	if queued.BatchID == "" {
		return fail(&Error{Class: Transient, Message: "activecampaign: bulk import: response has no batchId"})
	}
	status, err := a.bulkWait(ctx, queued.BatchID, &calls)
	if err != nil {
		return fail(err)
	}
	failedEmail := map[string]bool{}
	for _, e := range status.Failure {
		failedEmail[strings.ToLower(strings.TrimSpace(e))] = true
	}
	emailIDs, err := a.createdIDs(ctx, status.Success, &calls)
	if err != nil {
		return fail(err)
	}
	var retry []int
	for _, i := range idx {
		c := batch[i]
		email := strings.ToLower(c.Email)
		if failedEmail[email] {
			retry = append(retry, i)
			continue
		}
		if id, ok := emailIDs[email]; ok {
			out[i].RemoteID, out[i].Created = id, true
		} else if out[i].RemoteID == "" {
			id, err := a.search(ctx, Contact{Email: c.Email}, &calls)
			if err != nil {
				out[i].Err = err
				continue
			}
			if id == "" {
				// Reported imported, yet not found: the import status and the contact list disagree. Resend.
				out[i].Err = &Error{Class: Transient, Message: "activecampaign: bulk import " + queued.BatchID + ": " + c.Email + " not found after import"}
				continue
			}
			out[i].RemoteID = id
		}
		out[i].Written = written[i]
	}
	share(out, idx, calls)
	return retry
}

// bulkContact is c as the importer takes it, and the next Previous.
func (a *activeCampaign) bulkContact(c Contact, wants []want, ids map[string]string) (acBulkContact, map[string]string) {
	w := map[string]string{}
	for k, v := range c.Previous {
		w[k] = v
	}
	bc := acBulkContact{Email: c.Email}
	for _, x := range wants {
		if x.firstTouch || (hasPrev(c.Previous, x.key) && sameValue(c.Previous[x.key], x.value)) {
			continue
		}
		w[x.key] = x.value
		switch x.key {
		case "email":
		case "phone":
			bc.Phone = x.value
		case "firstName":
			bc.FirstName = x.value
		case "lastName":
			bc.LastName = x.value
		default:
			bc.Fields = append(bc.Fields, acBulkField{ID: flexString(ids[x.key]), Value: x.value})
		}
	}
	bc.Fields = append(bc.Fields,
		acBulkField{ID: flexString(ids[a.cfg.LoopField]), Value: LoopValue},
		acBulkField{ID: flexString(ids[a.cfg.SyncField]), Value: syncStamp(a.cfg)})
	add, _, joined := tagChanges(c.Tags, c.Previous)
	bc.Tags = add
	if joined != "" || w[PrevTags] != "" {
		w[PrevTags] = joined
	}
	return bc, w
}

// share attributes calls spent on a bulk request to each of its contacts (like a batch request).
func share(out []Result, idx []int, calls int) {
	for _, i := range idx {
		out[i].Calls += calls
	}
}

type acBulkStatus struct {
	Status  any          `json:"status"` // a string, or false right after the import was queued
	Success []flexString `json:"success"`
	Failure []string     `json:"failure"`
}

// bulkWait reads GET /import/info?batchId= until the batch is completed. failed and interrupted batches
// are transient failures: the items are retried (AC will not retry them itself).
func (a *activeCampaign) bulkWait(ctx context.Context, batchID string, calls *int) (acBulkStatus, error) {
	ctx, cancel := context.WithTimeout(ctx, acBulkTimeout)
	defer cancel()
	for n := 0; ; n++ {
		wait := acBulkPoll(n)
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return acBulkStatus{}, transportError(ctx, "activecampaign: wait for bulk import "+batchID, ctx.Err())
		case <-t.C:
		}
		var st acBulkStatus
		q := url.Values{"batchId": {batchID}}
		if _, err := a.api.do(ctx, call{method: http.MethodGet, path: "/import/info", query: q, out: &st}, calls); err != nil {
			if ClassOf(err) == Transient {
				continue // a 503 while polling: the import itself is unaffected
			}
			return acBulkStatus{}, err
		}
		switch s, _ := st.Status.(string); s {
		case "completed":
			return st, nil
		case "failed", "interrupted":
			return st, &Error{Class: Transient, Message: fmt.Sprintf("activecampaign: bulk import %s %s", batchID, s)}
		}
	}
}

// createdIDs reads the contacts the import created (GET /contacts?ids=, 100 a page) and maps their emails
// to ids.
func (a *activeCampaign) createdIDs(ctx context.Context, ids []flexString, calls *int) (map[string]string, error) {
	out := map[string]string{}
	for start := 0; start < len(ids); start += 100 {
		page := ids[start:min(start+100, len(ids))]
		parts := make([]string, len(page))
		for i, id := range page {
			parts[i] = string(id)
		}
		var res struct {
			Contacts []acContact `json:"contacts"`
		}
		q := url.Values{"ids": {strings.Join(parts, ",")}, "limit": {"100"}}
		if _, err := a.api.do(ctx, call{method: http.MethodGet, path: "/contacts", query: q, out: &res}, calls); err != nil {
			return nil, err
		}
		for _, c := range res.Contacts {
			out[strings.ToLower(strings.TrimSpace(c.Email))] = string(c.ID)
		}
	}
	return out, nil
}

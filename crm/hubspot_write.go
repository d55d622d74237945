package crm

import (
	"context"
	"maps"
	"net/http"
	"regexp"
	"strings"
	"time"
)

// hsExistingIDPattern finds the existing object's id in a HubSpot CONFLICT message:
// "Contact already exists. Existing ID: 37765128953".
var hsExistingIDPattern = regexp.MustCompile(`(?i)existing\s+id:?\s*([0-9]+)`)

// hsExistingID returns the id HubSpot names in a 409 / CONFLICT message, or "".
func hsExistingID(msg string) string {
	if m := hsExistingIDPattern.FindStringSubmatch(msg); m != nil {
		return m[1]
	}
	return ""
}

// Kinds of contact write.
const (
	hsUpdate = "update" // batch update by record id
	hsUpsert = "upsert" // batch upsert by email
	hsCreate = "create" // single create of a phone-only contact
)

// write sends the planned writes: a batch update for contacts with an id, a batch upsert by email for new
// contacts with an email, one create per new phone-only contact; then updates for contacts whose create
// hit a conflict (by the existing id) and the second half of backward lifecycle moves.
func (h *hubSpot) write(ctx context.Context, items []*hsItem) error {
	var updates, upserts, creates []*hsItem
	for _, it := range live(items) {
		switch {
		case it.id != "":
			if len(it.p.writes) > 0 {
				updates = append(updates, it)
			}
		case it.c.Email != "":
			upserts = append(upserts, it)
		default:
			creates = append(creates, it)
		}
	}
	stamp := syncStamp(h.cfg)
	props := func(it *hsItem) map[string]string {
		p := maps.Clone(it.p.writes)
		p[h.cfg.LoopField], p[h.cfg.SyncField] = LoopValue, stamp
		return p
	}
	if err := h.batchWrite(ctx, hsUpdate, updates, props); err != nil {
		return err
	}
	if err := h.batchWrite(ctx, hsUpsert, upserts, props); err != nil {
		return err
	}
	for _, it := range creates {
		if err := h.create(ctx, it, props); err != nil {
			if destinationFault(err) {
				return err
			}
			it.fail(err)
		}
	}
	// Conflicts found while inserting: the contact exists under the id HubSpot named. Read it there and
	// plan again (first-touch fields and human edits must be respected), then update it by id.
	if err := h.retryByID(ctx, items, props); err != nil {
		return err
	}
	var backward []*hsItem
	for _, it := range live(items) {
		if it.backward != "" {
			backward = append(backward, it)
		}
	}
	return h.batchWrite(ctx, hsUpdate, backward, func(it *hsItem) map[string]string {
		return map[string]string{hsLifecycle: it.backward, h.cfg.LoopField: LoopValue, h.cfg.SyncField: stamp}
	})
}

// batchWrite sends one batch update (by id) or upsert (by email). A batch-wide validation error is retried
// input by input so one bad contact does not fail the rest; a fault of the destination (rate, quota,
// credentials, setup) is returned for the whole batch. An answer that cannot be trusted (a timeout, a 5xx,
// a body that does not decode, inputs missing from a COMPLETE answer) is checked with a read before
// anything is retried: what the read shows written is recorded as written, the rest fails.
func (h *hubSpot) batchWrite(ctx context.Context, kind string, items []*hsItem, props func(*hsItem) map[string]string) error {
	if len(items) == 0 {
		return nil
	}
	inputs := make([]hsInput, len(items))
	for i, it := range items {
		if kind == hsUpsert {
			inputs[i] = hsInput{ID: it.c.Email, IDProperty: "email", Properties: props(it), TraceID: it.c.LeadgateID}
		} else {
			inputs[i] = hsInput{ID: it.id, Properties: props(it)}
		}
	}
	var out hsBatchOut
	calls := 0
	_, err := h.do(ctx, call{method: http.MethodPost, path: "/crm/v3/objects/contacts/batch/" + kind,
		in: map[string]any{"inputs": inputs}, out: &out}, &calls)
	addCalls(items, calls)
	if err != nil {
		switch c := ClassOf(err); {
		case destinationFault(err):
			return err
		case c == Invalid && len(items) > 1:
			for _, it := range items {
				if err := h.batchWrite(ctx, kind, []*hsItem{it}, props); err != nil {
					return err
				}
			}
		case c == Transient:
			h.verifyWrites(ctx, kind, items, props, func(it *hsItem) error {
				return &Error{Class: Transient, Status: statusOf(err), RetryAfter: retryAfterOf(err),
					Message: err.Error() + "; a read shows contact " + it.c.LeadgateID + " was not written"}
			})
		default:
			for _, it := range items {
				it.fail(err)
			}
		}
		return nil
	}
	if missing := h.applyBatchOut(kind, items, out); len(missing) > 0 {
		h.verifyWrites(ctx, kind, missing, props, func(it *hsItem) error {
			return &Error{Class: Transient, Status: http.StatusOK, Message: "hubspot: batch " + kind + " answered " + cmpStatus(out.Status) +
				" with no result and no error for contact " + it.c.LeadgateID + ", and a read shows it was not written (a silent no-op)"}
		})
	}
	return nil
}

func cmpStatus(s string) string {
	if s == "" {
		return "without a status"
	}
	return s
}

// applyBatchOut matches results and per-input errors (a 207) to the items and returns the items the answer
// says nothing about.
func (h *hubSpot) applyBatchOut(kind string, items []*hsItem, out hsBatchOut) []*hsItem {
	byKey := map[string]*hsItem{}
	for _, it := range items {
		if kind == hsUpsert {
			byKey[it.c.LeadgateID] = it
			byKey[strings.ToLower(it.c.Email)] = it
		} else {
			byKey[it.id] = it
		}
	}
	seen := map[*hsItem]bool{}
	for _, o := range out.Results {
		it := byKey[o.TraceID]
		if it == nil {
			if e := o.Properties["email"]; kind == hsUpsert && e != nil {
				it = byKey[strings.ToLower(strings.TrimSpace(*e))]
			} else {
				it = byKey[string(o.ID)]
			}
		}
		if it == nil || seen[it] {
			continue
		}
		seen[it] = true
		if kind == hsUpsert {
			it.id, it.res.Created = string(o.ID), o.New
		}
	}
	for _, e := range out.Errors {
		for _, it := range matchErr(e, byKey) {
			seen[it] = true
			if id := hsExistingID(e.Message); strings.EqualFold(e.Category, "CONFLICT") && id != "" && it.remote == nil {
				it.id, it.conflictID = id, true // read and updated by id in write's retry round
				continue
			}
			it.fail(h.batchErrClass(e))
		}
	}
	var missing []*hsItem
	for _, it := range items {
		if !seen[it] {
			missing = append(missing, it)
		}
	}
	return missing
}

// matchErr finds the items a 207 error is about, from its context (objectWriteTraceId, ids, id) or id.
func matchErr(e hsBatchErr, byKey map[string]*hsItem) []*hsItem {
	var keys []string
	for _, k := range []string{"objectWriteTraceId", "ids", "id", "email", "fromObjectId"} {
		keys = append(keys, e.Context[k]...)
	}
	if e.ID != "" {
		keys = append(keys, e.ID)
	}
	var out []*hsItem
	seen := map[*hsItem]bool{}
	for _, k := range keys {
		it := byKey[k]
		if it == nil {
			it = byKey[strings.ToLower(strings.TrimSpace(k))]
		}
		if it != nil && !seen[it] {
			seen[it] = true
			out = append(out, it)
		}
	}
	return out
}

// create inserts a phone-only contact (SimplePublicObjectInputForCreate: properties and associations are
// both required). A 409 names the existing contact: it is then updated by that id. An answer that cannot
// be trusted is checked with a search before anything is retried.
func (h *hubSpot) create(ctx context.Context, it *hsItem, props func(*hsItem) map[string]string) error {
	var out hsObject
	_, err := h.do(ctx, call{method: http.MethodPost, path: "/crm/v3/objects/contacts",
		in: map[string]any{"properties": props(it), "associations": []any{}}, out: &out}, &it.res.Calls)
	if e, ok := err.(*Error); ok && e.ExistingID != "" {
		it.id, it.conflictID = e.ExistingID, true
		return nil
	}
	if err != nil && ClassOf(err) == Transient {
		h.verifyWrites(ctx, hsCreate, []*hsItem{it}, props, func(it *hsItem) error {
			// HubSpot's search index lags writes by seconds: the retry waits for it, and looks the
			// contact up again before it creates anything.
			return &Error{Class: Transient, Status: statusOf(err), RetryAfter: max(retryAfterOf(err), hsSearchLag),
				Message: err.Error() + "; a search does not show contact " + it.c.LeadgateID + " yet"}
		})
		return nil
	}
	if err != nil {
		return err
	}
	it.id, it.res.Created = string(out.ID), true
	return nil
}

// notes appends each contact's new submission note in one batch create, associated to the contact.
func (h *hubSpot) notes(ctx context.Context, items []*hsItem) {
	var with []*hsItem
	var inputs []any
	stamp := syncStamp(h.cfg)
	for _, it := range live(items) {
		note := noteToAppend(it.c)
		if note == "" || it.id == "" {
			continue
		}
		with = append(with, it)
		inputs = append(inputs, map[string]any{
			"properties": map[string]string{"hs_note_body": note, "hs_timestamp": stamp},
			"associations": []any{map[string]any{
				"to":    map[string]string{"id": it.id},
				"types": []any{map[string]any{"associationCategory": "HUBSPOT_DEFINED", "associationTypeId": hsNoteAssociation}},
			}},
		})
	}
	if len(with) == 0 {
		return
	}
	calls := 0
	_, err := h.do(ctx, call{method: http.MethodPost, path: "/crm/v3/objects/notes/batch/create",
		in: map[string]any{"inputs": inputs}}, &calls)
	for _, it := range with {
		it.res.Calls += calls
		if err != nil {
			it.fail(err)
			continue
		}
		it.p.written[PrevNote] = noteToAppend(it.c)
	}
}

// retryByID reads the contacts whose insert hit a conflict, re-plans them and updates them by id.
func (h *hubSpot) retryByID(ctx context.Context, items []*hsItem, props func(*hsItem) map[string]string) error {
	var retry []*hsItem
	for _, it := range live(items) {
		if it.conflictID {
			retry = append(retry, it)
		}
	}
	if len(retry) == 0 {
		return nil
	}
	found, err := h.batchRead(ctx, retry, "", h.properties(retry), func(it *hsItem) string { return it.id })
	if err != nil {
		return err
	}
	var updates []*hsItem
	for _, it := range retry {
		o, ok := found[it.id]
		if !ok {
			it.fail(&Error{Class: NotFound, Status: http.StatusNotFound, Message: "hubspot: conflicting contact " + it.id + " not found"})
			continue
		}
		it.remote = o.values()
		h.plan(ctx, it)
		if len(it.p.writes) > 0 {
			updates = append(updates, it)
		}
	}
	return h.batchWrite(ctx, hsUpdate, updates, props)
}

func statusOf(err error) int {
	if e, ok := err.(*Error); ok {
		return e.Status
	}
	return 0
}

func retryAfterOf(err error) time.Duration {
	if e, ok := err.(*Error); ok {
		return e.RetryAfter
	}
	return 0
}

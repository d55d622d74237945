package crm

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
)

// acRemote is what ActiveCampaign holds for one contact, keyed like Contact.Previous. fieldsRead is false
// when only the contact's native fields are known (found by a search whose answer carries no field values).
type acRemote struct {
	id         string
	values     map[string]string
	fieldsRead bool
}

type acContact struct {
	ID        flexString `json:"id"`
	Email     string     `json:"email"`
	Phone     string     `json:"phone"`
	FirstName string     `json:"firstName"`
	LastName  string     `json:"lastName"`
}

func (c acContact) values() map[string]string {
	return map[string]string{"email": c.Email, "phone": c.Phone, "firstName": c.FirstName, "lastName": c.LastName}
}

// find reads the contact by remote id, else searches by email, then phone. An unknown remote id is a
// NotFound error: a contact we created is never re-searched (it may have been deleted or merged on purpose).
// A contact found by a search is always read for its custom field values: it may be our own write whose
// answer was lost (a crash after the CRM accepted it), and only its values tell that it already holds what
// we want, so the resend writes nothing.
func (a *activeCampaign) find(ctx context.Context, c Contact, ids map[string]string, calls *int) (acRemote, error) {
	if c.RemoteID != "" {
		return a.get(ctx, c.RemoteID, ids, calls)
	}
	found, err := a.search(ctx, c, calls)
	if err != nil || found.ID == "" {
		return acRemote{}, err
	}
	return a.get(ctx, string(found.ID), ids, calls)
}

// search finds the contact by exact email, then by phone. The phone is looked up when the lead has no
// email, or when the account holds phone-only contacts (AllowNullEmail): elsewhere every contact has an
// email, so a phone match with another email is another person and the look-up would only cost requests.
func (a *activeCampaign) search(ctx context.Context, c Contact, calls *int) (acContact, error) {
	if c.Email != "" {
		var out struct {
			Contacts []acContact `json:"contacts"`
		}
		q := url.Values{"email": {c.Email}}
		if _, err := a.api.do(ctx, call{method: http.MethodGet, path: "/contacts", query: q, out: &out}, calls); err != nil {
			return acContact{}, err
		}
		for _, r := range out.Contacts {
			if strings.EqualFold(strings.TrimSpace(r.Email), c.Email) {
				return r, nil
			}
		}
	}
	if c.Phone == "" || (c.Email != "" && !a.cfg.AllowNullEmail) {
		return acContact{}, nil
	}
	return a.searchPhone(ctx, c, calls)
}

// searchPhone finds the contact by phone. ActiveCampaign keeps a phone as it was typed and its `phone`
// filter is a prefix match on that string (reference/list-all-contacts: "phone number starts with the
// given value"), so each form a person may have typed (PhoneForms, most likely first) is looked up until
// one returns the same number (samePhone). A form that starts with an earlier looked-up form adds nothing
// and is skipped. A match that carries a different email is another person sharing a phone: not ours. Of
// several matches the oldest wins.
func (a *activeCampaign) searchPhone(ctx context.Context, c Contact, calls *int) (acContact, error) {
	forms := PhoneForms(c.Phone)
	if len(forms) == 0 {
		forms = []string{c.Phone}
	}
	var asked []string
	for _, form := range forms {
		if slices.ContainsFunc(asked, func(p string) bool { return strings.HasPrefix(form, p) }) {
			continue
		}
		asked = append(asked, form)
		hits, err := acListAll[acContact](ctx, a.api, "/contacts", url.Values{"phone": {form}}, "contacts", calls)
		if err != nil {
			return acContact{}, err
		}
		var best acContact
		for _, r := range hits {
			if !samePhone(r.Phone, c.Phone) || (c.Email != "" && r.Email != "" && !strings.EqualFold(r.Email, c.Email)) {
				continue
			}
			if best.ID == "" || lessID(string(r.ID), string(best.ID)) {
				best = r
			}
		}
		if best.ID != "" {
			return best, nil
		}
	}
	return acContact{}, nil
}

// get reads one contact with its custom field values.
func (a *activeCampaign) get(ctx context.Context, id string, ids map[string]string, calls *int) (acRemote, error) {
	var out struct {
		Contact     acContact      `json:"contact"`
		FieldValues []acFieldValue `json:"fieldValues"`
	}
	if _, err := a.api.do(ctx, call{method: http.MethodGet, path: "/contacts/" + pathID(id), out: &out}, calls); err != nil {
		return acRemote{}, err
	}
	r := acRemote{id: id, values: out.Contact.values(), fieldsRead: true}
	byID := map[string][]string{}
	for ref, fid := range ids {
		byID[fid] = append(byID[fid], ref)
	}
	for _, fv := range out.FieldValues {
		for _, ref := range byID[string(fv.Field)] {
			r.values[ref] = fv.Value
		}
	}
	return r, nil
}

// lessID orders numeric ids numerically, others lexically.
func lessID(a, b string) bool {
	x, errA := strconv.ParseInt(a, 10, 64)
	y, errB := strconv.ParseInt(b, 10, 64)
	if errA == nil && errB == nil {
		return x < y
	}
	return a < b
}

type acField struct {
	ID      flexString `json:"id"`
	Title   string     `json:"title"`
	Perstag string     `json:"perstag"`
	Type    string     `json:"type"`
}

// resolveFields maps custom field references to AC field ids: an id, or a field's perstag or title
// (case-insensitive, %PERSTAG% accepted). Every reference is checked against the account's field list
// (loaded once per adapter, reloaded once when a reference is not in it): a reference the account lacks
// is a Setup fault of the destination, named in plain words, since every contact would fail the same way.
func (a *activeCampaign) resolveFields(ctx context.Context, refs []string, calls *int) (map[string]string, error) {
	ids := map[string]string{}
	if len(refs) == 0 {
		return ids, nil
	}
	for attempt := 0; ; attempt++ {
		known, cached, err := a.fieldIndex(ctx, calls)
		if err != nil {
			return nil, err
		}
		var missing []string
		for _, ref := range refs {
			if id, ok := known[fieldKey(ref)]; ok {
				ids[ref] = id
			} else if !slices.Contains(missing, ref) {
				missing = append(missing, ref)
			}
		}
		if len(missing) == 0 {
			return ids, nil
		}
		a.forgetFields() // the next contact sees fields created since
		if cached && attempt == 0 {
			continue
		}
		return nil, a.missingFields(missing)
	}
}

// missingFields is the Setup fault naming every field the account lacks and where leadgate's settings
// name it.
func (a *activeCampaign) missingFields(missing []string) *Error {
	var parts []string
	loop := false
	for _, ref := range missing {
		parts = append(parts, fmt.Sprintf("%q (%s)", ref, a.fieldSetting(ref)))
		loop = loop || ref == a.cfg.LoopField || ref == a.cfg.SyncField
	}
	msg := "activecampaign: the account has no custom field " + strings.Join(parts, ", ")
	if loop {
		msg += ". " + loopInstructions("ActiveCampaign (Contacts > Fields)", a.cfg.LoopField, a.cfg.SyncField) +
			" leadgate can create them: POST .../loop-fields"
	} else {
		msg += ": create it in ActiveCampaign (Contacts > Fields) or change the destination's mapping"
	}
	return &Error{Class: Setup, Message: msg}
}

// fieldSetting names the destination setting a field reference comes from.
func (a *activeCampaign) fieldSetting(ref string) string {
	switch ref {
	case a.cfg.LoopField:
		return "loop_field"
	case a.cfg.SyncField:
		return "sync_field"
	case a.cfg.StageField:
		return "stage_field"
	}
	for _, name := range sortedKeys(a.cfg.FieldMap) {
		if a.cfg.FieldMap[name] == ref {
			return "field_map[" + name + "]"
		}
	}
	return "mapping"
}

// fieldIndex returns id, perstag and title (normalized) -> id, loading GET /fields once; cached says the
// index came from an earlier load.
func (a *activeCampaign) fieldIndex(ctx context.Context, calls *int) (idx map[string]string, cached bool, err error) {
	a.mu.Lock()
	idx = a.fieldIDs
	a.mu.Unlock()
	if idx != nil {
		return idx, true, nil
	}
	fields, err := acListAll[acField](ctx, a.api, "/fields", nil, "fields", calls)
	if err != nil {
		return nil, false, err
	}
	idx = map[string]string{}
	for _, f := range fields {
		if f.Title != "" {
			idx[fieldKey(f.Title)] = string(f.ID)
		}
	}
	for _, f := range fields {
		if f.Perstag != "" {
			idx[fieldKey(f.Perstag)] = string(f.ID) // perstags win over titles
		}
	}
	for _, f := range fields {
		idx[string(f.ID)] = string(f.ID) // ids win over both
	}
	a.mu.Lock()
	a.fieldIDs = idx
	a.mu.Unlock()
	return idx, false, nil
}

// forgetFields drops the cached field list (after creating fields, or when a reference was not in it).
func (a *activeCampaign) forgetFields() {
	a.mu.Lock()
	a.fieldIDs = nil
	a.mu.Unlock()
}

func fieldKey(ref string) string {
	return strings.ToLower(strings.Trim(strings.TrimSpace(ref), "%"))
}

// CheckSetup lists what the configuration names and the account lacks: custom fields (loop-breaker pair,
// stage field, every mapped field), and in deal mode the pipeline and every mapped stage. Whether the
// account allows phone-only contacts cannot be read through the API; it shows when a phone-only lead is
// sent.
func (a *activeCampaign) CheckSetup(ctx context.Context) error {
	a.forgetFields()
	a.mu.Lock()
	a.pipe = nil
	a.mu.Unlock()
	refs := []string{a.cfg.LoopField, a.cfg.SyncField}
	if a.cfg.StageMode == StageModeField && a.cfg.StageField != "" {
		refs = append(refs, a.cfg.StageField)
	}
	for _, name := range sortedKeys(a.cfg.FieldMap) {
		if ref := a.cfg.FieldMap[name]; ref != "" && !isACNative(ref) && !slices.Contains(refs, ref) {
			refs = append(refs, ref)
		}
	}
	var problems []string
	var e *Error
	if _, err := a.resolveFields(ctx, refs, nil); err != nil {
		if ClassOf(err) != Setup || !errors.As(err, &e) {
			return err
		}
		problems = append(problems, e.Message)
	}
	if a.cfg.StageMode == StageModeDeal {
		p, err := a.pipeline(ctx, nil)
		switch {
		case ClassOf(err) == Setup && errors.As(err, &e):
			problems = append(problems, e.Message)
		case err != nil:
			return err
		default:
			for _, stage := range sortedKeys(a.cfg.StageMap) {
				if id := a.cfg.StageMap[stage]; !slices.Contains(p.stages, id) {
					problems = append(problems, fmt.Sprintf("activecampaign: deal pipeline %q has no stage %q (stage_map[%s])",
						a.cfg.Pipeline, id, stage))
				}
			}
		}
	}
	if len(problems) == 0 {
		return nil
	}
	return &Error{Class: Setup, Message: strings.Join(problems, "; ")}
}

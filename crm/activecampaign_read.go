package crm

import (
	"context"
	"net/http"
	"net/url"
	"strconv"
	"strings"
)

// acRemote is what ActiveCampaign holds for one contact, keyed like Contact.Previous.
type acRemote struct {
	id     string
	values map[string]string
}

type acContact struct {
	ID        flexString `json:"id"`
	Email     string     `json:"email"`
	Phone     string     `json:"phone"`
	FirstName string     `json:"firstName"`
	LastName  string     `json:"lastName"`
}

// find reads the contact by remote id, else searches by email, then phone. An unknown remote id is a
// NotFound error: a contact we created is never re-searched (it may have been deleted or merged on purpose).
func (a *activeCampaign) find(ctx context.Context, c Contact, ids map[string]string, calls *int) (acRemote, error) {
	id := c.RemoteID
	if id == "" {
		var err error
		if id, err = a.search(ctx, c, calls); err != nil || id == "" {
			return acRemote{}, err
		}
	}
	return a.get(ctx, id, ids, calls)
}

// search finds the contact's id by exact email, then by phone. AC's phone filter is a prefix match
// ("starts with"), so the candidates are compared exactly here. "" means no match.
func (a *activeCampaign) search(ctx context.Context, c Contact, calls *int) (string, error) {
	var out struct {
		Contacts []acContact `json:"contacts"`
	}
	if c.Email != "" {
		q := url.Values{"email": {c.Email}}
		if _, err := a.api.do(ctx, call{method: http.MethodGet, path: "/contacts", query: q, out: &out}, calls); err != nil {
			return "", err
		}
		for _, r := range out.Contacts {
			if strings.EqualFold(strings.TrimSpace(r.Email), c.Email) {
				return string(r.ID), nil
			}
		}
	}
	if c.Phone == "" {
		return "", nil
	}
	out.Contacts = nil
	q := url.Values{"phone": {c.Phone}, "limit": {"100"}}
	if _, err := a.api.do(ctx, call{method: http.MethodGet, path: "/contacts", query: q, out: &out}, calls); err != nil {
		return "", err
	}
	best := ""
	for _, r := range out.Contacts {
		// A phone match that carries a different email is another person sharing a phone: not ours.
		if !samePhone(r.Phone, c.Phone) || (c.Email != "" && r.Email != "" && !strings.EqualFold(r.Email, c.Email)) {
			continue
		}
		if best == "" || lessID(string(r.ID), best) {
			best = string(r.ID) // the oldest of several exact matches
		}
	}
	return best, nil
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
	r := acRemote{id: id, values: map[string]string{
		"email": out.Contact.Email, "phone": out.Contact.Phone,
		"firstName": out.Contact.FirstName, "lastName": out.Contact.LastName,
	}}
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

// resolveFields maps custom field references to AC field ids. A numeric reference is already an id;
// others match a field's perstag or title (case-insensitive, %PERSTAG% accepted). The field list is
// loaded once per adapter. A reference that matches nothing is an Invalid (mapping) error.
func (a *activeCampaign) resolveFields(ctx context.Context, refs []string, calls *int) (map[string]string, error) {
	ids := map[string]string{}
	var named []string
	for _, ref := range refs {
		if _, err := strconv.ParseUint(ref, 10, 64); err == nil {
			ids[ref] = ref
		} else {
			named = append(named, ref)
		}
	}
	if len(named) == 0 {
		return ids, nil
	}
	known, err := a.fieldIndex(ctx, calls)
	if err != nil {
		return nil, err
	}
	for _, ref := range named {
		id, ok := known[fieldKey(ref)]
		if !ok {
			if ref == a.cfg.LoopField || ref == a.cfg.SyncField {
				return nil, invalidf("activecampaign: loop-breaker field %q does not exist: %s", ref,
					loopInstructions("ActiveCampaign (Contacts > Fields)", a.cfg.LoopField, a.cfg.SyncField))
			}
			return nil, invalidf("activecampaign: custom field %q does not exist", ref)
		}
		ids[ref] = id
	}
	return ids, nil
}

// fieldIndex returns perstag/title (normalized) -> id, loading GET /fields once.
func (a *activeCampaign) fieldIndex(ctx context.Context, calls *int) (map[string]string, error) {
	a.mu.Lock()
	idx := a.fieldIDs
	a.mu.Unlock()
	if idx != nil {
		return idx, nil
	}
	fields, err := a.listFields(ctx, calls)
	if err != nil {
		return nil, err
	}
	idx = map[string]string{}
	for _, f := range fields {
		if f.Title != "" {
			idx[fieldKey(f.Title)] = string(f.ID)
		}
		if f.Perstag != "" {
			idx[fieldKey(f.Perstag)] = string(f.ID) // perstags win over titles
		}
	}
	a.mu.Lock()
	a.fieldIDs = idx
	a.mu.Unlock()
	return idx, nil
}

// forgetFields drops the cached field list (after creating fields).
func (a *activeCampaign) forgetFields() {
	a.mu.Lock()
	a.fieldIDs = nil
	a.mu.Unlock()
}

func fieldKey(ref string) string {
	return strings.ToLower(strings.Trim(strings.TrimSpace(ref), "%"))
}

// listFields pages through GET /fields.
func (a *activeCampaign) listFields(ctx context.Context, calls *int) ([]acField, error) {
	const page = 100
	var all []acField
	for offset := 0; ; offset += page {
		var out struct {
			Fields []acField `json:"fields"`
		}
		q := url.Values{"limit": {strconv.Itoa(page)}, "offset": {strconv.Itoa(offset)}}
		if _, err := a.api.do(ctx, call{method: http.MethodGet, path: "/fields", query: q, out: &out}, calls); err != nil {
			return nil, err
		}
		all = append(all, out.Fields...)
		if len(out.Fields) < page || offset > 100*page {
			return all, nil
		}
	}
}

package crmfake

import (
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"
)

type acContactIn struct {
	Contact struct {
		Email       *string `json:"email"`
		Phone       *string `json:"phone"`
		FirstName   *string `json:"firstName"`
		LastName    *string `json:"lastName"`
		FieldValues []struct {
			Field any    `json:"field"`
			Value string `json:"value"`
		} `json:"fieldValues"`
	} `json:"contact"`
}

// GET /api/3/contacts: ids (comma-separated), email (exact), phone ("starts with"), search (contains),
// limit, offset.
func (f *ActiveCampaign) listContacts(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	f.mu.Lock()
	var hits []map[string]any
	ids := strings.Split(q.Get("ids"), ",")
	for _, id := range f.order {
		c := f.contacts[id]
		switch {
		case q.Has("ids") && !slices.Contains(ids, c.ID):
		case q.Has("email") && !strings.EqualFold(c.Email, q.Get("email")):
		case q.Has("phone") && !strings.HasPrefix(c.Phone, q.Get("phone")):
		case q.Has("search") && !strings.Contains(strings.ToLower(c.Email+" "+c.Phone+" "+c.FirstName+" "+c.LastName), strings.ToLower(q.Get("search"))):
		default:
			hits = append(hits, f.contactJSON(c))
		}
	}
	f.mu.Unlock()
	total := len(hits)
	hits = page(hits, q.Get("limit"), q.Get("offset"))
	writeJSON(w, http.StatusOK, map[string]any{"contacts": nonNil(hits), "meta": map[string]any{"total": strconv.Itoa(total)}})
}

func (f *ActiveCampaign) getContact(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	defer f.mu.Unlock()
	c := f.contacts[r.PathValue("id")]
	if c == nil {
		acNotFound(w, "Subscriber", r.PathValue("id"))
		return
	}
	tags := []any{}
	for _, t := range c.Tags {
		tags = append(tags, map[string]any{"contact": c.ID, "tag": f.tagIDOf(t)})
	}
	writeJSON(w, http.StatusOK, map[string]any{"contact": f.contactJSON(c), "fieldValues": f.fieldValuesJSON(c), "contactTags": tags})
}

func (f *ActiveCampaign) createContact(w http.ResponseWriter, r *http.Request) {
	var in acContactIn
	if !decode(w, r, &in, acBad) {
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	email := strings.ToLower(deref(in.Contact.Email))
	if email == "" && !f.acOpts.AllowNullEmail {
		acError(w, http.StatusUnprocessableEntity, "Email address is required", "field_missing", "/data/attributes/email")
		return
	}
	if email != "" && f.byEmail(email) != nil {
		acError(w, http.StatusUnprocessableEntity, "Email address already exists in the system", "duplicate", "/data/attributes/email")
		return
	}
	c := &ACContact{ID: f.newID(), Fields: map[string]string{}, CDate: time.Now()}
	if !f.apply(w, c, in) {
		return
	}
	f.contacts[c.ID] = c
	f.order = append(f.order, c.ID)
	f.logMutation(r, c.ID, in)
	writeJSON(w, http.StatusCreated, map[string]any{"contact": f.contactJSON(c), "fieldValues": f.fieldValuesJSON(c)})
}

// POST /api/3/contact/sync: update the contact with this email, or create it.
func (f *ActiveCampaign) syncContact(w http.ResponseWriter, r *http.Request) {
	var in acContactIn
	if !decode(w, r, &in, acBad) {
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	email := strings.ToLower(deref(in.Contact.Email))
	if email == "" {
		acError(w, http.StatusUnprocessableEntity, "Email address is required", "field_missing", "/data/attributes/email")
		return
	}
	c := f.byEmail(email)
	isNew := c == nil
	if isNew {
		c = &ACContact{ID: f.newID(), Fields: map[string]string{}, CDate: time.Now()}
	}
	if !f.apply(w, c, in) {
		return
	}
	if isNew {
		f.contacts[c.ID] = c
		f.order = append(f.order, c.ID)
	}
	f.logMutation(r, c.ID, in)
	writeJSON(w, http.StatusCreated, map[string]any{"contact": f.contactJSON(c), "fieldValues": f.fieldValuesJSON(c)})
}

func (f *ActiveCampaign) updateContact(w http.ResponseWriter, r *http.Request) {
	var in acContactIn
	if !decode(w, r, &in, acBad) {
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	c := f.contacts[r.PathValue("id")]
	if c == nil {
		acNotFound(w, "Subscriber", r.PathValue("id"))
		return
	}
	if e := strings.ToLower(deref(in.Contact.Email)); e != "" && e != strings.ToLower(c.Email) && f.byEmail(e) != nil {
		acError(w, http.StatusUnprocessableEntity, "Email address already exists in the system", "duplicate", "/data/attributes/email")
		return
	}
	if !f.apply(w, c, in) {
		return
	}
	f.logMutation(r, c.ID, in)
	writeJSON(w, http.StatusOK, map[string]any{"contact": f.contactJSON(c), "fieldValues": f.fieldValuesJSON(c)})
}

// apply validates and copies the body's values onto c (caller holds the lock).
func (f *ActiveCampaign) apply(w http.ResponseWriter, c *ACContact, in acContactIn) bool {
	if e := deref(in.Contact.Email); e != "" && !strings.Contains(e, "@") {
		acError(w, http.StatusUnprocessableEntity, "Contact Email Address is not valid.", "email_invalid", "/data/attributes/email")
		return false
	}
	for _, fv := range in.Contact.FieldValues {
		id := anyString(fv.Field)
		if !slices.ContainsFunc(f.acOpts.Fields, func(x ACField) bool { return x.ID == id }) {
			acError(w, http.StatusUnprocessableEntity, "Field "+id+" does not exist", "invalid", "/data/attributes/fieldValues")
			return false
		}
	}
	set := func(dst *string, v *string) {
		if v != nil {
			*dst = *v
		}
	}
	set(&c.Email, in.Contact.Email)
	c.Email = strings.ToLower(c.Email)
	set(&c.Phone, in.Contact.Phone)
	set(&c.FirstName, in.Contact.FirstName)
	set(&c.LastName, in.Contact.LastName)
	for _, fv := range in.Contact.FieldValues {
		c.Fields[anyString(fv.Field)] = fv.Value
	}
	c.UDate = time.Now()
	return true
}

func (f *ActiveCampaign) logMutation(r *http.Request, id string, in acContactIn) {
	m := ACMutation{Time: time.Now(), Method: r.Method, Path: r.URL.Path, ContactID: id, FieldValues: map[string]string{}}
	for _, fv := range in.Contact.FieldValues {
		m.FieldValues[anyString(fv.Field)] = fv.Value
	}
	f.mutations = append(f.mutations, m)
}

func (f *ActiveCampaign) byEmail(email string) *ACContact {
	for _, id := range f.order {
		if c := f.contacts[id]; strings.EqualFold(c.Email, email) && email != "" {
			return c
		}
	}
	return nil
}

func (f *ActiveCampaign) listFields(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	var out []map[string]any
	for _, x := range f.acOpts.Fields {
		out = append(out, map[string]any{"id": x.ID, "title": x.Title, "perstag": x.Perstag, "type": cmpOr(x.Type, "text")})
	}
	f.mu.Unlock()
	total := len(out)
	out = page(out, r.URL.Query().Get("limit"), r.URL.Query().Get("offset"))
	writeJSON(w, http.StatusOK, map[string]any{"fields": nonNil(out), "meta": map[string]any{"total": strconv.Itoa(total)}})
}

func (f *ActiveCampaign) createField(w http.ResponseWriter, r *http.Request) {
	var in struct {
		Field ACField `json:"field"`
	}
	if !decode(w, r, &in, acBad) {
		return
	}
	if in.Field.Title == "" {
		acError(w, http.StatusUnprocessableEntity, "Missing attribute", "field_missing", "/data/attributes/title")
		return
	}
	f.mu.Lock()
	in.Field.ID = f.newID()
	f.acOpts.Fields = append(f.acOpts.Fields, in.Field)
	f.mu.Unlock()
	writeJSON(w, http.StatusCreated, map[string]any{"field": map[string]any{"id": in.Field.ID, "title": in.Field.Title, "perstag": in.Field.Perstag}})
}

// listTags serves GET /tags: `search` is a "contains" match and `filters[search][eq]` an exact one
// (case-insensitive, like the account's collation), paged by limit (default 20, at most 100) and offset.
func (f *ActiveCampaign) listTags(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	search := strings.ToLower(q.Get("search"))
	eq, exact := q["filters[search][eq]"]
	f.mu.Lock()
	var out []map[string]any
	for _, id := range sortedKeys(f.tags) {
		name := strings.ToLower(f.tags[id])
		if exact && name != strings.ToLower(eq[0]) || !strings.Contains(name, search) {
			continue
		}
		out = append(out, map[string]any{"id": id, "tag": f.tags[id], "tagType": "contact"})
	}
	f.mu.Unlock()
	total := len(out)
	out = page(out, q.Get("limit"), q.Get("offset"))
	writeJSON(w, http.StatusOK, map[string]any{"tags": nonNil(out), "meta": map[string]any{"total": strconv.Itoa(total)}})
}

// AddTag creates a tag in the account (as a person would in the UI) and returns its id.
func (f *ActiveCampaign) AddTag(name string) string {
	f.mu.Lock()
	defer f.mu.Unlock()
	id := f.newID()
	f.tags[id] = name
	return id
}

func (f *ActiveCampaign) createTag(w http.ResponseWriter, r *http.Request) {
	var in struct {
		Tag struct {
			Tag string `json:"tag"`
		} `json:"tag"`
	}
	if !decode(w, r, &in, acBad) {
		return
	}
	if in.Tag.Tag == "" {
		acError(w, http.StatusUnprocessableEntity, "Missing attribute", "field_missing", "/data/attributes/tag")
		return
	}
	f.mu.Lock()
	id := f.newID()
	f.tags[id] = in.Tag.Tag
	f.mu.Unlock()
	writeJSON(w, http.StatusCreated, map[string]any{"tag": map[string]any{"id": id, "tag": in.Tag.Tag, "tagType": "contact"}})
}

func (f *ActiveCampaign) tagIDOf(name string) string {
	for id, n := range f.tags {
		if n == name {
			return id
		}
	}
	return ""
}

func (f *ActiveCampaign) addContactTag(w http.ResponseWriter, r *http.Request) {
	var in struct {
		ContactTag struct {
			Contact any `json:"contact"`
			Tag     any `json:"tag"`
		} `json:"contactTag"`
	}
	if !decode(w, r, &in, acBad) {
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	cid, tid := anyString(in.ContactTag.Contact), anyString(in.ContactTag.Tag)
	if cid == "" {
		writeJSON(w, http.StatusUnprocessableEntity, map[string]any{"errors": []any{map[string]any{
			"status": 422, "title": "Missing attribute", "source": map[string]string{"pointer": "/data/attributes/contact"}}}})
		return
	}
	c := f.contacts[cid]
	name, ok := f.tags[tid]
	if c == nil || !ok {
		writeJSON(w, http.StatusNotFound, map[string]any{"errors": []any{map[string]any{"status": 404, "title": "Not Found", "detail": "Contact not found"}}})
		return
	}
	if !slices.Contains(c.Tags, name) {
		c.Tags = append(c.Tags, name)
	}
	writeJSON(w, http.StatusCreated, map[string]any{"contactTag": map[string]any{"contact": cid, "tag": tid, "id": cid + "-" + tid}})
}

func (f *ActiveCampaign) addNote(w http.ResponseWriter, r *http.Request) {
	var in struct {
		Note struct {
			Note    string `json:"note"`
			RelID   any    `json:"relid"`
			RelType string `json:"reltype"`
		} `json:"note"`
	}
	if !decode(w, r, &in, acBad) {
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	c := f.contacts[anyString(in.Note.RelID)]
	if c == nil || in.Note.RelType != "Subscriber" {
		acNotFound(w, "Subscriber", anyString(in.Note.RelID))
		return
	}
	c.Notes = append(c.Notes, in.Note.Note)
	writeJSON(w, http.StatusCreated, map[string]any{"note": map[string]any{"id": f.newID(), "note": in.Note.Note, "relid": c.ID, "reltype": "Subscriber"}})
}

func (f *ActiveCampaign) listDealGroups(w http.ResponseWriter, r *http.Request) {
	var out []map[string]any
	for _, p := range f.acOpts.Pipelines {
		out = append(out, map[string]any{"id": p.ID, "title": p.Title})
	}
	writeJSON(w, http.StatusOK, map[string]any{"dealGroups": nonNil(out)})
}

func (f *ActiveCampaign) listDealStages(w http.ResponseWriter, r *http.Request) {
	group := r.URL.Query().Get("filters[d_groupid]")
	var out []map[string]any
	for _, p := range f.acOpts.Pipelines {
		for i, s := range p.Stages {
			if group == "" || group == p.ID {
				out = append(out, map[string]any{"id": s.ID, "title": s.Title, "group": p.ID, "order": strconv.Itoa(i + 1)})
			}
		}
	}
	writeJSON(w, http.StatusOK, map[string]any{"dealStages": nonNil(out)})
}

type acDealIn struct {
	Deal struct {
		Title   string `json:"title"`
		Contact any    `json:"contact"`
		Group   any    `json:"group"`
		Stage   any    `json:"stage"`
	} `json:"deal"`
}

func (f *ActiveCampaign) stageInGroup(group, stage string) bool {
	for _, p := range f.acOpts.Pipelines {
		if p.ID == group {
			return slices.ContainsFunc(p.Stages, func(s ACField) bool { return s.ID == stage })
		}
	}
	return false
}

func (f *ActiveCampaign) createDeal(w http.ResponseWriter, r *http.Request) {
	var in acDealIn
	if !decode(w, r, &in, acBad) {
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	d := &ACDeal{Title: in.Deal.Title, Contact: anyString(in.Deal.Contact), Group: anyString(in.Deal.Group), Stage: anyString(in.Deal.Stage)}
	if f.contacts[d.Contact] == nil {
		acError(w, http.StatusUnprocessableEntity, "Contact not found", "invalid", "/data/attributes/contact")
		return
	}
	if !f.stageInGroup(d.Group, d.Stage) {
		acError(w, http.StatusUnprocessableEntity, "Stage is not in the pipeline", "invalid", "/data/attributes/stage")
		return
	}
	d.ID = f.newID()
	f.deals[d.ID] = d
	writeJSON(w, http.StatusCreated, map[string]any{"deal": acDealJSON(d)})
}

func (f *ActiveCampaign) getDeal(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	defer f.mu.Unlock()
	d := f.deals[r.PathValue("id")]
	if d == nil {
		acNotFound(w, "Deal", r.PathValue("id"))
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"deal": acDealJSON(d)})
}

func (f *ActiveCampaign) updateDeal(w http.ResponseWriter, r *http.Request) {
	var in acDealIn
	if !decode(w, r, &in, acBad) {
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	d := f.deals[r.PathValue("id")]
	if d == nil {
		acNotFound(w, "Deal", r.PathValue("id"))
		return
	}
	if s := anyString(in.Deal.Stage); s != "" {
		if !f.stageInGroup(d.Group, s) {
			acError(w, http.StatusUnprocessableEntity, "Stage is not in the pipeline", "invalid", "/data/attributes/stage")
			return
		}
		d.Stage = s
	}
	writeJSON(w, http.StatusOK, map[string]any{"deal": acDealJSON(d)})
}

func (f *ActiveCampaign) contactDeals(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := []any{}
	for _, id := range sortedKeys(dealIDs(f.deals)) {
		if d := f.deals[id]; d.Contact == r.PathValue("id") {
			out = append(out, acDealJSON(d))
		}
	}
	writeJSON(w, http.StatusOK, map[string]any{"deals": out})
}

func acDealJSON(d *ACDeal) map[string]any {
	return map[string]any{"id": d.ID, "title": d.Title, "contact": d.Contact, "group": d.Group, "stage": d.Stage,
		"status": "0", "mdate": time.Now().Format(time.RFC3339)}
}

func dealIDs(m map[string]*ACDeal) map[string]string {
	out := map[string]string{}
	for k := range m {
		out[k] = k
	}
	return out
}

package crmfake

import (
	"maps"
	"net/http"
	"slices"
	"strings"
)

// ghlContactIn is a checked contact body (CreateContactDto, UpsertContactDto or UpdateContactDto).
type ghlContactIn struct {
	props                                          []string
	email, phone, firstName, lastName, companyName *string
	tags                                           []string
	custom                                         []ghlCFWrite
	locationID                                     string
	createNew                                      bool
}

// decodeContact checks the body against dto (undeclared properties, types) and its custom field values
// against the location's fields (each value of the field's type), answering 422 on any failure.
func (f *GoHighLevel) decodeContact(w http.ResponseWriter, r *http.Request, dto ghlDTO) (ghlContactIn, bool) {
	raw, ok := checkBody(w, r, dto)
	if !ok {
		return ghlContactIn{}, false
	}
	f.mu.Lock()
	custom, msgs := f.checkContactCFs(raw)
	f.mu.Unlock()
	if len(msgs) > 0 {
		ghl422(w, msgs...)
		return ghlContactIn{}, false
	}
	in := ghlContactIn{props: slices.Sorted(maps.Keys(raw)), email: optString(raw, "email"), phone: optString(raw, "phone"),
		firstName: optString(raw, "firstName"), lastName: optString(raw, "lastName"), companyName: optString(raw, "companyName"),
		tags: optStrings(raw, "tags"), custom: custom, locationID: deref(optString(raw, "locationId")),
		createNew: optBool(raw, "createNewIfDuplicateAllowed")}
	if in.email != nil {
		*in.email = strings.ToLower(strings.TrimSpace(*in.email))
	}
	return in, true
}

// apply copies the body onto c; tags given in the body replace all tags (the documented upsert behaviour).
func (f *GoHighLevel) apply(r *http.Request, c *GHLContact, in ghlContactIn) {
	set := func(dst *string, v *string) {
		if v != nil {
			*dst = *v
		}
	}
	set(&c.Email, in.email)
	set(&c.Phone, in.phone)
	set(&c.FirstName, in.firstName)
	set(&c.LastName, in.lastName)
	set(&c.CompanyName, in.companyName)
	m := GHLMutation{Path: r.URL.Path, ContactID: c.ID, CustomFields: map[string]string{}, Fields: in.props, SentTags: in.tags != nil}
	if in.tags != nil {
		c.Tags = slices.Clone(in.tags)
	}
	for _, cf := range in.custom {
		if cf.isArr {
			c.CustomArrays[cf.id] = slices.Clone(cf.arr)
			m.CustomFields[cf.id] = strings.Join(cf.arr, ";")
			continue
		}
		c.CustomFields[cf.id] = cf.scalar
		m.CustomFields[cf.id] = cf.scalar
	}
	c.DateUpdated = timeNow()
	m.Time = c.DateUpdated
	f.mutations = append(f.mutations, m)
}

// GET /contacts/search/duplicate?locationId=&email=&number= (locationId required): {"contact": {...}} or
// {"contact": null}. The 200 schema is empty in the description; this body is the one integrators read.
func (f *GoHighLevel) duplicate(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	if !f.checkLocation(w, q.Get("locationId")) {
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	c, _ := f.match(strings.TrimSpace(q.Get("email")), strings.TrimSpace(q.Get("number")), true)
	if c == nil {
		writeJSON(w, http.StatusOK, map[string]any{"contact": nil})
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"contact": f.contactJSON(c)})
}

// POST /contacts/upsert UpsertContactDto: 200 {"new", "contact", "traceId"} (UpsertContactsSuccessfulResponseDto).
func (f *GoHighLevel) upsert(w http.ResponseWriter, r *http.Request) {
	in, ok := f.decodeContact(w, r, ghlUpsertContactDTO)
	if !ok || !f.checkLocation(w, in.locationID) {
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	var c *GHLContact
	by := ""
	if !(in.createNew && f.ghlOpts.AllowDuplicates) {
		c, by = f.match(deref(in.email), deref(in.phone), false)
	}
	isNew := c == nil
	if isNew {
		c = f.insert(GHLContact{})
	} else {
		// The second field of the sequence is ignored when another contact holds it ("to prevent
		// duplication"); otherwise it is written, replacing the matched contact's own value.
		if by == "email" && f.holder("phone", deref(in.phone), c.ID, false) != nil {
			in.phone = nil
		}
		if by == "phone" && f.holder("email", deref(in.email), c.ID, false) != nil {
			in.email = nil
		}
	}
	f.apply(r, c, in)
	writeJSON(w, http.StatusOK, map[string]any{"new": isNew, "contact": f.contactJSON(c), "traceId": "fake-trace-" + f.newID()})
}

// POST /contacts/ CreateContactDto: 201 {"contact": {...}}; refuses duplicates unless the location allows them.
func (f *GoHighLevel) create(w http.ResponseWriter, r *http.Request) {
	in, ok := f.decodeContact(w, r, ghlCreateContactDTO)
	if !ok || !f.checkLocation(w, in.locationID) {
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.duplicateOf(w, deref(in.email), deref(in.phone), "") {
		return
	}
	c := f.insert(GHLContact{})
	f.apply(r, c, in)
	writeJSON(w, http.StatusCreated, map[string]any{"contact": f.contactJSON(c)})
}

func (f *GoHighLevel) get(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	defer f.mu.Unlock()
	c := f.contacts[r.PathValue("id")]
	if c == nil {
		ghlNotFound(w, "Contact")
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"contact": f.contactJSON(c)})
}

// PUT /contacts/{id} UpdateContactDto (no locationId, no companyName): 200 {"succeded", "contact"}. The
// description is silent on an update that would duplicate another contact's email or phone in a location
// that does not allow duplicates; the fake refuses it as create does.
func (f *GoHighLevel) update(w http.ResponseWriter, r *http.Request) {
	in, ok := f.decodeContact(w, r, ghlUpdateContactDTO)
	if !ok {
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	c := f.contacts[r.PathValue("id")]
	if c == nil {
		ghlNotFound(w, "Contact")
		return
	}
	if f.duplicateOf(w, deref(in.email), deref(in.phone), c.ID) {
		return
	}
	f.apply(r, c, in)
	writeJSON(w, http.StatusOK, map[string]any{"succeded": true, "contact": f.contactJSON(c)})
}

// tagBody reads TagsDTO {"tags": [string]} (required).
func (f *GoHighLevel) tagBody(w http.ResponseWriter, r *http.Request) (*GHLContact, []string, bool) {
	raw, ok := checkBody(w, r, ghlTagsDTO)
	if !ok {
		return nil, nil, false
	}
	tags := optStrings(raw, "tags")
	if len(tags) == 0 {
		ghl422(w, "tags should not be empty")
		return nil, nil, false
	}
	c := f.contacts[r.PathValue("id")]
	if c == nil {
		ghlNotFound(w, "Contact")
		return nil, nil, false
	}
	return c, tags, true
}

// POST /contacts/{id}/tags TagsDTO: 201 {"tags"}.
func (f *GoHighLevel) addTags(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	defer f.mu.Unlock()
	c, tags, ok := f.tagBody(w, r)
	if !ok {
		return
	}
	for _, t := range tags {
		if !slices.Contains(c.Tags, t) {
			c.Tags = append(c.Tags, t)
		}
	}
	writeJSON(w, http.StatusCreated, map[string]any{"tags": c.Tags})
}

// DELETE /contacts/{id}/tags TagsDTO: 200 {"tags"}.
func (f *GoHighLevel) removeTags(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	defer f.mu.Unlock()
	c, tags, ok := f.tagBody(w, r)
	if !ok {
		return
	}
	c.Tags = slices.DeleteFunc(c.Tags, func(t string) bool { return slices.Contains(tags, t) })
	writeJSON(w, http.StatusOK, map[string]any{"tags": nonNil(c.Tags)})
}

// POST /contacts/{id}/notes NotesDTO (body required): 201 {"note"}.
func (f *GoHighLevel) addNote(w http.ResponseWriter, r *http.Request) {
	raw, ok := checkBody(w, r, ghlNotesDTO)
	if !ok {
		return
	}
	body := deref(optString(raw, "body"))
	f.mu.Lock()
	defer f.mu.Unlock()
	c := f.contacts[r.PathValue("id")]
	if c == nil {
		ghlNotFound(w, "Contact")
		return
	}
	c.Notes = append(c.Notes, body)
	writeJSON(w, http.StatusCreated, map[string]any{"note": map[string]any{"id": "n" + f.newID(), "body": body, "contactId": c.ID}})
}

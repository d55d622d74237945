package crmfake

import (
	"bytes"
	"encoding/json"
	"errors"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"
)

// The contact endpoints as the v3 reference describes them: reference/create-a-new-contact,
// reference/sync-a-contacts-data, reference/update-a-contact-new, reference/get-contact,
// reference/list-all-contacts.

// acContactIn is the {"contact":{...}} body of create, sync and update.
type acContactIn struct {
	Contact *acContactFields `json:"contact"`
}

type acContactFields struct {
	Email          *string           `json:"email"`
	Phone          *string           `json:"phone"`
	FirstName      *string           `json:"firstName"`
	LastName       *string           `json:"lastName"`
	AllowNullEmail *bool             `json:"allowNullEmail"`
	FieldValues    []acFieldValueIn  `json:"fieldValues"`
	checked        map[string]string // field id -> value, once validated
}

// acFieldValueIn is one {"field": "<id>", "value": "<string>"} entry; both are checked by type.
type acFieldValueIn struct {
	Field json.RawMessage `json:"field"`
	Value json.RawMessage `json:"value"`
}

// decodeContact reads a contact body: malformed JSON is a 400, a value of the wrong type a 422 naming
// its attribute (the reference's field types: strings, allowNullEmail a boolean, fieldValues an array).
func (f *ActiveCampaign) decodeContact(w http.ResponseWriter, r *http.Request) (*acContactFields, bool) {
	var in acContactIn
	dec := json.NewDecoder(r.Body)
	if err := dec.Decode(&in); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) {
			acError(w, http.StatusUnprocessableEntity, "Invalid attribute type: "+te.Field+" must be "+te.Type.String(),
				"field_invalid", "/data/attributes/"+strings.TrimPrefix(te.Field, "contact."))
			return nil, false
		}
		acBad(w, "invalid JSON body: "+err.Error())
		return nil, false
	}
	if in.Contact == nil {
		acError(w, http.StatusUnprocessableEntity, "Missing attribute", "field_missing", "/data/attributes/contact")
		return nil, false
	}
	c := in.Contact
	c.checked = map[string]string{}
	for _, fv := range c.FieldValues {
		id, ok := jsonID(fv.Field)
		if !ok {
			acError(w, http.StatusUnprocessableEntity, "fieldValues[].field must be the id of a custom field", "field_invalid", "/data/attributes/fieldValues")
			return nil, false
		}
		var v string
		if err := json.Unmarshal(fv.Value, &v); err != nil {
			acError(w, http.StatusUnprocessableEntity, "fieldValues[].value must be a string", "field_invalid", "/data/attributes/fieldValues")
			return nil, false
		}
		if !f.fieldExists(id) {
			acError(w, http.StatusUnprocessableEntity, "Field "+id+" does not exist", "invalid", "/data/attributes/fieldValues")
			return nil, false
		}
		c.checked[id] = v
	}
	if e := deref(c.Email); e != "" && !strings.Contains(e, "@") {
		acError(w, http.StatusUnprocessableEntity, "Contact Email Address is not valid.", "email_invalid", "/data/attributes/email")
		return nil, false
	}
	return c, true
}

// jsonID reads an id given as a JSON string of digits or a JSON integer.
func jsonID(raw json.RawMessage) (string, bool) {
	raw = bytes.TrimSpace(raw)
	var s string
	if json.Unmarshal(raw, &s) == nil {
		_, err := strconv.ParseUint(s, 10, 64)
		return s, err == nil
	}
	var n uint64
	if json.Unmarshal(raw, &n) == nil {
		return strconv.FormatUint(n, 10), true
	}
	return "", false
}

func (f *ActiveCampaign) fieldExists(id string) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.ContainsFunc(f.acOpts.Fields, func(x ACField) bool { return x.ID == id })
}

// GET /api/3/contacts: ids[] (repeated, the documented form), email (exact), phone ("starts with" the
// stored string, as typed), search (contains), paged by limit/offset with meta.total.
func (f *ActiveCampaign) listContacts(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	ids, byIDs := q["ids[]"]
	f.mu.Lock()
	var hits []map[string]any
	for _, id := range f.order {
		c := f.contacts[id]
		switch {
		case byIDs && !slices.Contains(ids, c.ID):
		case q.Has("email") && !strings.EqualFold(c.Email, q.Get("email")):
		case q.Has("phone") && !strings.HasPrefix(c.Phone, q.Get("phone")):
		case q.Has("search") && !strings.Contains(strings.ToLower(c.Email+" "+c.Phone+" "+c.FirstName+" "+c.LastName), strings.ToLower(q.Get("search"))):
		default:
			hits = append(hits, f.contactJSON(c))
		}
	}
	f.mu.Unlock()
	acList(w, r, "contacts", hits)
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

// POST /api/3/contacts: email is required "unless a phone number is provided and the account has opted in
// to phone-only contacts", and the request opts in with contact.allowNullEmail. An existing email is a 422
// duplicate.
func (f *ActiveCampaign) createContact(w http.ResponseWriter, r *http.Request) {
	in, ok := f.decodeContact(w, r)
	if !ok {
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	email := strings.ToLower(deref(in.Email))
	if email == "" {
		nullOK := in.AllowNullEmail != nil && *in.AllowNullEmail && f.acOpts.AllowNullEmail
		if !nullOK || strings.TrimSpace(deref(in.Phone)) == "" {
			acError(w, http.StatusUnprocessableEntity, "Email address is required", "field_missing", "/data/attributes/email")
			return
		}
	}
	if email != "" && f.byEmail(email) != nil {
		acError(w, http.StatusUnprocessableEntity, "Email address already exists in the system", "duplicate", "/data/attributes/email")
		return
	}
	c := f.addContact()
	f.apply(c, in)
	f.logMutation(r, c.ID, in, true)
	writeJSON(w, http.StatusCreated, map[string]any{"contact": f.contactJSON(c), "fieldValues": f.fieldValuesJSON(c)})
}

// POST /api/3/contact/sync: update the contact with this email, or create it. contact.email is the
// required key (reference/sync-a-contacts-data); the reference offers no phone-only sync.
func (f *ActiveCampaign) syncContact(w http.ResponseWriter, r *http.Request) {
	in, ok := f.decodeContact(w, r)
	if !ok {
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	email := strings.ToLower(deref(in.Email))
	if email == "" {
		acError(w, http.StatusUnprocessableEntity, "Email address is required", "field_missing", "/data/attributes/email")
		return
	}
	c := f.byEmail(email)
	isNew := c == nil
	if isNew {
		c = f.addContact()
	}
	f.apply(c, in)
	f.logMutation(r, c.ID, in, isNew)
	writeJSON(w, http.StatusCreated, map[string]any{"contact": f.contactJSON(c), "fieldValues": f.fieldValuesJSON(c)})
}

// PUT /api/3/contacts/{id}: an unknown id is the 404 {"message":"No Result found for Subscriber with id N"}.
func (f *ActiveCampaign) updateContact(w http.ResponseWriter, r *http.Request) {
	in, ok := f.decodeContact(w, r)
	if !ok {
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	c := f.contacts[r.PathValue("id")]
	if c == nil {
		acNotFound(w, "Subscriber", r.PathValue("id"))
		return
	}
	if e := strings.ToLower(deref(in.Email)); e != "" && e != strings.ToLower(c.Email) && f.byEmail(e) != nil {
		acError(w, http.StatusUnprocessableEntity, "Email address already exists in the system", "duplicate", "/data/attributes/email")
		return
	}
	f.apply(c, in)
	f.logMutation(r, c.ID, in, false)
	writeJSON(w, http.StatusOK, map[string]any{"contact": f.contactJSON(c), "fieldValues": f.fieldValuesJSON(c)})
}

// addContact stores a new, empty contact created now (caller holds the lock).
func (f *ActiveCampaign) addContact() *ACContact {
	c := &ACContact{ID: f.newID(), Fields: map[string]string{}, CDate: time.Now()}
	f.contacts[c.ID] = c
	f.order = append(f.order, c.ID)
	return c
}

// apply copies a validated body's values onto c (caller holds the lock).
func (f *ActiveCampaign) apply(c *ACContact, in *acContactFields) {
	set := func(dst *string, v *string) {
		if v != nil {
			*dst = *v
		}
	}
	set(&c.Email, in.Email)
	c.Email = strings.ToLower(c.Email)
	set(&c.Phone, in.Phone)
	set(&c.FirstName, in.FirstName)
	set(&c.LastName, in.LastName)
	for id, v := range in.checked {
		c.Fields[id] = v
	}
	c.UDate = time.Now()
}

// logMutation records the write and the automations it started (caller holds the lock).
func (f *ActiveCampaign) logMutation(r *http.Request, id string, in *acContactFields, created bool) {
	f.mutations = append(f.mutations, ACMutation{Time: time.Now(), Method: r.Method, Path: r.URL.Path, ContactID: id,
		FieldValues: cloneMap(in.checked)})
	f.runAutomations(id, created, r.URL.Path)
}

func (f *ActiveCampaign) byEmail(email string) *ACContact {
	for _, id := range f.order {
		if c := f.contacts[id]; strings.EqualFold(c.Email, email) && email != "" {
			return c
		}
	}
	return nil
}

// acList writes one page of a v3 collection (reference/pagination): `limit` (default 20, at most 100),
// zero-based `offset`, and the collection's size in meta.total.
func acList[T any](w http.ResponseWriter, r *http.Request, key string, items []T) {
	q := r.URL.Query()
	writeJSON(w, http.StatusOK, map[string]any{key: nonNil(page(items, q.Get("limit"), q.Get("offset"))),
		"meta": map[string]any{"total": strconv.Itoa(len(items))}})
}

package crmfake

import (
	"net/http"
	"slices"
	"strings"
	"time"
)

// GHLOptions configure the GoHighLevel fake.
type GHLOptions struct {
	Options
	LocationID string // default "loc-1"
	// Fields are the location's custom fields (ID, Name, FieldKey); ids are assigned when empty.
	Fields []GHLField
	// AllowDuplicates is the location's "Allow Duplicate Contact" setting. Off (the default): upsert
	// matches email first, then phone, and POST /contacts/ rejects duplicates.
	AllowDuplicates bool
	// Pipelines are the opportunity pipelines with their stage ids.
	Pipelines []GHLPipeline
}

// GHLField is a custom field of the location.
type GHLField struct {
	ID, Name, FieldKey string
}

// GHLPipeline is an opportunity pipeline.
type GHLPipeline struct {
	ID, Name string
	Stages   []string
}

// GHLContact is a contact as the fake stores it.
type GHLContact struct {
	ID                                             string
	Email, Phone, FirstName, LastName, CompanyName string
	Tags                                           []string
	CustomFields                                   map[string]string // field id -> value
	Notes                                          []string
	DateAdded, DateUpdated                         time.Time
}

// GHLOpportunity is an opportunity as the fake stores it.
type GHLOpportunity struct {
	ID, Name, ContactID, PipelineID, PipelineStageID, Status string
}

// GHLMutation is one contact write (upsert or update) with the custom fields and tags it carried.
type GHLMutation struct {
	Time         time.Time
	Path         string
	ContactID    string
	CustomFields map[string]string
	SentTags     bool
}

// GoHighLevel is a fake GoHighLevel (LeadConnector) v2 location.
type GoHighLevel struct {
	*server
	URL string

	ghlOpts   GHLOptions
	contacts  map[string]*GHLContact
	order     []string
	opps      map[string]*GHLOpportunity
	mutations []GHLMutation
	deleted   []string
}

// NewGoHighLevel starts a fake GoHighLevel location. Its default rate window is 10 s.
func NewGoHighLevel(opts GHLOptions) *GoHighLevel {
	if opts.LocationID == "" {
		opts.LocationID = "loc-1"
	}
	f := &GoHighLevel{ghlOpts: opts, contacts: map[string]*GHLContact{}, opps: map[string]*GHLOpportunity{}}
	for i := range f.ghlOpts.Fields {
		if f.ghlOpts.Fields[i].ID == "" {
			f.ghlOpts.Fields[i].ID = "cf" + string(rune('A'+i))
		}
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /contacts/search/duplicate", f.duplicate)
	mux.HandleFunc("POST /contacts/upsert", f.upsert)
	mux.HandleFunc("POST /contacts/search", f.searchContacts)
	mux.HandleFunc("POST /contacts/", f.create)
	mux.HandleFunc("GET /contacts/{id}", f.get)
	mux.HandleFunc("PUT /contacts/{id}", f.update)
	mux.HandleFunc("DELETE /contacts/{id}", f.deleteContact)
	mux.HandleFunc("POST /contacts/{id}/tags", f.addTags)
	mux.HandleFunc("DELETE /contacts/{id}/tags", f.removeTags)
	mux.HandleFunc("POST /contacts/{id}/notes", f.addNote)
	f.routeActions(mux)
	mux.HandleFunc("GET /locations/{loc}/customFields", f.listFields)
	mux.HandleFunc("POST /locations/{loc}/customFields", f.createField)
	mux.HandleFunc("GET /opportunities/pipelines", f.listPipelines)
	mux.HandleFunc("GET /opportunities/search", f.searchOpps)
	mux.HandleFunc("POST /opportunities/", f.createOpp)
	mux.HandleFunc("GET /opportunities/{id}", f.getOpp)
	mux.HandleFunc("PUT /opportunities/{id}", f.updateOpp)
	f.server = newServer(opts.Options, 10*time.Second, authorizeGHL, ghlShapes, mux)
	f.URL = f.srv.URL
	f.nextID = 500
	return f
}

// authorizeGHL needs a bearer token and the Version header every v2 call must carry.
func authorizeGHL(r *http.Request, o Options) bool {
	return authorizeBearer(r, o) && r.Header.Get("Version") == "2021-07-28"
}

var ghlShapes = errorShapes{
	unauthorized: func(w http.ResponseWriter, status int) {
		writeJSON(w, status, map[string]any{"statusCode": status, "message": "Invalid token: access token is invalid", "error": "Unauthorized"})
	},
	rateLimited: func(w http.ResponseWriter, retryAfter int) {
		w.Header().Set("X-RateLimit-Interval-Milliseconds", "10000")
		w.Header().Set("X-RateLimit-Remaining", "0")
		writeJSON(w, http.StatusTooManyRequests, map[string]any{"statusCode": 429, "message": "Too Many Requests"})
	},
	unavailable: func(w http.ResponseWriter) {
		writeJSON(w, http.StatusServiceUnavailable, map[string]any{"statusCode": 503, "message": "Service Unavailable"})
	},
}

func ghlBad(w http.ResponseWriter, msg string) {
	writeJSON(w, http.StatusBadRequest, map[string]any{"statusCode": 400, "message": msg})
}

func ghl422(w http.ResponseWriter, msgs ...string) {
	writeJSON(w, http.StatusUnprocessableEntity, map[string]any{"statusCode": 422, "message": msgs, "error": "Unprocessable Entity"})
}

// Contacts returns a snapshot of every contact, oldest first.
func (f *GoHighLevel) Contacts() []GHLContact {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := make([]GHLContact, 0, len(f.order))
	for _, id := range f.order {
		c := *f.contacts[id]
		c.Tags, c.Notes, c.CustomFields = slices.Clone(c.Tags), slices.Clone(c.Notes), cloneMap(c.CustomFields)
		out = append(out, c)
	}
	return out
}

// Contact returns the contact with email, if any.
func (f *GoHighLevel) Contact(email string) (GHLContact, bool) {
	for _, c := range f.Contacts() {
		if strings.EqualFold(c.Email, email) {
			return c, true
		}
	}
	return GHLContact{}, false
}

// DuplicateEmails counts emails held by more than one contact.
func (f *GoHighLevel) DuplicateEmails() int {
	return duplicates(f.Contacts(), func(c GHLContact) string { return strings.ToLower(c.Email) })
}

// Opportunities returns a snapshot of every opportunity.
func (f *GoHighLevel) Opportunities() []GHLOpportunity {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []GHLOpportunity
	for _, id := range sortedKeys(f.opps) {
		out = append(out, *f.opps[id])
	}
	return out
}

// Mutations returns every contact write.
func (f *GoHighLevel) Mutations() []GHLMutation {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.mutations)
}

// AddContact stores a contact directly (pre-existing data); it returns its id.
func (f *GoHighLevel) AddContact(c GHLContact) string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.insert(c).ID
}

// HumanEdit sets a contact field as a person would: "email", "phone", "firstName", "lastName",
// "companyName" or a custom field id.
func (f *GoHighLevel) HumanEdit(id, field, value string) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	c := f.contacts[id]
	if c == nil {
		return false
	}
	switch field {
	case "email":
		c.Email = value
	case "phone":
		c.Phone = value
	case "firstName":
		c.FirstName = value
	case "lastName":
		c.LastName = value
	case "companyName":
		c.CompanyName = value
	default:
		c.CustomFields[field] = value
	}
	c.DateUpdated = time.Now()
	return true
}

// HumanAddTag adds a tag as a person would.
func (f *GoHighLevel) HumanAddTag(id, tag string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if c := f.contacts[id]; c != nil && !slices.Contains(c.Tags, tag) {
		c.Tags = append(c.Tags, tag)
	}
}

func (f *GoHighLevel) insert(c GHLContact) *GHLContact {
	c.ID = "ct" + f.newID()
	c.Email = strings.ToLower(c.Email)
	c.CustomFields = cloneMap(c.CustomFields)
	c.DateAdded, c.DateUpdated = time.Now(), time.Now()
	f.contacts[c.ID] = &c
	f.order = append(f.order, c.ID)
	return &c
}

// match finds the existing contact for an email/phone pair per the duplicate setting: email first, then phone.
func (f *GoHighLevel) match(email, phone string) (*GHLContact, string) {
	for _, id := range f.order {
		if c := f.contacts[id]; email != "" && strings.EqualFold(c.Email, email) {
			return c, "email"
		}
	}
	for _, id := range f.order {
		if c := f.contacts[id]; phone != "" && c.Phone == phone {
			return c, "phone"
		}
	}
	return nil, ""
}

func (f *GoHighLevel) contactJSON(c *GHLContact) map[string]any {
	var custom []any
	for _, id := range sortedKeys(c.CustomFields) {
		custom = append(custom, map[string]any{"id": id, "value": c.CustomFields[id]})
	}
	return map[string]any{"id": c.ID, "locationId": f.ghlOpts.LocationID, "email": c.Email, "phone": c.Phone,
		"firstName": c.FirstName, "lastName": c.LastName, "companyName": c.CompanyName, "tags": nonNil(c.Tags),
		"customFields": nonNil(custom), "dateAdded": c.DateAdded.Format(time.RFC3339), "dateUpdated": c.DateUpdated.Format(time.RFC3339)}
}

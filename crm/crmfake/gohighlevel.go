package crmfake

import (
	"net/http"
	"slices"
	"strings"
	"time"
)

// GHLOptions configure the GoHighLevel fake.
type GHLOptions struct {
	// Options.RateLimit is the burst limit per RateWindow (GHL: 100 per 10 s); 0 leaves it unenforced
	// while the X-RateLimit-* headers still advertise GHL's default.
	Options
	LocationID string // default "loc-1"
	// Fields are the location's custom fields; ids are assigned when empty.
	Fields []GHLField
	// AllowDuplicates is the location's "Allow Duplicate Contact" setting (GET /locations/{id}
	// settings.allowDuplicateContact). Off (the default): POST /contacts/ refuses a contact whose email or
	// phone another contact holds.
	AllowDuplicates bool
	// DuplicatePriority is the order in which the location's duplicate rule matches: "email", "phone"
	// (the default) or "phone", "email".
	DuplicatePriority []string
	// DailyLimit is the location's daily request budget (GHL: 200,000); 0 means the default.
	DailyLimit int
	// Pipelines are the opportunity pipelines with their stage ids.
	Pipelines []GHLPipeline
}

// GHLPipeline is an opportunity pipeline.
type GHLPipeline struct {
	ID, Name string
	Stages   []string
}

// GHLContact is a contact as the fake stores it. The phone is kept as it was written: the duplicate rule
// and the searches compare it as stored (a "(415) 555-0134" is not found by "+14155550134").
type GHLContact struct {
	ID                                             string
	Email, Phone, FirstName, LastName, CompanyName string
	Tags                                           []string
	CustomFields                                   map[string]string   // field id -> value (single-valued fields)
	CustomArrays                                   map[string][]string // field id -> values (CHECKBOX, MULTIPLE_OPTIONS)
	Notes                                          []string
	DateAdded, DateUpdated                         time.Time
}

// GHLOpportunity is an opportunity as the fake stores it. Ids are not in creation order (GHL's are not
// time-ordered); CreatedAt is.
type GHLOpportunity struct {
	ID, Name, ContactID, PipelineID, PipelineStageID, Status string
	CreatedAt, UpdatedAt                                     time.Time
}

// GHLMutation is one contact write (create, upsert or update) with the custom fields and tags it carried.
type GHLMutation struct {
	Time         time.Time
	Path         string
	ContactID    string
	CustomFields map[string]string // field id -> value (arrays ";"-joined)
	Fields       []string          // the body's properties, sorted
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
	oppSeq    uint32
	mutations []GHLMutation
	deleted   []string
	hidden    map[string]bool // contacts the search index does not show yet
	limits    *ghlLimits
	after     []ghlAfter // answers that replace the next matching write's answer after it committed
}

// NewGoHighLevel starts a fake GoHighLevel location. Its default rate window is 10 s.
func NewGoHighLevel(opts GHLOptions) *GoHighLevel {
	if opts.LocationID == "" {
		opts.LocationID = "loc-1"
	}
	if len(opts.DuplicatePriority) == 0 {
		opts.DuplicatePriority = []string{"email", "phone"}
	}
	f := &GoHighLevel{ghlOpts: opts, contacts: map[string]*GHLContact{}, opps: map[string]*GHLOpportunity{}, hidden: map[string]bool{}}
	f.ghlOpts.Fields = slices.Clone(opts.Fields)
	for i := range f.ghlOpts.Fields {
		if f.ghlOpts.Fields[i].ID == "" {
			f.ghlOpts.Fields[i].ID = "cf" + string(rune('A'+i))
		}
	}
	f.limits = newGHLLimits(opts)
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
	mux.HandleFunc("GET /locations/{loc}", f.getLocation)
	mux.HandleFunc("GET /locations/{loc}/customFields", f.listFields)
	mux.HandleFunc("POST /locations/{loc}/customFields", f.createField)
	f.routeOpportunities(mux)
	f.server = newServer(opts.Options, 10*time.Second, authorizeBearer, f.shapes(), f.limited(f.afterCommit(mux)))
	f.URL = f.srv.URL
	f.nextID = 500
	return f
}

// shapes are GHL's NestJS error bodies (apps/v3/common/common-schemas.json UnauthorizedDTO; the 429 body
// is not described, so it follows the same shape).
func (f *GoHighLevel) shapes() errorShapes {
	return errorShapes{
		unauthorized: func(w http.ResponseWriter, status int) {
			writeJSON(w, status, map[string]any{"statusCode": status, "message": "Invalid token: access token is invalid", "error": "Unauthorized"})
		},
		rateLimited: func(w http.ResponseWriter, retryAfter int) {
			f.limits.header(w.Header(), true)
			writeJSON(w, http.StatusTooManyRequests, map[string]any{"statusCode": 429, "message": "Too Many Requests"})
		},
		unavailable: func(w http.ResponseWriter) {
			writeJSON(w, http.StatusServiceUnavailable, map[string]any{"statusCode": 503, "message": "Service Unavailable"})
		},
	}
}

// ghlBad is BadRequestDTO: {"statusCode":400,"message":"..."} (message a string).
func ghlBad(w http.ResponseWriter, msg string) {
	writeJSON(w, http.StatusBadRequest, map[string]any{"statusCode": 400, "message": msg})
}

// ghl422 is UnprocessableDTO: message is an array of strings.
func ghl422(w http.ResponseWriter, msgs ...string) {
	writeJSON(w, http.StatusUnprocessableEntity, map[string]any{"statusCode": 422, "message": msgs, "error": "Unprocessable Entity"})
}

func ghlNotFound(w http.ResponseWriter, what string) {
	writeJSON(w, http.StatusNotFound, map[string]any{"statusCode": 404, "message": what + " not found"})
}

// GET /locations/{locationId} (apps/locations.json GetLocationByIdSuccessfulResponseDto): the fake answers
// the fields leadgate reads, settings.allowDuplicateContact among them.
func (f *GoHighLevel) getLocation(w http.ResponseWriter, r *http.Request) {
	if !f.checkLocation(w, r.PathValue("loc")) {
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"location": map[string]any{"id": f.ghlOpts.LocationID, "name": "Fake location",
		"settings": map[string]any{"allowDuplicateContact": f.ghlOpts.AllowDuplicates, "allowDuplicateOpportunity": false,
			"allowFacebookNameMerge": false, "disableContactTimezone": false}}})
}

func (f *GoHighLevel) checkLocation(w http.ResponseWriter, loc string) bool {
	if loc == "" {
		ghl422(w, "locationId should not be empty")
		return false
	}
	if loc != f.ghlOpts.LocationID {
		writeJSON(w, http.StatusForbidden, map[string]any{"statusCode": 403, "message": "The token does not have access to this location.", "error": "Forbidden"})
		return false
	}
	return true
}

// Contacts returns a snapshot of every contact, oldest first.
func (f *GoHighLevel) Contacts() []GHLContact {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := make([]GHLContact, 0, len(f.order))
	for _, id := range f.order {
		out = append(out, f.contacts[id].clone())
	}
	return out
}

func (c *GHLContact) clone() GHLContact {
	out := *c
	out.Tags, out.Notes, out.CustomFields = slices.Clone(c.Tags), slices.Clone(c.Notes), cloneMap(c.CustomFields)
	out.CustomArrays = map[string][]string{}
	for k, v := range c.CustomArrays {
		out.CustomArrays[k] = slices.Clone(v)
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

// ContactByID returns the contact with id, if any.
func (f *GoHighLevel) ContactByID(id string) (GHLContact, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if c := f.contacts[id]; c != nil {
		return c.clone(), true
	}
	return GHLContact{}, false
}

// DuplicateEmails counts emails held by more than one contact.
func (f *GoHighLevel) DuplicateEmails() int {
	return duplicates(f.Contacts(), func(c GHLContact) string { return strings.ToLower(c.Email) })
}

// Mutations returns every contact write.
func (f *GoHighLevel) Mutations() []GHLMutation {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.mutations)
}

// AddContact stores a contact directly (pre-existing data, phone kept as given); it returns its id.
func (f *GoHighLevel) AddContact(c GHLContact) string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.insert(c).ID
}

// HideFromSearch makes the duplicate and advanced searches miss the contact, as GHL's search index does
// for a while after a write; upsert and create still see it.
func (f *GoHighLevel) HideFromSearch(id string) {
	f.mu.Lock()
	f.hidden[id] = true
	f.mu.Unlock()
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
	arrays := map[string][]string{}
	for k, v := range c.CustomArrays {
		arrays[k] = slices.Clone(v)
	}
	c.CustomArrays = arrays
	c.DateAdded, c.DateUpdated = time.Now(), time.Now()
	f.contacts[c.ID] = &c
	f.order = append(f.order, c.ID)
	return &c
}

func (f *GoHighLevel) contactJSON(c *GHLContact) map[string]any {
	return map[string]any{"id": c.ID, "locationId": f.ghlOpts.LocationID, "email": c.Email, "phone": c.Phone,
		"firstName": c.FirstName, "lastName": c.LastName, "companyName": c.CompanyName, "tags": nonNil(slices.Clone(c.Tags)),
		"customFields": f.customJSON(c), "dateAdded": c.DateAdded.UTC().Format(time.RFC3339Nano),
		"dateUpdated": c.DateUpdated.UTC().Format(time.RFC3339Nano)}
}

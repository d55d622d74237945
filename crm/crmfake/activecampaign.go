package crmfake

import (
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"
)

// ACAccountRateLimit is ActiveCampaign's documented request limit: 5 requests per second per account
// (developers.activecampaign.com/reference/rate-limits). Options.RateLimit 0 leaves the fake unlimited for
// throughput tests; a test of behaviour at the real limit sets RateLimit: ACAccountRateLimit.
const ACAccountRateLimit = 5

// ACOptions configure the ActiveCampaign fake.
type ACOptions struct {
	Options
	// Fields are the account's custom fields; ids are assigned from 1 in order when empty.
	Fields []ACField
	// Pipelines are deal groups with their stages (deal mode).
	Pipelines []ACPipeline
	// Users are the account's users (deal owners); default one user, id "1", who owns the API key
	// (GET /users/me).
	Users []ACUser
	// AllowNullEmail is the account's opt-in to phone-only contacts. POST /contacts creates a contact
	// without an email only when the account has it and the request sets contact.allowNullEmail
	// (reference/create-a-new-contact).
	AllowNullEmail bool
	// ImportsPerMinute limits multi-contact bulk import requests (documented: 100 a minute) and
	// SingleImportsPerMinute single-contact ones (documented: 20 a minute), answering the importer's 400
	// "Rate limit exceeded." (reference/bulk-import-contacts); 0 = the documented limit.
	ImportsPerMinute, SingleImportsPerMinute int
	// ImportPolls is the status read on which an import batch completes (default 2).
	ImportPolls int
}

// ACUser is a user of the account.
type ACUser struct {
	ID, Username string
}

// ACField is a custom contact field.
type ACField struct {
	ID, Title, Perstag, Type string
}

// ACPipeline is a deal group and its stages (stage ids in order).
type ACPipeline struct {
	ID, Title string
	Stages    []ACField // ID and Title used
	// Currency is the pipeline's default deal currency (dealGroup.currency); default "usd".
	Currency string
	// NoAutoAssign turns the pipeline's auto-assign option off (dealGroup.autoassign 0): a deal created
	// in it must name its owner (reference/create-a-deal-new: "owner ... Required if the pipeline's
	// auto-assign option is disabled"). AC's default is on (autoassign 1, round robin).
	NoAutoAssign bool
}

// ACContact is a contact as the fake stores it.
type ACContact struct {
	ID                                string
	Email, Phone, FirstName, LastName string
	Fields                            map[string]string // custom field id -> value
	Tags                              []string          // tag names
	Notes                             []string
	CDate, UDate                      time.Time
}

// ACDeal is a deal as the fake stores it.
type ACDeal struct {
	ID, Title, Contact, Group, Stage string
	Owner, Currency                  string
	Value                            int64 // in cents
}

// ACAutomationRun is one start of the account's automations by a contact write: every contact an API
// write creates or updates starts them, and so does every contact a bulk import carries unless the
// import sets exclude_automations (reference/bulk-import-contacts: "By default, automations will run").
type ACAutomationRun struct {
	Time      time.Time
	ContactID string
	Trigger   string // "contact_added" or "contact_updated"
	Via       string // the request path that fired it
}

// ACMutation is one write to a contact (create, sync or update) with the field values it carried.
type ACMutation struct {
	Time        time.Time
	Method      string
	Path        string
	ContactID   string
	FieldValues map[string]string // custom field id -> value as sent
}

// ActiveCampaign is a fake ActiveCampaign v3 account serving {URL}/api/3/.
type ActiveCampaign struct {
	*server
	URL string // base URL, as configured in leadgate (the adapter appends /api/3)

	acOpts    ACOptions
	contacts  map[string]*ACContact
	order     []string
	tags      map[string]string // id -> name
	deleted   []string
	deals     map[string]*ACDeal
	mutations []ACMutation
	runs      []ACAutomationRun
	hangs     []Response // timeout-after-commit injections (activecampaign_faults.go)

	imports     map[string]*ACBulkImport
	importOrder []string
	importTimes map[bool][]time.Time // single-contact (true) and multi-contact (false) import requests
	importFail  int                  // FailImportRows: valid contacts still to fail
	importDrop  int                  // DropImportRows: valid contacts still to skip silently
}

// NewActiveCampaign starts a fake ActiveCampaign account. Close it when done.
func NewActiveCampaign(opts ACOptions) *ActiveCampaign {
	f := &ActiveCampaign{acOpts: opts, contacts: map[string]*ACContact{}, tags: map[string]string{}, deals: map[string]*ACDeal{},
		importTimes: map[bool][]time.Time{}}
	f.acOpts.Fields = slices.Clone(opts.Fields)
	for i := range f.acOpts.Fields {
		if f.acOpts.Fields[i].ID == "" {
			f.acOpts.Fields[i].ID = strconv.Itoa(i + 1)
		}
	}
	if len(f.acOpts.Users) == 0 {
		f.acOpts.Users = []ACUser{{ID: "1", Username: "admin"}}
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /api/3/contacts", f.listContacts)
	mux.HandleFunc("POST /api/3/contacts", f.createContact)
	mux.HandleFunc("GET /api/3/contacts/{id}", f.getContact)
	mux.HandleFunc("PUT /api/3/contacts/{id}", f.updateContact)
	mux.HandleFunc("DELETE /api/3/contacts/{id}", f.deleteContact)
	mux.HandleFunc("POST /api/3/contact/sync", f.syncContact)
	mux.HandleFunc("POST /api/3/import/bulk_import", f.bulkImport)
	mux.HandleFunc("GET /api/3/import/info", f.bulkImportInfo)
	mux.HandleFunc("GET /api/3/fields", f.listFields)
	mux.HandleFunc("POST /api/3/fields", f.createField)
	mux.HandleFunc("POST /api/3/fieldRels", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, http.StatusCreated, map[string]any{"fieldRel": map[string]any{"id": "1"}})
	})
	mux.HandleFunc("GET /api/3/tags", f.listTags)
	mux.HandleFunc("POST /api/3/tags", f.createTag)
	mux.HandleFunc("POST /api/3/contactTags", f.addContactTag)
	mux.HandleFunc("POST /api/3/notes", f.addNote)
	mux.HandleFunc("GET /api/3/contacts/{id}/notes", f.listContactNotes)
	f.routeDeals(mux)
	f.routeActions(mux)
	f.server = newServer(opts.Options, time.Second, authorizeAC, acShapes(opts.RateLimit), f.hangAfterCommit(mux))
	f.URL = f.srv.URL
	f.nextID = 100
	return f
}

func authorizeAC(r *http.Request, o Options) bool {
	tok := r.Header.Get("Api-Token")
	return tok != "" && (o.Token == "" || tok == o.Token)
}

// acShapes are AC's error answers (reference/errors, reference/rate-limits): a 429 carries Retry-After
// (set by the server) and the RateLimit-Limit / RateLimit-Remaining headers.
func acShapes(limit int) errorShapes {
	if limit <= 0 {
		limit = ACAccountRateLimit
	}
	return errorShapes{
		unauthorized: func(w http.ResponseWriter, status int) {
			writeJSON(w, status, map[string]any{"message": "No Result found for User with API key"})
		},
		rateLimited: func(w http.ResponseWriter, retryAfter int) {
			w.Header().Set("RateLimit-Limit", strconv.Itoa(limit))
			w.Header().Set("RateLimit-Remaining", "0")
			writeJSON(w, http.StatusTooManyRequests, map[string]any{"message": "Too Many Requests"})
		},
		unavailable: func(w http.ResponseWriter) {
			writeJSON(w, http.StatusServiceUnavailable, map[string]any{"message": "Service Unavailable"})
		},
	}
}

// acError writes the 422 shape of reference/errors: {"errors":[{"title","detail","code","source":{"pointer"}}]}.
func acError(w http.ResponseWriter, status int, title, code, pointer string) {
	writeJSON(w, status, map[string]any{"errors": []any{map[string]any{
		"title": title, "detail": "", "code": code, "source": map[string]string{"pointer": pointer},
	}}})
}

func acBad(w http.ResponseWriter, msg string) {
	acError(w, http.StatusBadRequest, msg, "invalid", "/data")
}

func acNotFound(w http.ResponseWriter, what, id string) {
	writeJSON(w, http.StatusNotFound, map[string]any{"message": "No Result found for " + what + " with id " + id})
}

// Contacts returns a snapshot of every contact, oldest first.
func (f *ActiveCampaign) Contacts() []ACContact {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := make([]ACContact, 0, len(f.order))
	for _, id := range f.order {
		out = append(out, f.copyContact(f.contacts[id]))
	}
	return out
}

// Contact returns the contact with email (case-insensitive), if any.
func (f *ActiveCampaign) Contact(email string) (ACContact, bool) {
	for _, c := range f.Contacts() {
		if strings.EqualFold(c.Email, email) {
			return c, true
		}
	}
	return ACContact{}, false
}

// DuplicateEmails counts emails held by more than one contact (AC itself forbids these).
func (f *ActiveCampaign) DuplicateEmails() int {
	return duplicates(f.Contacts(), func(c ACContact) string { return strings.ToLower(c.Email) })
}

// Deals returns a snapshot of every deal.
func (f *ActiveCampaign) Deals() []ACDeal {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []ACDeal
	for _, d := range f.deals {
		out = append(out, *d)
	}
	slices.SortFunc(out, func(a, b ACDeal) int { return cmpID(a.ID, b.ID) })
	return out
}

// AutomationRuns returns every start of the account's automations by a contact write, oldest first.
func (f *ActiveCampaign) AutomationRuns() []ACAutomationRun {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.runs)
}

// runAutomations records that a write to contact id started the account's automations (caller holds the lock).
func (f *ActiveCampaign) runAutomations(id string, created bool, via string) {
	trigger := "contact_updated"
	if created {
		trigger = "contact_added"
	}
	f.runs = append(f.runs, ACAutomationRun{Time: time.Now(), ContactID: id, Trigger: trigger, Via: via})
}

// Mutations returns every contact write with the custom field values it carried.
func (f *ActiveCampaign) Mutations() []ACMutation {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.mutations)
}

// AddContact stores a contact directly (pre-existing data; its CDate is kept when set, else now); it
// returns its id.
func (f *ActiveCampaign) AddContact(c ACContact) string {
	f.mu.Lock()
	defer f.mu.Unlock()
	c.ID = f.newID()
	c.Fields = cloneMap(c.Fields)
	if c.CDate.IsZero() {
		c.CDate = time.Now()
	}
	c.UDate = time.Now()
	f.contacts[c.ID] = &c
	f.order = append(f.order, c.ID)
	return c.ID
}

// AddDeal stores a deal directly (a pre-existing deal of a contact, for imports); it returns its id.
func (f *ActiveCampaign) AddDeal(d ACDeal) string {
	f.mu.Lock()
	defer f.mu.Unlock()
	d.ID = f.newID()
	f.deals[d.ID] = &d
	return d.ID
}

// HumanEdit changes one field of a contact as a person in the AC UI would: field is "email", "phone",
// "firstName", "lastName" or a custom field id. It reports whether the contact exists.
func (f *ActiveCampaign) HumanEdit(contactID, field, value string) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	c := f.contacts[contactID]
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
	default:
		c.Fields[field] = value
	}
	c.UDate = time.Now()
	return true
}

// HumanMoveDeal moves a deal's stage as a person would.
func (f *ActiveCampaign) HumanMoveDeal(dealID, stage string) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	d := f.deals[dealID]
	if d != nil {
		d.Stage = stage
	}
	return d != nil
}

func (f *ActiveCampaign) copyContact(c *ACContact) ACContact {
	out := *c
	out.Fields = cloneMap(c.Fields)
	out.Tags = slices.Clone(c.Tags)
	out.Notes = slices.Clone(c.Notes)
	return out
}

func (f *ActiveCampaign) contactJSON(c *ACContact) map[string]any {
	return map[string]any{
		"id": c.ID, "email": c.Email, "phone": c.Phone, "firstName": c.FirstName, "lastName": c.LastName,
		"cdate": c.CDate.Format(time.RFC3339), "udate": c.UDate.Format(time.RFC3339),
		"links": map[string]string{}, "hash": "h" + c.ID,
	}
}

func (f *ActiveCampaign) fieldValuesJSON(c *ACContact) []any {
	out := []any{}
	for _, id := range sortedKeys(c.Fields) {
		out = append(out, map[string]any{"contact": c.ID, "field": id, "value": c.Fields[id], "id": c.ID + "-" + id})
	}
	return out
}

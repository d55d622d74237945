package crmfake

import (
	"net/http"
	"slices"
	"strings"
	"time"
)

// HSOptions configure the HubSpot fake.
type HSOptions struct {
	Options
	// Properties are the contact properties that exist besides the built-ins (email, phone, firstname,
	// lastname, company, lifecyclestage). Writing an unknown property fails the batch with a 400.
	Properties []string
	// LifecycleStages is the lifecyclestage option order; default HubSpot's defaults.
	LifecycleStages []string
	// Pipelines are the deal pipelines; default HubSpot's default "Sales Pipeline" (id "default").
	Pipelines []HSPipeline
}

// HSContact is a contact as the fake stores it.
type HSContact struct {
	ID         string
	Properties map[string]string
	Notes      []string
	CreatedAt  time.Time
	UpdatedAt  time.Time
}

// HSMutation is one write to a contact with the properties it carried.
type HSMutation struct {
	Time       time.Time
	Path       string
	ContactID  string
	Properties map[string]string
}

// HubSpot is a fake HubSpot CRM v3 account.
type HubSpot struct {
	*server
	URL string

	hsOpts    HSOptions
	props     map[string]bool
	contacts  map[string]*HSContact
	order     []string
	conflicts map[string]string // email -> existing id to report as a CONFLICT on upsert
	mutations []HSMutation
	deals     map[string]*HSDeal
	merges    []HSMerge
	deleted   []string
}

var hsBuiltins = []string{"email", "phone", "firstname", "lastname", "company", "lifecyclestage", "hs_object_id", "createdate", "lastmodifieddate"}

// hsDefaultStages is HubSpot's default lifecyclestage order.
var hsDefaultStages = []string{"subscriber", "lead", "marketingqualifiedlead", "salesqualifiedlead", "opportunity", "customer", "evangelist", "other"}

// NewHubSpot starts a fake HubSpot account. Its default rate window is HubSpot's 10 s.
func NewHubSpot(opts HSOptions) *HubSpot {
	f := &HubSpot{hsOpts: opts, props: map[string]bool{}, contacts: map[string]*HSContact{}, conflicts: map[string]string{},
		deals: map[string]*HSDeal{}}
	if len(f.hsOpts.LifecycleStages) == 0 {
		f.hsOpts.LifecycleStages = hsDefaultStages
	}
	if len(f.hsOpts.Pipelines) == 0 {
		f.hsOpts.Pipelines = hsDefaultPipelines
	}
	for _, p := range append(slices.Clone(hsBuiltins), opts.Properties...) {
		f.props[p] = true
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /crm/v3/objects/contacts", f.list)
	mux.HandleFunc("POST /crm/v3/objects/contacts", f.create)
	mux.HandleFunc("POST /crm/v3/objects/contacts/batch/read", f.batchRead)
	mux.HandleFunc("POST /crm/v3/objects/contacts/batch/update", f.batchUpdate)
	mux.HandleFunc("POST /crm/v3/objects/contacts/batch/upsert", f.batchUpsert)
	mux.HandleFunc("POST /crm/v3/objects/contacts/search", f.search)
	mux.HandleFunc("POST /crm/v3/objects/notes/batch/create", f.createNotes)
	mux.HandleFunc("GET /crm/v3/properties/contacts", f.listProperties)
	mux.HandleFunc("GET /crm/v3/properties/contacts/{name}", f.getProperty)
	mux.HandleFunc("POST /crm/v3/properties/contacts", f.createProperty)
	mux.HandleFunc("GET /crm/v3/pipelines/deals", f.listPipelines)
	mux.HandleFunc("DELETE /crm/v3/objects/contacts/{id}", f.deleteContact)
	mux.HandleFunc("POST /crm/v3/objects/contacts/merge", f.mergeContacts)
	f.routeActions(mux)
	mux.HandleFunc("POST /crm/v3/objects/deals/batch/create", f.createDeals)
	mux.HandleFunc("POST /crm/v3/objects/deals/batch/read", f.readDeals)
	mux.HandleFunc("POST /crm/v3/objects/deals/batch/update", f.updateDeals)
	mux.HandleFunc("POST /crm/v4/associations/contacts/deals/batch/read", f.contactDealAssociations)
	f.server = newServer(opts.Options, 10*time.Second, authorizeBearer, hsShapes, mux)
	f.URL = f.srv.URL
	f.nextID = 1000
	return f
}

func authorizeBearer(r *http.Request, o Options) bool {
	tok, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	return ok && tok != "" && (o.Token == "" || tok == o.Token)
}

func hsError(w http.ResponseWriter, status int, category, msg string) {
	writeJSON(w, status, map[string]any{"status": "error", "message": msg, "correlationId": "fake-correlation", "category": category})
}

var hsShapes = errorShapes{
	unauthorized: func(w http.ResponseWriter, status int) {
		hsError(w, status, "INVALID_AUTHENTICATION", "Authentication credentials not found.")
	},
	rateLimited: func(w http.ResponseWriter, retryAfter int) {
		w.Header().Set("X-HubSpot-RateLimit-Interval-Milliseconds", "10000")
		w.Header().Set("X-HubSpot-RateLimit-Remaining", "0")
		writeJSON(w, http.StatusTooManyRequests, map[string]any{"status": "error", "message": "You have reached your ten secondly limit.",
			"errorType": "RATE_LIMIT", "correlationId": "fake-correlation", "policyName": "TEN_SECONDLY_ROLLING"})
	},
	unavailable: func(w http.ResponseWriter) {
		hsError(w, http.StatusServiceUnavailable, "SERVICE_UNAVAILABLE", "Service Unavailable")
	},
}

func hsBad(w http.ResponseWriter, msg string) {
	hsError(w, http.StatusBadRequest, "VALIDATION_ERROR", msg)
}

// Contacts returns a snapshot of every contact, oldest first.
func (f *HubSpot) Contacts() []HSContact {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := make([]HSContact, 0, len(f.order))
	for _, id := range f.order {
		c := *f.contacts[id]
		c.Properties = cloneMap(c.Properties)
		c.Notes = slices.Clone(c.Notes)
		out = append(out, c)
	}
	return out
}

// Contact returns the contact with email, if any.
func (f *HubSpot) Contact(email string) (HSContact, bool) {
	for _, c := range f.Contacts() {
		if strings.EqualFold(c.Properties["email"], email) {
			return c, true
		}
	}
	return HSContact{}, false
}

// DuplicateEmails counts emails held by more than one contact.
func (f *HubSpot) DuplicateEmails() int {
	return duplicates(f.Contacts(), func(c HSContact) string { return strings.ToLower(c.Properties["email"]) })
}

// Mutations returns every contact write with the properties it carried.
func (f *HubSpot) Mutations() []HSMutation {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.mutations)
}

// AddContact stores a contact directly (pre-existing data); it returns its id.
func (f *HubSpot) AddContact(props map[string]string) string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.insert(cloneMap(props)).ID
}

// HumanEdit sets one property as a person in the HubSpot UI would (no lifecycle rule applies).
func (f *HubSpot) HumanEdit(id, property, value string) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	c := f.contacts[id]
	if c != nil {
		c.Properties[property] = value
		c.UpdatedAt = time.Now()
	}
	return c != nil
}

// ConflictOnUpsert makes a batch upsert of email answer a per-input CONFLICT naming existingID, as
// HubSpot does when the record collides with another one.
func (f *HubSpot) ConflictOnUpsert(email, existingID string) {
	f.mu.Lock()
	f.conflicts[strings.ToLower(email)] = existingID
	f.mu.Unlock()
}

func (f *HubSpot) insert(props map[string]string) *HSContact {
	c := &HSContact{ID: f.newID(), Properties: props, CreatedAt: time.Now(), UpdatedAt: time.Now()}
	if e := props["email"]; e != "" {
		props["email"] = strings.ToLower(e)
	}
	c.Properties["hs_object_id"] = c.ID
	f.contacts[c.ID] = c
	f.order = append(f.order, c.ID)
	return c
}

func (f *HubSpot) byEmail(email string) *HSContact {
	for _, id := range f.order {
		if c := f.contacts[id]; email != "" && strings.EqualFold(c.Properties["email"], email) {
			return c
		}
	}
	return nil
}

// unknownProperty returns the first property that does not exist, or "".
func (f *HubSpot) unknownProperty(props map[string]string) string {
	for _, k := range sortedKeys(props) {
		if !f.props[k] {
			return k
		}
	}
	return ""
}

// set applies properties with HubSpot's rules: lifecyclestage never moves backwards unless it is
// cleared first (a backward set is silently ignored).
func (f *HubSpot) set(c *HSContact, path string, props map[string]string) {
	for k, v := range props {
		if k == "lifecyclestage" && v != "" && c.Properties[k] != "" &&
			slices.Index(f.hsOpts.LifecycleStages, v) < slices.Index(f.hsOpts.LifecycleStages, c.Properties[k]) {
			continue
		}
		if k == "email" {
			v = strings.ToLower(v)
		}
		c.Properties[k] = v
	}
	c.UpdatedAt = time.Now()
	f.mutations = append(f.mutations, HSMutation{Time: time.Now(), Path: path, ContactID: c.ID, Properties: cloneMap(props)})
}

func (f *HubSpot) objectJSON(c *HSContact, props []string) map[string]any {
	p := map[string]any{}
	if props == nil {
		for k, v := range c.Properties {
			p[k] = v
		}
	}
	for _, k := range props {
		if v, ok := c.Properties[k]; ok {
			p[k] = v
		} else {
			p[k] = nil
		}
	}
	return map[string]any{"id": c.ID, "properties": p, "createdAt": c.CreatedAt.Format(time.RFC3339Nano),
		"updatedAt": c.UpdatedAt.Format(time.RFC3339Nano), "archived": false}
}

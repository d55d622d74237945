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
	// lastname, company, lifecyclestage, ...). Writing a property the account lacks is a 400
	// VALIDATION_ERROR naming it (PROPERTY_DOESNT_EXIST), as HubSpot answers.
	Properties []string
	// Enumerations are enumeration contact properties with their option values; a value that is not one of
	// them is a 400 INVALID_OPTION. lifecyclestage is one, with LifecycleStages as its options.
	Enumerations map[string][]string
	// LifecycleStages is the lifecyclestage option order; default HubSpot's defaults.
	LifecycleStages []string
	// Pipelines are the deal pipelines; default HubSpot's default "Sales Pipeline" (id "default").
	Pipelines []HSPipeline

	// Tier applies HubSpot's published limits of an account tier (HSTierFree, HSTierPro, HSTierEnterprise):
	// the burst per 10 s and the daily quota. Options.RateLimit/RateWindow override the burst and DailyLimit
	// the quota. With neither the fake has no limits.
	Tier       string
	DailyLimit int
	// TimeZone is the account's time zone (as GET /account-info/v3/details names it); the daily quota resets
	// at midnight there. Default "US/Eastern".
	TimeZone string
	// SearchPerSecond is the search endpoint's own limit per token (about 4 per second); default 4,
	// negative for none. Search is exempt from the 10 s burst limit.
	SearchPerSecond int
	// AssociationPageSize is how many associations one input of a v4 association batch read gets per
	// page before its result carries paging.next.after; default 500.
	AssociationPageSize int
	// Now is the fake's clock for the daily quota; default time.Now.
	Now func() time.Time
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
	loc       *time.Location
	props     map[string]bool
	contacts  map[string]*HSContact
	order     []string
	conflicts map[string]string // email -> existing id to report as a CONFLICT on upsert
	mutations []HSMutation
	deals     map[string]*HSDeal
	merges    []HSMerge
	deleted   []string
	quota     hsQuota
	faults    []hsFault
}

var hsBuiltins = []string{"email", "phone", "mobilephone", "firstname", "lastname", "company", "lifecyclestage", "hs_object_id",
	"createdate", "lastmodifieddate", "hs_merged_object_ids"}

// hsReadOnly are properties HubSpot calculates; writing one is a 400 READ_ONLY_VALUE.
var hsReadOnly = []string{"hs_object_id", "createdate", "lastmodifieddate", "hs_merged_object_ids"}

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
	if f.hsOpts.TimeZone == "" {
		f.hsOpts.TimeZone = "US/Eastern"
	}
	loc, err := time.LoadLocation(f.hsOpts.TimeZone)
	if err != nil {
		loc = time.UTC
	}
	f.loc = loc
	if f.hsOpts.Now == nil {
		f.hsOpts.Now = time.Now
	}
	if f.hsOpts.SearchPerSecond == 0 {
		f.hsOpts.SearchPerSecond = 4
	}
	if f.hsOpts.AssociationPageSize <= 0 {
		f.hsOpts.AssociationPageSize = 500
	}
	for _, p := range append(slices.Clone(hsBuiltins), opts.Properties...) {
		f.props[p] = true
	}
	for p := range opts.Enumerations {
		f.props[p] = true
	}
	f.quota = newHSQuota(f.hsOpts)
	mux := http.NewServeMux()
	mux.HandleFunc("GET /crm/v3/objects/contacts", f.list)
	mux.HandleFunc("GET /crm/v3/objects/contacts/{id}", f.getContact)
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
	mux.HandleFunc("GET /account-info/v3/details", f.accountDetails)
	f.routeActions(mux)
	// Deals are object type 0-3: the deals description (PublicApiSpecs/CRM/Deals/Rollouts/424/v3/deals.json)
	// declares its paths under /crm/v3/objects/0-3.
	mux.HandleFunc("POST /crm/v3/objects/0-3/batch/create", f.createDeals)
	mux.HandleFunc("POST /crm/v3/objects/0-3/batch/read", f.readDeals)
	mux.HandleFunc("POST /crm/v3/objects/0-3/batch/update", f.updateDeals)
	mux.HandleFunc("POST /crm/v4/associations/contacts/deals/batch/read", f.contactDealAssociations)
	explicitRetryAfter := opts.RetryAfter
	hsOpts := opts.Options
	hsOpts.RateLimit = 0 // HubSpot's limits are the fake's own (hubspot_limits.go)
	f.server = newServer(hsOpts, 10*time.Second, authorizeBearer, hsShapes, f.withFaults(mux))
	f.mu.Lock()
	f.limits = func(r *http.Request, arrived time.Time) (http.Header, func(http.ResponseWriter)) {
		return f.quota.admit(r, arrived, f.hsOpts.Now(), f.loc, explicitRetryAfter)
	}
	f.mu.Unlock()
	f.URL = f.srv.URL
	f.nextID = 1000
	return f
}

func authorizeBearer(r *http.Request, o Options) bool {
	tok, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	return ok && tok != "" && (o.Token == "" || tok == o.Token)
}

var hsShapes = errorShapes{
	unauthorized: func(w http.ResponseWriter, status int) {
		hsError(w, status, "INVALID_AUTHENTICATION", "Authentication credentials not found.")
	},
	rateLimited: func(w http.ResponseWriter, retryAfter int) { hsTenSecondlyLimited(w) },
	unavailable: func(w http.ResponseWriter) {
		hsError(w, http.StatusServiceUnavailable, "SERVICE_UNAVAILABLE", "Service Unavailable")
	},
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

// AddProperty creates a contact property, as an admin would in HubSpot's settings.
func (f *HubSpot) AddProperty(name string) {
	f.mu.Lock()
	f.props[name] = true
	f.mu.Unlock()
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

// checkProperties validates property values like HubSpot: a property the account lacks
// (PROPERTY_DOESNT_EXIST), a calculated one (READ_ONLY_VALUE), a value that is not one of an enumeration's
// options (INVALID_OPTION; "" clears and is always allowed).
func (f *HubSpot) checkProperties(props map[string]string) []hsPropErr {
	var errs []hsPropErr
	for _, k := range sortedKeys(props) {
		v := props[k]
		switch {
		case !f.props[k]:
			errs = append(errs, hsPropErr{Message: `Property "` + k + `" does not exist`, Error: "PROPERTY_DOESNT_EXIST", Name: k})
		case slices.Contains(hsReadOnly, k):
			errs = append(errs, hsPropErr{Message: `"` + k + `" is a read only property; its value cannot be set.`, Error: "READ_ONLY_VALUE", Name: k})
		case v != "" && f.options(k) != nil && !slices.Contains(f.options(k), v):
			errs = append(errs, hsPropErr{Message: v + " was not one of the allowed options: " + strings.Join(f.options(k), ", "),
				Error: "INVALID_OPTION", Name: k})
		}
	}
	return errs
}

// options returns an enumeration property's option values, nil for other properties.
func (f *HubSpot) options(prop string) []string {
	if prop == "lifecyclestage" {
		return f.hsOpts.LifecycleStages
	}
	return f.hsOpts.Enumerations[prop]
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

// objectJSON is SimplePublicObject. With props nil every stored property is returned; else exactly those
// asked for, null when unset.
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

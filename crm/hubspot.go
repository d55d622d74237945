package crm

import (
	"context"
	"net/http"
	"sync"
	"time"
)

// hsNative maps leadgate built-in names to HubSpot contact properties.
var hsNative = map[string]string{
	nameEmail:     "email",
	namePhone:     "phone",
	nameFirstName: "firstname",
	nameLastName:  "lastname",
	nameCompany:   "company",
}

const (
	hsDefaultBase     = "https://api.hubapi.com"
	hsLifecycle       = "lifecyclestage"
	hsMaxBatch        = 100
	hsNoteAssociation = 202 // note -> contact, HUBSPOT_DEFINED
)

// hubSpot is the HubSpot CRM v3 adapter. A batch costs one batch read per identity kind (remote id,
// email), one search per phone-only contact, one batch update, one batch upsert, and one batch note create
// (deal mode adds the deal batch calls of hubspot_deal.go).
type hubSpot struct {
	cfg Config
	api *apiClient

	mu             sync.Mutex
	lifecycleOrder map[string]int // lifecyclestage option -> displayOrder, loaded when first needed
	zone           *time.Location // the account's time zone (daily quota reset), nil until read
	zoneTried      time.Time      // when the account details were last asked for
	nextSearch     time.Time      // the earliest time of this adapter's next search
}

func newHubSpot(cfg Config) (*hubSpot, error) {
	base, err := trimBase(cfg.BaseURL, hsDefaultBase)
	if err != nil {
		return nil, invalidf("hubspot: %v", err)
	}
	if cfg.StageMode == StageModeDeal && (cfg.Pipeline == "" || len(cfg.StageMap) == 0) {
		return nil, invalidf("hubspot: deal mode needs a deal pipeline id and a stage map to its dealstage ids")
	}
	if cfg.StageField == "" {
		cfg.StageField = hsLifecycle
	}
	hdr := http.Header{}
	hdr.Set("Authorization", "Bearer "+cfg.APIToken)
	h := &hubSpot{cfg: cfg}
	h.api = &apiClient{http: cfg.HTTPClient, base: base, header: hdr, classify: h.classify}
	return h, nil
}

func (h *hubSpot) Kind() string  { return KindHubSpot }
func (h *hubSpot) MaxBatch() int { return hsMaxBatch }

// TestConnection lists one contact.
func (h *hubSpot) TestConnection(ctx context.Context) error {
	_, err := h.do(ctx, call{method: http.MethodGet, path: "/crm/v3/objects/contacts", query: map[string][]string{"limit": {"1"}}}, nil)
	return err
}

// hsItem is one contact's progress through a batch.
type hsItem struct {
	c        Contact
	res      *Result
	wants    []want
	id       string            // remote id once known
	remote   map[string]string // current properties; nil when the contact does not exist
	p        plan
	backward string // lifecyclestage to set after clearing it (HubSpot ignores backward moves)

	conflictID bool // inserting hit a CONFLICT naming the existing id: read and update it by id

	deal *hsDeal // deal mode: the contact's deal, planned after the contact writes
}

func (it *hsItem) failed() bool { return it.res.Err != nil }

func (it *hsItem) fail(err error) {
	if it.res.Err == nil {
		it.res.Err = err
	}
}

// Upsert writes up to 100 contacts per round of batch calls (larger batches are split).
func (h *hubSpot) Upsert(ctx context.Context, batch []Contact) []Result {
	out := make([]Result, 0, len(batch))
	for start := 0; start < len(batch); start += hsMaxBatch {
		out = append(out, h.upsertChunk(ctx, batch[start:min(start+hsMaxBatch, len(batch))])...)
	}
	return out
}

func (h *hubSpot) upsertChunk(ctx context.Context, batch []Contact) []Result {
	h.accountZone(ctx) // known before the daily quota runs out, when reading it may be refused
	results := make([]Result, len(batch))
	items := make([]*hsItem, len(batch))
	for i, c := range batch {
		results[i] = Result{LeadgateID: c.LeadgateID, RemoteID: c.RemoteID, Written: c.Previous}
		it := &hsItem{c: c, res: &results[i], id: c.RemoteID}
		items[i] = it
		if c.RemoteID == "" && c.Email == "" && c.Phone == "" {
			it.fail(invalidf("hubspot: contact %s has no email, phone or remote id", c.LeadgateID))
			continue
		}
		w, err := h.cfg.wants(c, hsNative)
		if err != nil {
			it.fail(err)
		}
		if h.cfg.StageMode == StageModeDeal && c.Stage != "" {
			if _, err := h.cfg.remoteStage(c.Stage); err != nil {
				it.fail(err) // checked before any write: a contact is never written without its deal
			}
		}
		it.wants = w
	}
	if err := h.read(ctx, items); err != nil {
		return failAll(results, err)
	}
	for _, it := range live(items) {
		h.plan(ctx, it)
	}
	if err := h.write(ctx, items); err != nil {
		return failAll(results, err)
	}
	if err := h.deals(ctx, items); err != nil {
		return failAll(results, err)
	}
	h.notes(ctx, items)
	for _, it := range items {
		it.res.RemoteID = it.id
		if it.p.written != nil && !it.failed() {
			it.res.Written = it.p.written // a failed contact keeps what leadgate last wrote
		}
		it.res.Conflicts = it.p.conflicts
	}
	return results
}

// live returns the items that have not failed.
func live(items []*hsItem) []*hsItem {
	var out []*hsItem
	for _, it := range items {
		if !it.failed() {
			out = append(out, it)
		}
	}
	return out
}

// failAll gives every result that has no error yet the batch-level error err.
func failAll(results []Result, err error) []Result {
	for i := range results {
		if results[i].Err == nil {
			results[i].Err = err
		}
	}
	return results
}

// properties lists every property a batch needs to read.
func (h *hubSpot) properties(items []*hsItem) []string {
	set := map[string]string{"email": "", "phone": "", h.cfg.StageField: ""}
	for _, it := range items {
		for _, w := range it.wants {
			set[w.key] = ""
		}
	}
	return sortedKeys(set)
}

// plan decides the writes for one contact, including HubSpot's lifecycle-stage rule: a backward move is
// silently ignored by HubSpot, so it is done as clear-then-set in two sequential requests, and only when
// leadgate itself set the current value (a stage reached in the CRM without us is never pushed back).
func (h *hubSpot) plan(ctx context.Context, it *hsItem) {
	defer func() { it.res.InDoubt = inDoubt(it.c, it.p.writes) }()
	it.p = planWrites(it.wants, it.remote, it.remote != nil, it.c.Previous, it.c.InDoubt)
	if h.cfg.StageField != hsLifecycle || it.remote == nil {
		return
	}
	target, ok := it.p.writes[hsLifecycle]
	cur := it.remote[hsLifecycle]
	if !ok || cur == "" || !h.isBackward(ctx, target, cur) {
		return
	}
	prev, had := it.c.Previous[hsLifecycle]
	if had && sameValue(prev, cur) || it.c.InDoubt.Sent(hsLifecycle, cur) {
		it.p.writes[hsLifecycle] = ""
		it.backward = target
		return
	}
	delete(it.p.writes, hsLifecycle)
	if had {
		it.p.written[hsLifecycle] = prev
	} else {
		delete(it.p.written, hsLifecycle)
	}
	it.p.conflicts = append(it.p.conflicts, FieldConflict{Field: hsLifecycle, OurLast: prev, Remote: cur})
}

package crm

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
)

// acNative maps leadgate built-in names to ActiveCampaign's native contact fields. AC has no company field
// on contacts (orgid is deprecated): map "company" to a custom field through FieldMap.
var acNative = map[string]string{
	nameEmail:     "email",
	namePhone:     "phone",
	nameFirstName: "firstName",
	nameLastName:  "lastName",
}

// activeCampaign is the ActiveCampaign v3 adapter. It has no synchronous batch endpoint: each contact
// costs a search or read, then at most one contact write, plus deal, tag and note calls when they change.
type activeCampaign struct {
	cfg Config
	api *apiClient

	mu       sync.Mutex
	fieldIDs map[string]string // custom field reference (id, perstag or title) -> id, once loaded
	tagIDs   map[string]string // tag name (lower case) -> id
	pipe     *acPipeline       // the deal pipeline's currency, stages and owner, once read
}

func newActiveCampaign(cfg Config) (*activeCampaign, error) {
	if cfg.BaseURL == "" {
		return nil, invalidf("activecampaign: base url is required (the account's API URL from its Developer tab)")
	}
	base, err := trimBase(cfg.BaseURL, "")
	if err != nil {
		return nil, invalidf("activecampaign: %v", err)
	}
	if !strings.HasSuffix(base, "/api/3") {
		base += "/api/3"
	}
	if cfg.StageMode == StageModeDeal && (cfg.Pipeline == "" || len(cfg.StageMap) == 0) {
		return nil, invalidf("activecampaign: deal mode needs a pipeline (dealGroup id) and a stage map to dealStage ids")
	}
	h := http.Header{}
	h.Set("Api-Token", cfg.APIToken)
	a := &activeCampaign{cfg: cfg, api: &apiClient{http: cfg.HTTPClient, base: base, header: h},
		tagIDs: map[string]string{}}
	a.api.classify = a.classify
	return a, nil
}

func (a *activeCampaign) Kind() string  { return KindActiveCampaign }
func (a *activeCampaign) MaxBatch() int { return 1 }

// TestConnection lists one contact.
func (a *activeCampaign) TestConnection(ctx context.Context) error {
	_, err := a.api.do(ctx, call{method: http.MethodGet, path: "/contacts", query: map[string][]string{"limit": {"1"}}}, nil)
	return err
}

// Upsert writes the batch one contact at a time. A rate limit, an auth failure or a fault of the
// destination's setup stops the batch: the remaining contacts get the same error without being sent.
func (a *activeCampaign) Upsert(ctx context.Context, batch []Contact) []Result {
	return upsertSequential(ctx, batch, a.upsertOne)
}

// upsertSequential runs one contact at a time and fails the rest of the batch on a batch-level error: a
// rate limit, refused credentials, or a fault of the destination itself (Setup, Quota), which pauses the
// destination anyway and would cost every remaining contact the same failed requests.
func upsertSequential(ctx context.Context, batch []Contact, one func(context.Context, Contact) Result) []Result {
	out := make([]Result, len(batch))
	var stop error
	for i, c := range batch {
		if stop == nil && ctx.Err() != nil {
			stop = transportError(ctx, "upsert", ctx.Err())
		}
		if stop != nil {
			out[i] = Result{LeadgateID: c.LeadgateID, RemoteID: c.RemoteID, Err: stop, Written: c.Previous}
			continue
		}
		out[i] = one(ctx, c)
		if cl := ClassOf(out[i].Err); out[i].Err != nil && (cl == RateLimited || cl == Auth || cl == Setup || cl == Quota) {
			stop = out[i].Err
		}
	}
	return out
}

func (a *activeCampaign) upsertOne(ctx context.Context, c Contact) Result {
	res := Result{LeadgateID: c.LeadgateID, RemoteID: c.RemoteID, Written: c.Previous}
	if err := a.sync(ctx, c, &res); err != nil {
		res.Err = err
	}
	return res
}

// sync does the work of upsertOne, filling res as it goes so a late failure still reports what was done.
func (a *activeCampaign) sync(ctx context.Context, c Contact, res *Result) error {
	if c.RemoteID == "" && c.Email == "" && c.Phone == "" {
		return invalidf("activecampaign: contact %s has no email, phone or remote id", c.LeadgateID)
	}
	wants, err := a.cfg.wants(c, acNative)
	if err != nil {
		return err
	}
	ids, err := a.resolveFields(ctx, a.fieldRefs(wants), &res.Calls)
	if err != nil {
		return err
	}
	remote, err := a.find(ctx, c, ids, &res.Calls)
	if err != nil {
		return err
	}
	if remote.id == "" && c.Email == "" && !a.cfg.AllowNullEmail {
		return a.noNullEmail(c)
	}
	p := planWrites(wants, remote.values, remote.id != "", c.Previous, c.InDoubt)
	res.Conflicts = p.conflicts
	res.InDoubt = inDoubt(c, p.writes)

	deal := dealStep{}
	if a.cfg.StageMode == StageModeDeal && c.Stage != "" && remote.id != "" {
		if deal, err = a.planDeal(ctx, remote.id, c, &res.Calls); err != nil {
			return err
		}
		if deal.conflict != nil {
			res.Conflicts = append(res.Conflicts, *deal.conflict)
		}
	}

	id := remote.id
	switch {
	case id == "":
		if id, err = a.create(ctx, c, p.writes, ids, &res.Calls); err != nil {
			return err
		}
		res.Created = true
	case len(p.writes) > 0 || deal.moves():
		if err := a.update(ctx, id, p.writes, ids, &res.Calls); err != nil {
			return err
		}
	}
	res.RemoteID = id
	written := p.written

	if a.cfg.StageMode == StageModeDeal && c.Stage != "" {
		if res.Created {
			deal = dealStep{create: true}
		}
		if err := a.applyDeal(ctx, id, c, deal, written, &res.Calls); err != nil {
			res.Written = written
			return err
		}
	}
	if err := a.applyTags(ctx, id, c, written, &res.Calls); err != nil {
		res.Written = written
		return err
	}
	if note := noteToAppend(c); note != "" {
		if err := a.addNote(ctx, id, note, &res.Calls); err != nil {
			res.Written = written
			return err
		}
		written[PrevNote] = note
	}
	res.Written = written
	return nil
}

// noNullEmail is the fault of a phone-only lead that matches no contact at an account that cannot hold a
// contact without an email: a fact of the destination's setup, the same for every such lead.
func (a *activeCampaign) noNullEmail(c Contact) *Error {
	return &Error{Class: Setup, Message: fmt.Sprintf("activecampaign: contact %s has a phone and no email, and this "+
		"destination does not create phone-only contacts: turn on phone-only contacts in the ActiveCampaign account "+
		"and set allow_null_email on the destination, or give the lead an email", c.LeadgateID)}
}

// fieldRefs lists the custom field references that must resolve to ids: mapped fields among wants and the
// loop-breaker fields.
func (a *activeCampaign) fieldRefs(wants []want) []string {
	refs := []string{a.cfg.LoopField, a.cfg.SyncField}
	for _, w := range wants {
		if !isACNative(w.key) {
			refs = append(refs, w.key)
		}
	}
	return refs
}

func isACNative(key string) bool {
	for _, v := range acNative {
		if v == key {
			return true
		}
	}
	return false
}

// acContactBody is the {"contact":{...}} body of create, update and sync.
type acContactBody struct {
	Contact acContactIn `json:"contact"`
}

type acContactIn struct {
	Email       string         `json:"email,omitempty"`
	Phone       string         `json:"phone,omitempty"`
	FirstName   string         `json:"firstName,omitempty"`
	LastName    string         `json:"lastName,omitempty"`
	FieldValues []acFieldValue `json:"fieldValues,omitempty"`
	// AllowNullEmail opts a create without an email in to a phone-only contact (reference/create-a-new-contact).
	AllowNullEmail bool `json:"allowNullEmail,omitempty"`
}

type acFieldValue struct {
	Field flexString `json:"field"`
	Value string     `json:"value"`
}

// body builds a contact body from planned writes plus the loop-breaker flag stamped with stamp.
func (a *activeCampaign) body(writes map[string]string, ids map[string]string, stamp string) acContactBody {
	in := acContactIn{
		Email: writes["email"], Phone: writes["phone"],
		FirstName: writes["firstName"], LastName: writes["lastName"],
	}
	for _, k := range sortedKeys(writes) {
		if !isACNative(k) {
			in.FieldValues = append(in.FieldValues, acFieldValue{Field: flexString(ids[k]), Value: writes[k]})
		}
	}
	in.FieldValues = append(in.FieldValues,
		acFieldValue{Field: flexString(ids[a.cfg.LoopField]), Value: LoopValue},
		acFieldValue{Field: flexString(ids[a.cfg.SyncField]), Value: stamp},
	)
	return acContactBody{Contact: in}
}

// acContactOut is the answer of create, update and sync: the contact and its field values.
type acContactOut struct {
	Contact     acContact      `json:"contact"`
	FieldValues []acFieldValue `json:"fieldValues"`
}

// create inserts the contact. With an email it uses contact/sync, which matches on email, so a contact
// created concurrently is updated instead of duplicated; without one, POST /contacts with allowNullEmail.
// An answer that cannot be trusted (a timeout or 5xx after the request went out) is checked by a look-up
// before anything is sent again (verifyCreate).
func (a *activeCampaign) create(ctx context.Context, c Contact, writes, ids map[string]string, calls *int) (string, error) {
	stamp := syncStamp(a.cfg)
	in := a.body(writes, ids, stamp)
	path := "/contact/sync"
	if c.Email == "" {
		path, in.Contact.AllowNullEmail = "/contacts", true
	}
	var out acContactOut
	_, err := a.api.do(ctx, call{method: http.MethodPost, path: path, in: in, out: &out}, calls)
	switch {
	case untrusted(ctx, err):
		if id, ok, verr := a.verifyCreate(ctx, c, ids, stamp, calls); verr == nil && ok {
			return id, nil
		}
		return "", err
	case err != nil && c.Email == "" && refusedNullEmail(err):
		return "", &Error{Class: Setup, Message: "activecampaign: the account refused a contact without an email (" +
			err.Error() + "): turn on phone-only contacts in the ActiveCampaign account, or turn allow_null_email off " +
			"on the destination"}
	case err != nil:
		return "", err
	}
	if out.Contact.ID == "" {
		return "", &Error{Class: Transient, Message: "activecampaign: create contact: response has no contact id"}
	}
	if err := a.checkEcho(out, ids, stamp, "create contact"); err != nil {
		return "", err
	}
	return string(out.Contact.ID), nil
}

// refusedNullEmail reports whether a create answer refuses the missing email (422 pointing at it).
func refusedNullEmail(err error) bool {
	var e *Error
	return errors.As(err, &e) && e.Status == http.StatusUnprocessableEntity && strings.Contains(strings.ToLower(e.Message), "email")
}

// update writes only the changed fields, with the loop-breaker flag, by remote id. An untrusted answer is
// checked by reading the contact back: a write that landed is not repeated.
func (a *activeCampaign) update(ctx context.Context, id string, writes, ids map[string]string, calls *int) error {
	stamp := syncStamp(a.cfg)
	var out acContactOut
	_, err := a.api.do(ctx, call{method: http.MethodPut, path: "/contacts/" + pathID(id), in: a.body(writes, ids, stamp), out: &out}, calls)
	if untrusted(ctx, err) {
		if ok, verr := a.landed(ctx, id, ids, stamp, calls); verr == nil && ok {
			return nil
		}
		return err
	}
	if err != nil {
		return err
	}
	return a.checkEcho(out, ids, stamp, "update contact "+id)
}

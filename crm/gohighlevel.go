package crm

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"sync"
)

// ghlNative maps leadgate built-in names to GoHighLevel contact fields.
var ghlNative = map[string]string{
	nameEmail:     "email",
	namePhone:     "phone",
	nameFirstName: "firstName",
	nameLastName:  "lastName",
	nameCompany:   "companyName",
}

const (
	ghlDefaultBase = "https://services.leadconnectorhq.com"
	ghlVersion     = "2021-07-28"
)

// goHighLevel is the GoHighLevel (LeadConnector) v2 adapter. Contacts are written with POST
// /contacts/upsert, which follows the location's "Allow Duplicate Contact" setting (leadgate never sets
// createNewIfDuplicateAllowed), or PUT /contacts/{id} once the id is known. Tags go through the add/remove
// endpoints because upsert overwrites all tags.
type goHighLevel struct {
	cfg Config
	api *apiClient

	mu       sync.Mutex
	fieldIDs map[string]string // custom field reference (id, fieldKey, name) -> id, once loaded
}

func newGoHighLevel(cfg Config) (*goHighLevel, error) {
	base, err := trimBase(cfg.BaseURL, ghlDefaultBase)
	if err != nil {
		return nil, invalidf("gohighlevel: %v", err)
	}
	if cfg.LocationID == "" {
		return nil, invalidf("gohighlevel: location id is required")
	}
	if cfg.StageMode == StageModeDeal && (cfg.Pipeline == "" || len(cfg.StageMap) == 0) {
		return nil, invalidf("gohighlevel: deal mode needs a pipeline id and a stage map to pipeline stage ids")
	}
	h := http.Header{}
	h.Set("Authorization", "Bearer "+cfg.APIToken)
	h.Set("Version", ghlVersion)
	return &goHighLevel{cfg: cfg, api: &apiClient{http: cfg.HTTPClient, base: base, header: h}}, nil
}

func (g *goHighLevel) Kind() string  { return KindGoHighLevel }
func (g *goHighLevel) MaxBatch() int { return 1 }

// TestConnection lists the location's custom fields (needs only the contacts/locations read scopes).
func (g *goHighLevel) TestConnection(ctx context.Context) error {
	_, err := g.listFields(ctx, nil)
	return err
}

// Upsert writes the batch one contact at a time; a rate limit or auth failure stops the batch.
func (g *goHighLevel) Upsert(ctx context.Context, batch []Contact) []Result {
	return upsertSequential(ctx, batch, func(ctx context.Context, c Contact) Result {
		res := Result{LeadgateID: c.LeadgateID, RemoteID: c.RemoteID, Written: c.Previous}
		if err := g.sync(ctx, c, &res); err != nil {
			res.Err = err
		}
		return res
	})
}

func (g *goHighLevel) sync(ctx context.Context, c Contact, res *Result) error {
	if c.RemoteID == "" && c.Email == "" && c.Phone == "" {
		return invalidf("gohighlevel: contact %s has no email, phone or remote id", c.LeadgateID)
	}
	wants, err := g.cfg.wants(c, ghlNative)
	if err != nil {
		return err
	}
	refs := []string{g.cfg.LoopField, g.cfg.SyncField}
	for _, w := range wants {
		if !isNative(ghlNative, w.key) {
			refs = append(refs, w.key)
		}
	}
	ids, err := g.resolveFields(ctx, refs, &res.Calls)
	if err != nil {
		return err
	}
	remote, err := g.find(ctx, c, ids, &res.Calls)
	if err != nil {
		return err
	}
	p := planWrites(wants, remote.values, remote.id != "", c.Previous)

	id := remote.id
	if id == "" {
		var created bool
		id, created, err = g.upsert(ctx, p.writes, ids, &res.Calls)
		var e *Error
		if errors.As(err, &e) && e.ExistingID != "" {
			// The location does not allow the duplicate and named the existing contact: read it and
			// update it there, respecting its first-touch fields and human edits.
			if remote, err = g.get(ctx, e.ExistingID, ids, &res.Calls); err != nil {
				return err
			}
			id, p = remote.id, planWrites(wants, remote.values, true, c.Previous)
		} else if err != nil {
			return err
		}
		res.Created = created
	}
	res.RemoteID = id
	res.Conflicts = p.conflicts
	written := p.written
	res.Written = written

	deal := dealStep{}
	if g.cfg.StageMode == StageModeDeal && c.Stage != "" {
		if res.Created {
			deal.create = true
		} else if deal, err = g.planOpportunity(ctx, id, c, &res.Calls); err != nil {
			return err
		}
		if deal.conflict != nil {
			res.Conflicts = append(res.Conflicts, *deal.conflict)
		}
	}
	if remote.id != "" && (len(p.writes) > 0 || deal.moves()) {
		in := g.body(p.writes, ids)
		if _, err := g.api.do(ctx, call{method: http.MethodPut, path: "/contacts/" + pathID(id), in: in}, &res.Calls); err != nil {
			return err
		}
	}
	if g.cfg.StageMode == StageModeDeal && c.Stage != "" {
		if err := g.applyOpportunity(ctx, id, c, deal, written, &res.Calls); err != nil {
			return err
		}
	}
	if err := g.applyTags(ctx, id, c, written, &res.Calls); err != nil {
		return err
	}
	if note := noteToAppend(c); note != "" {
		in := map[string]string{"body": note}
		if _, err := g.api.do(ctx, call{method: http.MethodPost, path: "/contacts/" + pathID(id) + "/notes", in: in}, &res.Calls); err != nil {
			return err
		}
		written[PrevNote] = note
	}
	return nil
}

func isNative(native map[string]string, key string) bool {
	for _, v := range native {
		if v == key {
			return true
		}
	}
	return false
}

type ghlCustomValue struct {
	ID         string `json:"id"`
	FieldValue string `json:"field_value"`
}

// body builds the contact fields of an upsert or update from planned writes plus the loop-breaker flag.
// Tags are never sent: upsert and update overwrite the whole tag list.
func (g *goHighLevel) body(writes, ids map[string]string) map[string]any {
	in := map[string]any{}
	var custom []ghlCustomValue
	for _, k := range sortedKeys(writes) {
		if isNative(ghlNative, k) {
			in[k] = writes[k]
		} else {
			custom = append(custom, ghlCustomValue{ID: ids[k], FieldValue: writes[k]})
		}
	}
	custom = append(custom,
		ghlCustomValue{ID: ids[g.cfg.LoopField], FieldValue: LoopValue},
		ghlCustomValue{ID: ids[g.cfg.SyncField], FieldValue: syncStamp(g.cfg)},
	)
	in["customFields"] = custom
	return in
}

// upsert inserts through POST /contacts/upsert and reports whether GHL created the contact.
func (g *goHighLevel) upsert(ctx context.Context, writes, ids map[string]string, calls *int) (string, bool, error) {
	in := g.body(writes, ids)
	in["locationId"] = g.cfg.LocationID
	var out struct {
		New     bool `json:"new"`
		Contact struct {
			ID string `json:"id"`
		} `json:"contact"`
	}
	_, err := g.api.do(ctx, call{method: http.MethodPost, path: "/contacts/upsert", in: in, out: &out}, calls)
	if err != nil {
		return "", false, err
	}
	if out.Contact.ID == "" {
		return "", false, &Error{Class: Transient, Message: "gohighlevel: upsert: response has no contact id"}
	}
	return out.Contact.ID, out.New, nil
}

// applyTags adds the tags leadgate has not applied yet and removes those leadgate applied and no longer
// wants (tags added by anyone else are never removed).
func (g *goHighLevel) applyTags(ctx context.Context, id string, c Contact, written map[string]string, calls *int) error {
	add, remove, joined := tagChanges(c.Tags, c.Previous)
	path := "/contacts/" + pathID(id) + "/tags"
	if len(add) > 0 {
		if _, err := g.api.do(ctx, call{method: http.MethodPost, path: path, in: map[string][]string{"tags": add}}, calls); err != nil {
			return err
		}
	}
	if len(remove) > 0 {
		if _, err := g.api.do(ctx, call{method: http.MethodDelete, path: path, in: map[string][]string{"tags": remove}}, calls); err != nil {
			return err
		}
	}
	if joined != "" || written[PrevTags] != "" {
		written[PrevTags] = joined
	}
	return nil
}

// normalizeFieldRef makes field references comparable: GHL keys look like "contact.my_field".
func normalizeFieldRef(s string) string {
	s = strings.ToLower(strings.TrimSpace(s))
	s = strings.Trim(s, "{} ")
	return strings.TrimPrefix(s, "contact.")
}

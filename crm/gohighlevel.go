package crm

import (
	"context"
	"net/http"
	"slices"
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

// goHighLevel is the GoHighLevel (LeadConnector) v2 adapter. How it writes a contact, and why, is told in
// gohighlevel_write.go; tags go through the add/remove endpoints because upsert and update overwrite all
// tags.
type goHighLevel struct {
	cfg    Config
	api    *apiClient
	budget ghlBudget

	mu         sync.Mutex
	setup      ghlSetup // the location's contact fields and pipelines, once loaded
	dupKnown   bool     // dupAllowed has been read
	dupAllowed bool     // the location's "Allow Duplicate Contact" setting
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
	return &goHighLevel{cfg: cfg, api: &apiClient{http: cfg.HTTPClient, base: base, header: ghlHeader(cfg.APIToken)}}, nil
}

// ghlHeader authenticates a request: a Bearer token and the API version every v2 endpoint requires.
func ghlHeader(token string) http.Header {
	h := http.Header{}
	h.Set("Authorization", "Bearer "+token)
	h.Set("Version", ghlVersion)
	return h
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
	fields, err := g.resolveFields(ctx, refs, &res.Calls)
	if err != nil {
		return err
	}
	wants = normalizeWants(wants, fields)
	f, err := g.find(ctx, c, fields, &res.Calls)
	if err != nil {
		return err
	}
	remote, id := f.own, f.own.id
	var p plan
	if id == "" {
		ins, err := g.insert(ctx, c, wants, fields, f, &res.Calls)
		if err != nil {
			return err
		}
		id, res.Created, res.Conflicts = ins.id, ins.created, ins.conflicts
		if ins.existing != nil {
			remote = *ins.existing // re-plan against what GHL holds
		} else {
			p = ins.plan
		}
	}
	existing := remote.id != ""
	if existing {
		p = planUpdate(wants, remote, c.Previous, c.InDoubt)
	}
	res.InDoubt = inDoubt(c, p.writes)
	res.RemoteID = id
	res.Conflicts = append(res.Conflicts, p.conflicts...)
	written := p.written
	res.Written = written

	deal := dealStep{}
	if g.cfg.StageMode == StageModeDeal && c.Stage != "" {
		if res.Created {
			deal.create = true // a record created by this write has no opportunity yet
		} else if deal, err = g.planOpportunity(ctx, id, c, &res.Calls); err != nil {
			return err
		}
		if deal.conflict != nil {
			res.Conflicts = append(res.Conflicts, *deal.conflict)
		}
	}
	if existing && (len(p.writes) > 0 || deal.moves()) {
		conflicts, err := g.update(ctx, id, c, &p, fields, &res.Calls)
		for _, fc := range conflicts {
			if !slices.Contains(res.Conflicts, fc) { // a phone left out at create may be refused again here
				res.Conflicts = append(res.Conflicts, fc)
			}
		}
		if err != nil {
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
		if err := g.appendNote(ctx, id, note, &res.Calls); err != nil {
			return err
		}
		written[PrevNote] = note
	}
	return nil
}

// appendNote adds the note (POST /contacts/{id}/notes, NotesDTO {"body"}). A note write whose answer
// cannot be trusted is checked against the contact's notes (GET /contacts/{id}/notes) before it is
// reported, since a retry would add it a second time.
func (g *goHighLevel) appendNote(ctx context.Context, id, note string, calls *int) error {
	path := "/contacts/" + pathID(id) + "/notes"
	_, err := g.do(ctx, call{method: http.MethodPost, path: path, in: map[string]string{"body": note}}, calls)
	if err == nil || ctx.Err() != nil || !untrustedAnswer(err) {
		return err
	}
	var notes struct {
		Notes []struct {
			Body string `json:"body"`
		} `json:"notes"`
	}
	if _, gerr := g.do(ctx, call{method: http.MethodGet, path: path, out: &notes}, calls); gerr != nil {
		return err
	}
	for _, n := range notes.Notes {
		if strings.TrimSpace(n.Body) == note {
			return nil
		}
	}
	return err
}

func isNative(native map[string]string, key string) bool {
	for _, v := range native {
		if v == key {
			return true
		}
	}
	return false
}

// applyTags adds the tags leadgate has not applied yet and removes those leadgate applied and no longer
// wants (tags added by anyone else are never removed).
func (g *goHighLevel) applyTags(ctx context.Context, id string, c Contact, written map[string]string, calls *int) error {
	add, remove, joined := tagChanges(c.Tags, c.Previous)
	path := "/contacts/" + pathID(id) + "/tags"
	if len(add) > 0 {
		if _, err := g.do(ctx, call{method: http.MethodPost, path: path, in: map[string][]string{"tags": add}}, calls); err != nil {
			return err
		}
	}
	if len(remove) > 0 {
		if _, err := g.do(ctx, call{method: http.MethodDelete, path: path, in: map[string][]string{"tags": remove}}, calls); err != nil {
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

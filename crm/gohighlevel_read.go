package crm

import (
	"cmp"
	"context"
	"net/http"
	"net/url"
	"strings"
	"time"
)

type ghlContact struct {
	ID           string           `json:"id"`
	Email        string           `json:"email"`
	Phone        string           `json:"phone"`
	FirstName    string           `json:"firstName"`
	LastName     string           `json:"lastName"`
	CompanyName  string           `json:"companyName"`
	CustomFields *[]ghlCustomRead `json:"customFields"`
}

type ghlCustomRead struct {
	ID    string `json:"id"`
	Value any    `json:"value"`
}

// ghlRemote is what GHL holds for one contact, keyed like Contact.Previous.
type ghlRemote struct {
	id     string
	email  string
	phone  string
	values map[string]string
}

// ours reports whether a record GHL holds is the lead's own: the same email, or, for a record without an
// email (or a lead without one), the same phone. A record holding the lead's phone under another email is
// another person's (two people, one phone) and is never written.
func ours(c Contact, r ghlRemote) bool {
	if c.Email != "" && strings.EqualFold(strings.TrimSpace(r.email), c.Email) {
		return true
	}
	return (c.Email == "" || strings.TrimSpace(r.email) == "") && samePhone(r.phone, c.Phone)
}

// ghlFound is what a lookup saw: the lead's own record, and a record of another person holding its phone.
type ghlFound struct {
	own         ghlRemote
	phoneHolder string // id of another person's record with the lead's phone ("" when none was seen)
	partial     bool   // own came from a search answer without custom fields
}

// find reads the contact by remote id, else looks it up by email, then by phone, with the duplicate
// search (GET /contacts/search/duplicate, which applies the location's duplicate rules; the phone as
// E.164, the form the description documents). Candidates are checked with ours. A phone-only lead whose
// phone the duplicate search does not find is also searched in the forms a person may have typed (POST
// /contacts/search, one OR group of phone eq filters), since GHL compares phones as stored.
func (g *goHighLevel) find(ctx context.Context, c Contact, fields map[string]ghlField, calls *int) (ghlFound, error) {
	if c.RemoteID != "" {
		r, err := g.get(ctx, c.RemoteID, fields, calls)
		return ghlFound{own: r}, err
	}
	var out ghlFound
	ok := false
	if c.Email != "" {
		hit, err := g.duplicate(ctx, url.Values{"email": {c.Email}}, calls)
		if err != nil {
			return out, err
		}
		ok = g.pick(c, hit, fields, &out)
	}
	if !ok && c.Phone != "" {
		hit, err := g.duplicate(ctx, url.Values{"number": {c.Phone}}, calls)
		if err != nil {
			return out, err
		}
		if len(hit) == 0 && c.Email == "" {
			if hit, err = g.searchPhone(ctx, c.Phone, calls); err != nil {
				return out, err
			}
		}
		ok = g.pick(c, hit, fields, &out)
	}
	if ok && out.partial {
		r, err := g.get(ctx, out.own.id, fields, calls) // the search answer lacks custom fields: read the record
		return ghlFound{own: r, phoneHolder: out.phoneHolder}, err
	}
	return out, nil
}

// pick takes the first candidate that is the lead's own record and notes another person's record that
// holds the lead's phone.
func (g *goHighLevel) pick(c Contact, cands []ghlContact, fields map[string]ghlField, out *ghlFound) bool {
	for _, h := range cands {
		r := g.remote(h, fields)
		switch {
		case ours(c, r):
			out.own, out.partial = r, h.CustomFields == nil
			return true
		case out.phoneHolder == "" && samePhone(r.phone, c.Phone):
			out.phoneHolder = r.id
		}
	}
	return false
}

func (g *goHighLevel) duplicate(ctx context.Context, q url.Values, calls *int) ([]ghlContact, error) {
	q.Set("locationId", g.cfg.LocationID)
	var out struct {
		Contact *ghlContact `json:"contact"`
	}
	if _, err := g.do(ctx, call{method: http.MethodGet, path: "/contacts/search/duplicate", query: q, out: &out}, calls); err != nil {
		return nil, err
	}
	if out.Contact == nil || out.Contact.ID == "" {
		return nil, nil
	}
	return []ghlContact{*out.Contact}, nil
}

// searchPhone finds contacts whose phone is stored in any form of an E.164 number (PhoneForms), oldest
// first. The advanced search's body is described in GHL's search document, not in the OpenAPI file
// (SearchBodyV2DTO declares nothing): filters [{"group":"OR","filters":[{"field","operator","value"}]}],
// pageLimit required.
func (g *goHighLevel) searchPhone(ctx context.Context, e164 string, calls *int) ([]ghlContact, error) {
	forms := PhoneForms(e164)
	if len(forms) == 0 {
		forms = []string{e164}
	}
	var or []any
	for _, f := range forms {
		or = append(or, map[string]string{"field": "phone", "operator": "eq", "value": f})
	}
	in := map[string]any{"locationId": g.cfg.LocationID, "page": 1, "pageLimit": 20,
		"filters": []any{map[string]any{"group": "OR", "filters": or}}}
	var out struct {
		Contacts []ghlContact `json:"contacts"`
	}
	if _, err := g.do(ctx, call{method: http.MethodPost, path: "/contacts/search", in: in, out: &out}, calls); err != nil {
		return nil, err
	}
	return out.Contacts, nil
}

func (g *goHighLevel) get(ctx context.Context, id string, fields map[string]ghlField, calls *int) (ghlRemote, error) {
	var out struct {
		Contact ghlContact `json:"contact"`
	}
	if _, err := g.do(ctx, call{method: http.MethodGet, path: "/contacts/" + pathID(id), out: &out}, calls); err != nil {
		return ghlRemote{}, err
	}
	out.Contact.ID = cmp.Or(out.Contact.ID, id)
	return g.remote(out.Contact, fields), nil
}

func (g *goHighLevel) remote(c ghlContact, fields map[string]ghlField) ghlRemote {
	r := ghlRemote{id: c.ID, email: c.Email, phone: c.Phone, values: map[string]string{
		"email": c.Email, "phone": c.Phone, "firstName": c.FirstName, "lastName": c.LastName, "companyName": c.CompanyName,
	}}
	byID := map[string][]string{}
	for ref, f := range fields {
		byID[f.ID] = append(byID[f.ID], ref)
	}
	if c.CustomFields != nil {
		for _, cf := range *c.CustomFields {
			for _, ref := range byID[cf.ID] {
				r.values[ref] = ghlFieldValue(fields[ref].DataType, cf.Value)
			}
		}
	}
	return r
}

// GHLCustomValue renders a GoHighLevel custom field value as leadgate writes and compares it: multi-select
// values (string arrays) joined by ";", numbers as JSON numbers, absent as "". The importer and drift
// check read values through it too, so every reader agrees with the adapter.
func GHLCustomValue(v any) string {
	switch x := v.(type) {
	case nil:
		return ""
	case string:
		return x
	case []any:
		parts := make([]string, len(x))
		for i, p := range x {
			parts[i] = GHLCustomValue(p)
		}
		return strings.Join(parts, ";")
	default:
		b, _ := jsonMarshal(x)
		return string(b)
	}
}

// ghlFieldValue renders the value of a custom field of the given dataType as leadgate writes and compares
// it: GHLCustomValue, with the options of a multi-valued field (CHECKBOX, MULTIPLE_OPTIONS) as a sorted
// set, since GHL keeps no order leadgate could rely on.
func ghlFieldValue(dataType string, v any) string {
	s := GHLCustomValue(v)
	if (ghlField{DataType: dataType}).multi() {
		return strings.Join(splitMulti(s), ";")
	}
	return s
}

type ghlOpportunity struct {
	ID              string `json:"id"`
	PipelineID      string `json:"pipelineId"`
	PipelineStageID string `json:"pipelineStageId"`
	CreatedAt       string `json:"createdAt"`
}

// ghlOlderOpportunity reports whether opportunity a was created before b. GoHighLevel's opportunity ids
// are not time-ordered, so the contact's first opportunity is found by createdAt
// (SearchOpportunitiesResponseSchema); the id only breaks a tie or stands in for a missing time. The
// adapter and the contact reader both use it.
func ghlOlderOpportunity(aCreated time.Time, aID string, bCreated time.Time, bID string) bool {
	if !aCreated.IsZero() && !bCreated.IsZero() && !aCreated.Equal(bCreated) {
		return aCreated.Before(bCreated)
	}
	if aCreated.IsZero() != bCreated.IsZero() {
		return !aCreated.IsZero() // a known time sorts before an unknown one
	}
	return aID < bID
}

func (o ghlOpportunity) created() time.Time {
	t, _ := time.Parse(time.RFC3339, o.CreatedAt)
	return t
}

// planOpportunity finds the contact's opportunity in the pipeline and plans its stage (deal mode).
func (g *goHighLevel) planOpportunity(ctx context.Context, contactID string, c Contact, calls *int) (dealStep, error) {
	target, err := g.cfg.remoteStage(c.Stage)
	if err != nil {
		return dealStep{}, err
	}
	byID := func(id string) (*remoteDeal, error) {
		var out struct {
			Opportunity ghlOpportunity `json:"opportunity"`
		}
		if _, err := g.do(ctx, call{method: http.MethodGet, path: "/opportunities/" + pathID(id), out: &out}, calls); err != nil {
			return nil, err
		}
		return &remoteDeal{id: out.Opportunity.ID, stage: out.Opportunity.PipelineStageID}, nil
	}
	oldest := func() (*remoteDeal, error) {
		// status=all: every opportunity of the contact counts (the filter has no documented default).
		q := url.Values{"location_id": {g.cfg.LocationID}, "contact_id": {contactID}, "pipeline_id": {g.cfg.Pipeline},
			"status": {"all"}, "limit": {"100"}}
		var out struct {
			Opportunities []ghlOpportunity `json:"opportunities"`
		}
		if _, err := g.do(ctx, call{method: http.MethodGet, path: "/opportunities/search", query: q, out: &out}, calls); err != nil {
			return nil, err
		}
		var opp *ghlOpportunity
		for i, o := range out.Opportunities {
			if o.PipelineID == g.cfg.Pipeline && (opp == nil || ghlOlderOpportunity(o.created(), o.ID, opp.created(), opp.ID)) {
				opp = &out.Opportunities[i]
			}
		}
		if opp == nil {
			return nil, nil
		}
		return &remoteDeal{id: opp.ID, stage: opp.PipelineStageID}, nil
	}
	return planDealStep(c.Previous, target, byID, oldest)
}

// applyOpportunity creates or moves the opportunity as planned and records it in written. A pipeline or
// stage the location lacks is a Setup fault.
func (g *goHighLevel) applyOpportunity(ctx context.Context, contactID string, c Contact, d dealStep, written map[string]string, calls *int) error {
	target, err := g.cfg.remoteStage(c.Stage)
	if err != nil {
		return err
	}
	if d.create || d.move != "" {
		if err := g.checkStage(ctx, cmp.Or(d.move, target), calls); err != nil {
			return err
		}
	}
	var created string
	switch {
	case d.create:
		name := cmp.Or(strings.TrimSpace(c.FirstName+" "+c.LastName), c.Email, c.Phone)
		in := map[string]any{"pipelineId": g.cfg.Pipeline, "locationId": g.cfg.LocationID, "name": name,
			"status": "open", "contactId": contactID, "pipelineStageId": target}
		var out struct {
			Opportunity ghlOpportunity `json:"opportunity"`
		}
		if _, err := g.do(ctx, call{method: http.MethodPost, path: "/opportunities/", in: in, out: &out}, calls); err != nil {
			return err
		}
		created = out.Opportunity.ID
	case d.move != "":
		in := map[string]any{"pipelineId": g.cfg.Pipeline, "pipelineStageId": d.move}
		if _, err := g.do(ctx, call{method: http.MethodPut, path: "/opportunities/" + pathID(d.id), in: in}, calls); err != nil {
			return err
		}
	}
	d.record(written, target, created)
	return nil
}

package crm

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
)

const ghlPageLimit = 100

// ghlReader reads GoHighLevel contacts by id (drift) and lists a location's contacts (import).
type ghlReader struct {
	api      *apiClient
	location string
	pipeline string // deal mode: the pipeline whose opportunity stage is the contact's stage

	fieldAliases map[string][]string       // custom field id -> its fieldKey and name, loaded by the first List
	fieldTypes   map[string]string         // custom field id -> dataType (multi-valued ones compare as sets)
	opps         map[string]ghlOpportunity // contact id -> its opportunity in pipeline, loaded by the first List
}

// ghlListed is a contact as GET /contacts/{id} and POST /contacts/search return it: ghlContact with its
// creation time and the sort values the search resumes after.
type ghlListed struct {
	ghlContact
	DateAdded   string          `json:"dateAdded"`
	SearchAfter json.RawMessage `json:"searchAfter"`
}

func (r *ghlReader) Get(ctx context.Context, id string) (RemoteContact, error) {
	var out struct {
		Contact ghlListed `json:"contact"`
	}
	if _, err := r.api.do(ctx, call{method: http.MethodGet, path: "/contacts/" + pathID(id), out: &out}, nil); err != nil {
		return RemoteContact{}, err
	}
	if r.location != "" {
		// Custom fields are also keyed by fieldKey and name, as a destination may reference them (drift).
		if err := r.loadFields(ctx); err != nil {
			return RemoteContact{}, err
		}
	}
	return r.remote(out.Contact), nil
}

// List pages the location's contacts with POST /contacts/search (GET /contacts/ is deprecated), 100 at a
// time, resuming after the last contact's searchAfter sort values (page numbers stop at 10,000 records).
// Custom field values are keyed by field id and also by fieldKey (with and without "contact.") and name,
// so that a stage field or field map configured by any of them finds its value. In deal mode each contact
// carries its opportunity in the pipeline (PrevDealID, PrevDealStage; the oldest when it has several).
func (r *ghlReader) List(ctx context.Context, cursor string) ([]RemoteContact, string, error) {
	if r.location == "" {
		return nil, "", invalidf("gohighlevel: the import needs the location id")
	}
	if err := r.loadFields(ctx); err != nil {
		return nil, "", err
	}
	if err := r.loadOpps(ctx); err != nil {
		return nil, "", err
	}
	body := map[string]any{"locationId": r.location, "pageLimit": ghlPageLimit}
	if cursor != "" {
		body["searchAfter"] = json.RawMessage(cursor)
	} else {
		body["page"] = 1
	}
	var out struct {
		Contacts []ghlListed `json:"contacts"`
		Total    int         `json:"total"`
	}
	if _, err := r.api.do(ctx, call{method: http.MethodPost, path: "/contacts/search", in: body, out: &out}, nil); err != nil {
		return nil, "", err
	}
	page := make([]RemoteContact, 0, len(out.Contacts))
	for _, c := range out.Contacts {
		rc := r.remote(c)
		if o, ok := r.opps[c.ID]; ok {
			rc.Values[PrevDealID], rc.Values[PrevDealStage] = o.ID, o.PipelineStageID
		}
		page = append(page, rc)
	}
	next := ""
	if n := len(out.Contacts); n == ghlPageLimit {
		last := out.Contacts[n-1].SearchAfter
		if len(last) == 0 || string(last) == "null" {
			return nil, "", &Error{Class: Invalid, Message: "gohighlevel: contact search: a full page without searchAfter values; cannot page on"}
		}
		next = string(last)
	}
	return page, next, nil
}

// remote turns a GoHighLevel contact into a RemoteContact; custom field values are keyed by field id and
// by every alias loadFields found for it.
func (r *ghlReader) remote(c ghlListed) RemoteContact {
	rc := RemoteContact{ID: c.ID, Email: c.Email, Phone: c.Phone, FirstName: c.FirstName, LastName: c.LastName, Company: c.CompanyName,
		Values: map[string]string{"email": c.Email, "phone": c.Phone, "firstName": c.FirstName, "lastName": c.LastName, "companyName": c.CompanyName}}
	rc.CreatedAt, _ = time.Parse(time.RFC3339, c.DateAdded)
	if c.CustomFields == nil {
		return rc
	}
	for _, f := range *c.CustomFields {
		if f.Value == nil {
			continue
		}
		v := ghlFieldValue(r.fieldTypes[f.ID], f.Value)
		rc.Values[f.ID] = v
		for _, alias := range r.fieldAliases[f.ID] {
			rc.Values[alias] = v
		}
	}
	return rc
}

// loadFields reads the location's contact custom fields once (model=contact: without it the answer may
// hold opportunity fields): id -> fieldKey, fieldKey without "contact.", name.
func (r *ghlReader) loadFields(ctx context.Context) error {
	if r.fieldAliases != nil {
		return nil
	}
	var out struct {
		CustomFields []ghlField `json:"customFields"`
	}
	q := url.Values{"model": {"contact"}}
	if _, err := r.api.do(ctx, call{method: http.MethodGet, path: "/locations/" + pathID(r.location) + "/customFields", query: q, out: &out}, nil); err != nil {
		return err
	}
	r.fieldAliases, r.fieldTypes = map[string][]string{}, map[string]string{}
	for _, f := range out.CustomFields {
		r.fieldTypes[f.ID] = f.DataType
		var aliases []string
		for _, a := range []string{f.FieldKey, strings.TrimPrefix(f.FieldKey, "contact."), f.Name} {
			if a != "" && a != f.ID {
				aliases = append(aliases, a)
			}
		}
		r.fieldAliases[f.ID] = aliases
	}
	return nil
}

// loadOpps reads every opportunity of the deal-mode pipeline once (GET /opportunities/search, 100 a page,
// status=all: the description gives the filter no default). A contact's opportunity is its oldest by
// createdAt, the one the adapter moves: GHL's ids are not time-ordered.
func (r *ghlReader) loadOpps(ctx context.Context) error {
	if r.pipeline == "" || r.opps != nil {
		return nil
	}
	opps := map[string]ghlOpportunity{}
	for page := 1; ; page++ {
		var out struct {
			Opportunities []struct {
				ghlOpportunity
				ContactID string `json:"contactId"`
			} `json:"opportunities"`
			Meta struct {
				NextPage *int `json:"nextPage"`
			} `json:"meta"`
		}
		q := url.Values{"location_id": {r.location}, "pipeline_id": {r.pipeline}, "status": {"all"}, "limit": {"100"},
			"page": {strconv.Itoa(page)}}
		if _, err := r.api.do(ctx, call{method: http.MethodGet, path: "/opportunities/search", query: q, out: &out}, nil); err != nil {
			return err
		}
		for _, o := range out.Opportunities {
			if o.PipelineID != r.pipeline || o.ContactID == "" {
				continue
			}
			if cur, ok := opps[o.ContactID]; !ok || ghlOlderOpportunity(o.created(), o.ID, cur.created(), cur.ID) {
				opps[o.ContactID] = o.ghlOpportunity
			}
		}
		if out.Meta.NextPage == nil || len(out.Opportunities) == 0 {
			break
		}
	}
	r.opps = opps
	return nil
}

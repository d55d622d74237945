package hydrate

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/leadgate/leadgate/crm"
)

const (
	ghlVersion   = "2021-07-28"
	ghlPageLimit = 100
)

type ghlOpp struct {
	id, stage string
	created   time.Time
}

// ghlContactJSON is a GoHighLevel contact as GET /contacts/{id} and POST /contacts/search return it.
type ghlContactJSON struct {
	ID           string `json:"id"`
	Email        string `json:"email"`
	Phone        string `json:"phone"`
	FirstName    string `json:"firstName"`
	LastName     string `json:"lastName"`
	CompanyName  string `json:"companyName"`
	DateAdded    string `json:"dateAdded"`
	CustomFields []struct {
		ID    string `json:"id"`
		Value any    `json:"value"`
	} `json:"customFields"`
	SearchAfter json.RawMessage `json:"searchAfter"`
}

// List pages the location's contacts with POST /contacts/search (GET /contacts/ is deprecated), 100 at a
// time, resuming after the last contact's searchAfter sort values (page numbers stop at 10,000 records).
// Custom field values are keyed by field id and also by fieldKey (with and without "contact.") and name,
// so that a stage field or field map configured by any of them finds its value. In deal mode each contact
// carries its opportunity in the pipeline (DealID, DealStage; the oldest when it has several).
func (r *ghlReader) List(ctx context.Context, cursor string) ([]RemoteContact, string, error) {
	if r.location == "" {
		return nil, "", fmt.Errorf("hydrate: gohighlevel import needs the location id")
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
		Contacts []ghlContactJSON `json:"contacts"`
		Total    int              `json:"total"`
	}
	if err := r.c.send(ctx, "POST", "/contacts/search", nil, body, &out); err != nil {
		return nil, "", err
	}
	page := make([]RemoteContact, 0, len(out.Contacts))
	for _, c := range out.Contacts {
		rc := r.remote(c)
		if o, ok := r.opps[c.ID]; ok {
			rc.Values[DealID], rc.Values[DealStage] = o.id, o.stage
		}
		page = append(page, rc)
	}
	next := ""
	if n := len(out.Contacts); n == ghlPageLimit {
		last := out.Contacts[n-1].SearchAfter
		if len(last) == 0 || string(last) == "null" {
			return nil, "", fmt.Errorf("hydrate: gohighlevel contact search: a full page without searchAfter values; cannot page on")
		}
		next = string(last)
	}
	return page, next, nil
}

// remote turns a GoHighLevel contact into a RemoteContact; custom field values are keyed by field id and
// by every alias loadFields found for it.
func (r *ghlReader) remote(c ghlContactJSON) RemoteContact {
	rc := RemoteContact{ID: c.ID, Email: c.Email, Phone: c.Phone, FirstName: c.FirstName, LastName: c.LastName, Company: c.CompanyName,
		Values: map[string]string{"email": c.Email, "phone": c.Phone, "firstName": c.FirstName, "lastName": c.LastName, "companyName": c.CompanyName}}
	rc.CreatedAt, _ = time.Parse(time.RFC3339, c.DateAdded)
	for _, f := range c.CustomFields {
		if f.Value == nil {
			continue
		}
		v := crm.GHLFieldValue(r.fieldTypes[f.ID], f.Value)
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
		CustomFields []struct {
			ID       string `json:"id"`
			Name     string `json:"name"`
			FieldKey string `json:"fieldKey"`
			DataType string `json:"dataType"`
		} `json:"customFields"`
	}
	q := url.Values{"model": {"contact"}}
	if err := r.c.get(ctx, "/locations/"+url.PathEscape(r.location)+"/customFields", q, &out); err != nil {
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
	opps := map[string]ghlOpp{}
	for page := 1; ; page++ {
		var out struct {
			Opportunities []struct {
				ID              string `json:"id"`
				ContactID       string `json:"contactId"`
				PipelineID      string `json:"pipelineId"`
				PipelineStageID string `json:"pipelineStageId"`
				CreatedAt       string `json:"createdAt"`
			} `json:"opportunities"`
			Meta struct {
				NextPage *int `json:"nextPage"`
			} `json:"meta"`
		}
		q := url.Values{"location_id": {r.location}, "pipeline_id": {r.pipeline}, "status": {"all"}, "limit": {"100"},
			"page": {strconv.Itoa(page)}}
		if err := r.c.get(ctx, "/opportunities/search", q, &out); err != nil {
			return err
		}
		for _, o := range out.Opportunities {
			if o.PipelineID != r.pipeline || o.ContactID == "" {
				continue
			}
			created, _ := time.Parse(time.RFC3339, o.CreatedAt)
			if cur, ok := opps[o.ContactID]; !ok || crm.GHLOlderOpportunity(created, o.ID, cur.created, cur.id) {
				opps[o.ContactID] = ghlOpp{id: o.ID, stage: o.PipelineStageID, created: created}
			}
		}
		if out.Meta.NextPage == nil || len(out.Opportunities) == 0 {
			break
		}
	}
	r.opps = opps
	return nil
}

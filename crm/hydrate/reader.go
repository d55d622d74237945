package hydrate

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// RemoteContact is a CRM contact as read for the import and the drift check. Values holds every field
// keyed as the adapters key crm.Result.Written: native names (AC email/phone/firstName/lastName, HubSpot
// property names, GHL email/phone/firstName/lastName/companyName) and custom fields by id.
type RemoteContact struct {
	ID                                string
	Email, Phone, FirstName, LastName string
	Company                           string
	Values                            map[string]string
	CreatedAt                         time.Time
}

// Reader reads a CRM's contacts.
type Reader interface {
	// List returns one page of contacts from cursor ("" = the start) and the next cursor ("" at the end).
	List(ctx context.Context, cursor string) ([]RemoteContact, string, error)
	// Get reads one contact by its remote id.
	Get(ctx context.Context, id string) (RemoteContact, error)
}

// ReaderConfig configures NewReader.
type ReaderConfig struct {
	Kind       string // activecampaign | hubspot | gohighlevel
	BaseURL    string
	Token      string
	LocationID string
	Properties []string // HubSpot: extra properties to read (the stage property, mapped fields)
	Pipeline   string   // deal mode (GoHighLevel, HubSpot): List reads each contact's opportunity/deal stage in this pipeline
	HTTP       *http.Client
}

// NewReader returns the reader of a CRM kind.
func NewReader(cfg ReaderConfig) (Reader, error) {
	hc := cfg.HTTP
	if hc == nil {
		hc = &http.Client{Timeout: 30 * time.Second}
	}
	base := strings.TrimRight(strings.TrimSpace(cfg.BaseURL), "/")
	switch cfg.Kind {
	case "activecampaign":
		if base == "" {
			return nil, fmt.Errorf("hydrate: activecampaign reader needs the account's base url")
		}
		if !strings.HasSuffix(base, "/api/3") {
			base += "/api/3"
		}
		return &acReader{c: &client{http: hc, base: base, token: cfg.Token, provider: cfg.Kind, header: "Api-Token"}, pipeline: cfg.Pipeline}, nil
	case "hubspot":
		props := append(append([]string{}, hubspotProperties...), cfg.Properties...)
		return &hsReader{c: &client{http: hc, base: orDefault(base, DefaultHubSpotURL), token: cfg.Token, provider: cfg.Kind}, props: props,
			pipeline: cfg.Pipeline}, nil
	case "gohighlevel":
		return &ghlReader{c: &client{http: hc, base: orDefault(base, "https://services.leadconnectorhq.com"), token: cfg.Token, provider: cfg.Kind,
			version: ghlVersion}, location: cfg.LocationID, pipeline: cfg.Pipeline}, nil
	}
	return nil, fmt.Errorf("hydrate: no reader for kind %q", cfg.Kind)
}

// acReader lists /contacts by offset and reads each contact for its custom field values (AC's list
// does not carry them): one request per contact plus one per 100, and in deal mode one more per contact
// for its deals.
type acReader struct {
	c        *client
	pipeline string // deal mode: the deal group whose deal stage is the contact's stage
}

func (r *acReader) List(ctx context.Context, cursor string) ([]RemoteContact, string, error) {
	offset, _ := strconv.Atoi(cursor)
	var out struct {
		Contacts []struct {
			ID json.Number `json:"id"`
		} `json:"contacts"`
	}
	q := url.Values{"limit": {"100"}, "offset": {strconv.Itoa(offset)}}
	if err := r.c.get(ctx, "/contacts", q, &out); err != nil {
		return nil, "", err
	}
	page := make([]RemoteContact, 0, len(out.Contacts))
	for _, c := range out.Contacts {
		rc, err := r.Get(ctx, c.ID.String())
		if err != nil {
			return nil, "", err
		}
		page = append(page, rc)
	}
	next := ""
	if len(out.Contacts) == 100 {
		next = strconv.Itoa(offset + 100)
	}
	return page, next, nil
}

func (r *acReader) Get(ctx context.Context, id string) (RemoteContact, error) {
	var out struct {
		Contact struct {
			ID        json.Number `json:"id"`
			Email     string      `json:"email"`
			Phone     string      `json:"phone"`
			FirstName string      `json:"firstName"`
			LastName  string      `json:"lastName"`
			CDate     string      `json:"cdate"`
		} `json:"contact"`
		FieldValues []struct {
			Field json.Number `json:"field"`
			Value string      `json:"value"`
		} `json:"fieldValues"`
	}
	if err := r.c.get(ctx, "/contacts/"+url.PathEscape(id), nil, &out); err != nil {
		return RemoteContact{}, err
	}
	c := out.Contact
	rc := RemoteContact{ID: c.ID.String(), Email: c.Email, Phone: c.Phone, FirstName: c.FirstName, LastName: c.LastName,
		Values: map[string]string{"email": c.Email, "phone": c.Phone, "firstName": c.FirstName, "lastName": c.LastName}}
	rc.CreatedAt, _ = time.Parse(time.RFC3339, c.CDate)
	for _, fv := range out.FieldValues {
		rc.Values[fv.Field.String()] = fv.Value
	}
	if r.pipeline != "" {
		if err := r.addDeal(ctx, &rc); err != nil {
			return RemoteContact{}, err
		}
	}
	return rc, nil
}

// addDeal sets the contact's deal in the pipeline and its stage (DealID, DealStage): the oldest deal
// (lowest id) when it has several, the one the adapter moves.
func (r *acReader) addDeal(ctx context.Context, rc *RemoteContact) error {
	var out struct {
		Deals []struct {
			ID    json.Number `json:"id"`
			Group json.Number `json:"group"`
			Stage json.Number `json:"stage"`
		} `json:"deals"`
	}
	if err := r.c.get(ctx, "/contacts/"+url.PathEscape(rc.ID)+"/deals", nil, &out); err != nil {
		return err
	}
	best, bestN := "", int64(0)
	for _, d := range out.Deals {
		if d.Group.String() != r.pipeline {
			continue
		}
		n, err := d.ID.Int64()
		if err != nil {
			continue
		}
		if best == "" || n < bestN {
			best, bestN = d.ID.String(), n
			rc.Values[DealID], rc.Values[DealStage] = d.ID.String(), d.Stage.String()
		}
	}
	return nil
}

// hsReader pages /crm/v3/objects/contacts with the properties leadgate maps (and, in deal mode, each
// contact's deal in the pipeline, see hubspot_deals.go).
type hsReader struct {
	c        *client
	props    []string
	pipeline string // deal mode: the pipeline whose deal stage is the contact's stage
}

func (r *hsReader) List(ctx context.Context, cursor string) ([]RemoteContact, string, error) {
	var out struct {
		Results []hsObject `json:"results"`
		Paging  struct {
			Next struct {
				After string `json:"after"`
			} `json:"next"`
		} `json:"paging"`
	}
	// properties is an array query parameter of style form, explode true (properties=a&properties=b), per
	// GET /crm/v3/objects/contacts in HubSpot's contacts description.
	q := url.Values{"limit": {"100"}, "properties": r.props}
	if cursor != "" {
		q.Set("after", cursor)
	}
	if err := r.c.get(ctx, "/crm/v3/objects/contacts", q, &out); err != nil {
		return nil, "", err
	}
	page := make([]RemoteContact, 0, len(out.Results))
	for _, o := range out.Results {
		page = append(page, hsRemote(o))
	}
	if err := r.addDeals(ctx, page); err != nil {
		return nil, "", err
	}
	return page, out.Paging.Next.After, nil
}

func (r *hsReader) Get(ctx context.Context, id string) (RemoteContact, error) {
	var o hsObject
	q := url.Values{"properties": r.props}
	if err := r.c.get(ctx, "/crm/v3/objects/contacts/"+url.PathEscape(id), q, &o); err != nil {
		return RemoteContact{}, err
	}
	return hsRemote(o), nil
}

func hsRemote(o hsObject) RemoteContact {
	p := o.Properties
	if p == nil {
		p = map[string]string{}
	}
	return RemoteContact{ID: o.ID, Email: p["email"], Phone: firstNonEmpty(p["phone"], p["mobilephone"]), FirstName: p["firstname"],
		LastName: p["lastname"], Company: p["company"], Values: p, CreatedAt: o.CreatedAt}
}

// ghlReader reads GoHighLevel contacts by id (drift) and lists a location's contacts (import, see
// ghl_list.go).
type ghlReader struct {
	c        *client
	location string
	pipeline string // deal mode: the pipeline whose opportunity stage is the contact's stage

	fieldAliases map[string][]string // custom field id -> its fieldKey and name, loaded by the first List
	fieldTypes   map[string]string   // custom field id -> dataType (multi-valued ones compare as sets)
	opps         map[string]ghlOpp   // contact id -> its opportunity in pipeline, loaded by the first List
}

func (r *ghlReader) Get(ctx context.Context, id string) (RemoteContact, error) {
	var out struct {
		Contact ghlContactJSON `json:"contact"`
	}
	if err := r.c.getVersioned(ctx, "/contacts/"+url.PathEscape(id), &out); err != nil {
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

// getVersioned is get with GoHighLevel's required Version header.
func (c *client) getVersioned(ctx context.Context, path string, out any) error {
	rt := c.http.Transport
	if rt == nil {
		rt = http.DefaultTransport
	}
	hc := *c.http
	hc.Transport = versionTransport{rt}
	cc := *c
	cc.http = &hc
	return cc.get(ctx, path, nil, out)
}

type versionTransport struct{ base http.RoundTripper }

func (v versionTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Version", "2021-07-28")
	return v.base.RoundTrip(r)
}

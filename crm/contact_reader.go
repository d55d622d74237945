package crm

import (
	"context"
	"fmt"
	"net/http"
	"time"
)

// RemoteContact is a CRM contact as read for the import and the drift check. Values holds every field
// keyed as the adapters key Result.Written: native names (AC email/phone/firstName/lastName, HubSpot
// property names, GHL email/phone/firstName/lastName/companyName), custom fields by id, and in deal mode
// the contact's deal or opportunity in the pipeline under PrevDealID and PrevDealStage.
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

// NewReader returns the reader of a CRM kind. A reader sends its requests through the kind's adapter
// client (auth headers, base-URL default, classify hook), so its failures are *Error like the adapter's.
func NewReader(cfg ReaderConfig) (Reader, error) {
	ac := Config{Kind: cfg.Kind, BaseURL: cfg.BaseURL, APIToken: cfg.Token, LocationID: cfg.LocationID, HTTPClient: cfg.HTTP}.withDefaults()
	switch cfg.Kind {
	case KindActiveCampaign:
		a, err := newActiveCampaign(ac)
		if err != nil {
			return nil, err
		}
		return &acReader{api: a.api, pipeline: cfg.Pipeline}, nil
	case KindHubSpot:
		h, err := newHubSpot(ac)
		if err != nil {
			return nil, err
		}
		props := append(append([]string{}, hsReadProperties...), cfg.Properties...)
		return &hsReader{api: h.api, props: props, pipeline: cfg.Pipeline}, nil
	case KindGoHighLevel:
		// Not newGoHighLevel: reading one contact by id (the drift check) needs no location id.
		base, err := trimBase(ac.BaseURL, ghlDefaultBase)
		if err != nil {
			return nil, invalidf("gohighlevel: %v", err)
		}
		return &ghlReader{api: &apiClient{http: ac.HTTPClient, base: base, header: ghlHeader(ac.APIToken)}, location: cfg.LocationID,
			pipeline: cfg.Pipeline}, nil
	}
	return nil, fmt.Errorf("crm: no reader for kind %q", cfg.Kind)
}

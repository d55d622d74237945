package mapping

import (
	"encoding/json"
	"fmt"
	"net/http"
	"sort"
	"strings"

	"github.com/tidwall/gjson"
)

// Source kinds with a preset.
const (
	kindStandardWebhooks = "standard-webhooks"
	kindHMAC             = "hmac"
	kindToken            = "token"
	kindCRMEvent         = "crm-event"
	kindStripe           = "stripe"
	kindTypeform         = "typeform"
	kindTally            = "tally"
	kindFacebookLeads    = "facebook-leads"
	kindHubSpot          = "hubspot"
	kindWebflow          = "webflow"
	kindCalendly         = "calendly"
	kindRetell           = "retell"
	kindVapi             = "vapi"
	kindTwilio           = "twilio"
	kindGoHighLevel      = "gohighlevel"
	kindActiveCampaign   = "activecampaign"
	kindInstantly        = "instantly"
	kindSmartlead        = "smartlead"
)

// payload is what a preset reads: the decoded document and the request headers.
type payload struct {
	doc    gjson.Result
	header http.Header
}

// preset maps one kind's document to items. Items it leaves without Raw get the whole document.
type preset struct {
	mapItems func(payload) []Item
	// acceptsArray is true for kinds whose senders batch events in a top-level JSON array.
	acceptsArray bool
}

// presets is the constant table of kinds Map understands.
var presets = map[string]preset{
	kindStandardWebhooks: {mapItems: mapStandardWebhooks},
	kindHMAC:             {mapItems: mapGenericBody},
	kindToken:            {mapItems: mapGenericBody},
	kindCRMEvent:         {mapItems: mapCRMEvent},
	kindStripe:           {mapItems: mapStripe},
	kindTypeform:         {mapItems: mapTypeform},
	kindTally:            {mapItems: mapTally},
	kindFacebookLeads:    {mapItems: mapFacebookLeads},
	kindHubSpot:          {mapItems: mapHubSpot, acceptsArray: true},
	kindWebflow:          {mapItems: mapWebflow},
	kindCalendly:         {mapItems: mapCalendly},
	kindRetell:           {mapItems: mapRetell},
	kindVapi:             {mapItems: mapVapi},
	kindTwilio:           {mapItems: mapTwilio},
	kindGoHighLevel:      {mapItems: mapGoHighLevel},
	kindActiveCampaign:   {mapItems: mapActiveCampaign},
	kindInstantly:        {mapItems: mapInstantly},
	kindSmartlead:        {mapItems: mapSmartlead},
}

// secretKeys are top-level body members that authenticate the sender (Smartlead puts its webhook
// secret in the body); they never reach Item.Raw or Item.Fields, which are stored and shown.
var secretKeys = []string{"secret_key"}

// Presets returns the source kinds Map has a preset for, sorted.
func Presets() []string {
	kinds := make([]string, 0, len(presets))
	for k := range presets {
		kinds = append(kinds, k)
	}
	sort.Strings(kinds)
	return kinds
}

// Map parses body (JSON, or application/x-www-form-urlencoded per contentType; Twilio and
// ActiveCampaign bodies without a content type are read as forms) and returns the lead items it
// carries, one per event, with ov applied to each. A body with no lead event (a Meta ping without
// leadgen changes, an empty HubSpot batch) returns no items and no error.
//
// Errors: *MalformedError (answer 400) for invalid JSON, invalid UTF-8, nesting deeper than MaxDepth, a
// body that is neither an object nor (for hubspot) an array, or a form body that does not parse;
// ErrUnknownKind (wrapped) for a kind without a preset; an error for invalid overrides. Never panics.
func Map(kind string, ov Overrides, contentType string, header http.Header, body []byte) ([]Item, error) {
	p, ok := presets[kind]
	if !ok {
		return nil, fmt.Errorf("%w %q", ErrUnknownKind, kind)
	}
	if err := ov.Validate(); err != nil {
		return nil, err
	}
	doc, err := decode(kind, contentType, body)
	if err != nil {
		return nil, err
	}
	switch {
	case doc.IsObject():
	case doc.IsArray() && p.acceptsArray:
	case p.acceptsArray:
		return nil, malformed("body must be a JSON object or array")
	default:
		return nil, malformed("body must be a JSON object")
	}
	if header == nil {
		header = http.Header{}
	}
	items := p.mapItems(payload{doc: doc, header: header})
	var whole json.RawMessage
	for i := range items {
		it := &items[i]
		if it.Raw == nil {
			if whole == nil {
				whole = withoutSecrets(doc)
			}
			it.Raw = whole
		}
		ov.apply(it)
		for _, k := range secretKeys {
			delete(it.Fields, k)
			delete(it.Attribution, k)
		}
	}
	return items, nil
}

// withoutSecrets is doc's JSON text with the top-level secretKeys removed; other members keep their
// order and exact bytes.
func withoutSecrets(doc gjson.Result) json.RawMessage {
	if !doc.IsObject() || !hasSecret(doc) {
		return json.RawMessage(doc.Raw)
	}
	var b strings.Builder
	b.WriteByte('{')
	n := 0
	doc.ForEach(func(k, v gjson.Result) bool {
		if isSecretKey(k.String()) {
			return true
		}
		if n > 0 {
			b.WriteByte(',')
		}
		n++
		b.WriteString(k.Raw)
		b.WriteByte(':')
		b.WriteString(v.Raw)
		return true
	})
	b.WriteByte('}')
	return json.RawMessage(b.String())
}

func hasSecret(doc gjson.Result) bool {
	found := false
	doc.ForEach(func(k, _ gjson.Result) bool {
		found = isSecretKey(k.String())
		return !found
	})
	return found
}

func isSecretKey(k string) bool {
	for _, s := range secretKeys {
		if k == s {
			return true
		}
	}
	return false
}

package signature

import (
	"fmt"
	"net/url"
	"time"
)

// Source kinds, exactly as stored on a source.
const (
	KindStandardWebhooks = "standard-webhooks"
	KindHMAC             = "hmac"
	KindToken            = "token"
	KindStripe           = "stripe"
	KindTypeform         = "typeform"
	KindFacebookLeads    = "facebook-leads"
	KindWebflow          = "webflow"
	KindCalendly         = "calendly"
	KindHubSpot          = "hubspot"
	KindTally            = "tally"
	KindRetell           = "retell"
	KindVapi             = "vapi"
	KindTwilio           = "twilio"
	KindGoHighLevel      = "gohighlevel"
	KindActiveCampaign   = "activecampaign"
	KindInstantly        = "instantly"
	KindSmartlead        = "smartlead"
	KindCRMEvent         = "crm-event"
)

// scheme is one kind's behaviour.
type scheme struct {
	verify   func(cfg Config, req Request, now time.Time) error
	sign     func(sc SignConfig, req *Request, now time.Time) error
	validate func(cfg Config) error
	// mintsSecret: leadgate generates the secret (true) or the provider
	// gives it (false).
	mintsSecret bool
}

// lookup returns the scheme of kind.
func lookup(kind string) (scheme, bool) {
	switch kind {
	case KindStandardWebhooks:
		return scheme{verifyStandardWebhooks, signStandardWebhooks, validateStandardWebhooks, true}, true
	case KindHMAC:
		return scheme{verifyGenericHMAC, signGenericHMAC, validateGenericHMAC(KindHMAC), true}, true
	case KindCRMEvent:
		return scheme{verifyGenericHMAC, signGenericHMAC, validateGenericHMAC(KindCRMEvent), true}, true
	case KindToken:
		return scheme{verifyToken, signToken, validateToken, true}, true
	case KindStripe:
		return scheme{verifyStripe, signStripe, requireSecrets(KindStripe), false}, true
	case KindTypeform:
		return scheme{fixedMAC(typeformSpec).verify, fixedMAC(typeformSpec).sign, requireSecrets(KindTypeform), false}, true
	case KindFacebookLeads:
		return scheme{fixedMAC(facebookSpec).verify, fixedMAC(facebookSpec).sign, requireSecrets(KindFacebookLeads), false}, true
	case KindWebflow:
		return scheme{verifyWebflow, signWebflow, requireSecrets(KindWebflow), false}, true
	case KindCalendly:
		return scheme{verifyCalendly, signCalendly, requireSecrets(KindCalendly), false}, true
	case KindHubSpot:
		return scheme{verifyHubSpot, signHubSpot, requireSecrets(KindHubSpot), false}, true
	case KindTally:
		return scheme{fixedMAC(tallySpec).verify, fixedMAC(tallySpec).sign, requireSecrets(KindTally), false}, true
	case KindRetell:
		return scheme{verifyRetell, signRetell, requireSecrets(KindRetell), false}, true
	case KindVapi:
		return scheme{verifyVapi, signVapi, validateVapi, true}, true
	case KindTwilio:
		return scheme{verifyTwilio, signTwilio, requireSecrets(KindTwilio), false}, true
	case KindGoHighLevel:
		return scheme{verifyGoHighLevel, signGoHighLevel, validateGoHighLevel, false}, true
	case KindActiveCampaign:
		return scheme{verifyActiveCampaign, signActiveCampaign, validateActiveCampaign, true}, true
	case KindInstantly:
		return scheme{verifyInstantly, signInstantly, validateInstantly, true}, true
	case KindSmartlead:
		return scheme{verifySmartlead, signSmartlead, validateSmartlead, true}, true
	}
	return scheme{}, false
}

// Kinds lists every known kind, in a stable order.
func Kinds() []string {
	return []string{
		KindStandardWebhooks, KindHMAC, KindToken, KindStripe, KindTypeform,
		KindFacebookLeads, KindWebflow, KindCalendly, KindHubSpot, KindTally,
		KindRetell, KindVapi, KindTwilio, KindGoHighLevel, KindActiveCampaign,
		KindInstantly, KindSmartlead, KindCRMEvent,
	}
}

// Known reports whether kind is a source kind this package verifies.
func Known(kind string) bool {
	_, ok := lookup(kind)
	return ok
}

// GeneratesSecret reports whether leadgate mints the secret for kind (and
// shows it once) rather than the operator pasting one the provider gave.
// Unknown kinds report false.
func GeneratesSecret(kind string) bool {
	s, ok := lookup(kind)
	return ok && s.mintsSecret
}

// Verify authenticates one delivery of a source of the given kind at time now.
// It returns nil when the delivery is authentic, an *Error with a short reason
// when it is not (including a source whose Config cannot verify anything), and
// an error wrapping ErrUnknownKind for an unknown kind.
func Verify(kind string, cfg Config, req Request, now time.Time) error {
	s, ok := lookup(kind)
	if !ok {
		return fmt.Errorf("%w %q", ErrUnknownKind, kind)
	}
	return s.verify(cfg, req, now)
}

// ValidateConfig reports configuration errors at source creation or edit:
// a missing secret or public key, an unknown encoding, mode or algorithm, a
// negative tolerance.
func ValidateConfig(kind string, cfg Config) error {
	s, ok := lookup(kind)
	if !ok {
		return fmt.Errorf("%w %q", ErrUnknownKind, kind)
	}
	if cfg.Tolerance < 0 {
		return configError(kind, "tolerance must not be negative")
	}
	return s.validate(cfg)
}

// Sign makes req an authentic delivery for kind at time now: it sets the
// signature (and timestamp/id) headers, and for token kinds the secret header,
// body field or query parameter. Twilio and HubSpot sign req.URL, which must be
// the full public URL; Twilio JSON bodies get bodySHA256 appended to req.URL.
func Sign(kind string, sc SignConfig, req *Request, now time.Time) error {
	s, ok := lookup(kind)
	if !ok {
		return fmt.Errorf("%w %q", ErrUnknownKind, kind)
	}
	if req == nil {
		return fmt.Errorf("signature: sign %s: nil request", kind)
	}
	if err := s.sign(sc, req, now); err != nil {
		return fmt.Errorf("signature: sign %s: %w", kind, err)
	}
	return nil
}

// Handshake answers a sender's subscription handshake on GET. For
// facebook-leads with hub.mode present it checks hub.verify_token against
// cfg.VerifyToken and returns the hub.challenge to echo (as text/plain) with
// handled=true; a bad token is an *Error. Every other request and kind returns
// handled=false.
func Handshake(kind string, cfg Config, query url.Values) (body string, handled bool, err error) {
	if kind != KindFacebookLeads {
		return "", false, nil
	}
	return facebookHandshake(cfg, query)
}

// requireSecrets is the validation for kinds that only need a secret.
func requireSecrets(kind string) func(Config) error {
	return func(cfg Config) error { return checkSecrets(kind, cfg) }
}

// checkSecrets requires at least one secret and no empty ones.
func checkSecrets(kind string, cfg Config) error {
	if len(cfg.Secrets) == 0 {
		return configError(kind, "a secret is required")
	}
	for i, s := range cfg.Secrets {
		if s == "" {
			return configError(kind, "secret %d is empty", i+1)
		}
	}
	return nil
}

// noSecret is the rejection when a source has no usable secret.
func noSecret() error { return reject("source has no secret configured") }

package signature

import (
	"crypto"
	"errors"
	"net/http"
	"time"
)

// DefaultTolerance is the replay window used when Config.Tolerance is zero, for
// every kind that carries a timestamp (Standard Webhooks, Stripe, Calendly,
// Webflow, HubSpot v3, Retell, GoHighLevel's body timestamp, and hmac/vapi with
// a timestamp header). Timestamps are rejected when too old or too far in the
// future.
const DefaultTolerance = 5 * time.Minute

// Limits that keep a hostile header from costing more than a few MACs.
const (
	maxHeaderLen  = 4096 // bytes of one signature/timestamp/secret header
	maxSignatures = 16   // signatures considered in one header
)

// Request is what a verifier sees of one delivery.
type Request struct {
	Method string
	// URL is the full public URL the sender called, scheme://host/path?query
	// (hubspot v3 and twilio sign it; token/activecampaign "query" mode reads it).
	URL    string
	Header http.Header
	// Body is the raw body exactly as received; never re-encoded JSON.
	Body []byte
}

// Config is a source's verification settings. Secrets are plaintext here (the
// caller decrypts them). Fields a kind does not use are ignored.
type Config struct {
	// Secrets holds the current secret first, then previous ones still accepted
	// during rotation.
	Secrets []string
	// Header overrides the header name where a kind allows it (hmac, crm-event,
	// vapi, token/activecampaign "header" mode, instantly).
	Header string
	// Encoding is "hex" or "base64" (hmac, crm-event, vapi hmac); default hex.
	Encoding string
	// Prefix is a literal before the digest, e.g. "sha256=" (hmac, crm-event, vapi hmac).
	Prefix string
	// Algorithm is "sha256" (default) or "sha1" (vapi hmac only).
	Algorithm string
	// TimestampHeader, when set for hmac/crm-event/vapi hmac, names a header
	// holding a unix timestamp (seconds, or milliseconds when 13+ digits); the
	// signed bytes become "{timestamp}.{body}" and the replay window applies.
	TimestampHeader string
	// Tolerance is the replay window; 0 means DefaultTolerance.
	Tolerance time.Duration
	// Mode selects a variant: vapi "bearer" (default) | "secret-header" | "hmac";
	// token "" (URL token only) | "header" | "body" | "query";
	// activecampaign "" | "header" | "query".
	Mode string
	// BodyField is the JSON body field (gjson path) holding the secret
	// (token "body" mode, default "secret"; smartlead, default "secret_key").
	BodyField string
	// QueryParam is the URL query parameter holding the secret in "query" mode
	// (default "secret").
	QueryParam string
	// VerifyToken answers the facebook-leads GET hub.challenge handshake.
	VerifyToken string
	// PublicKeys are gohighlevel's published keys: PEM (RSA or Ed25519 PKIX, or
	// PKCS#1 RSA) or base64 raw 32-byte Ed25519 keys.
	PublicKeys []string
}

// SignConfig is what Sign needs: the source's Config (header names, encoding,
// mode...), the secret to sign with (Secret, else Config.Secrets[0]), the
// private key for gohighlevel (ed25519.PrivateKey or *rsa.PrivateKey), and an
// optional delivery id (standard-webhooks webhook-id; generated when empty).
type SignConfig struct {
	Config
	Secret     string
	PrivateKey crypto.Signer
	DeliveryID string
}

// tolerance returns the replay window to enforce.
func (c Config) tolerance() time.Duration {
	if c.Tolerance > 0 {
		return c.Tolerance
	}
	return DefaultTolerance
}

// keys returns the non-empty secrets as HMAC keys, current first.
func (c Config) keys() [][]byte {
	keys := make([][]byte, 0, len(c.Secrets))
	for _, s := range c.Secrets {
		if s != "" {
			keys = append(keys, []byte(s))
		}
	}
	return keys
}

// signingSecret picks the secret Sign uses.
func (sc SignConfig) signingSecret() (string, error) {
	if sc.Secret != "" {
		return sc.Secret, nil
	}
	for _, s := range sc.Secrets {
		if s != "" {
			return s, nil
		}
	}
	return "", errors.New("signature: sign: no secret")
}

// orDefault returns v, or def when v is empty.
func orDefault(v, def string) string {
	if v == "" {
		return def
	}
	return v
}

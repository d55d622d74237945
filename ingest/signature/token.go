package signature

import (
	"encoding/json"
	"errors"
	"net/url"
	"strings"
	"time"

	"github.com/tidwall/gjson"
)

// Unsigned senders (the generic token kind, ActiveCampaign, Instantly,
// Smartlead) are authenticated by the unguessable URL token the router has
// already matched. A source may additionally require a shared secret in a
// header, a JSON body field or a query parameter; that is compared in constant
// time. These checks do not cover the body: the guarantee is weaker than a
// signature's, and the UI should say so.
const (
	tokenModeURL    = ""
	tokenModeHeader = "header"
	tokenModeBody   = "body"
	tokenModeQuery  = "query"

	// DefaultSecretHeader carries the shared secret for instantly and the
	// token/activecampaign "header" mode when Config.Header is empty.
	DefaultSecretHeader = "X-Leadgate-Secret"
	defaultBodyField    = "secret"
	defaultQueryParam   = "secret"
	smartleadBodyField  = "secret_key"
)

// secretCheck is one way a shared secret travels.
type secretCheck struct {
	mode string
	name string // header name, body field (gjson path) or query parameter
}

// tokenCheck resolves the token/activecampaign check from a Config.
func tokenCheck(cfg Config) secretCheck {
	switch cfg.Mode {
	case tokenModeHeader:
		return secretCheck{tokenModeHeader, orDefault(cfg.Header, DefaultSecretHeader)}
	case tokenModeBody:
		return secretCheck{tokenModeBody, orDefault(cfg.BodyField, defaultBodyField)}
	case tokenModeQuery:
		return secretCheck{tokenModeQuery, orDefault(cfg.QueryParam, defaultQueryParam)}
	}
	return secretCheck{mode: cfg.Mode}
}

// verify checks the shared secret.
func (c secretCheck) verify(cfg Config, req Request) error {
	if c.mode == tokenModeURL {
		return nil
	}
	if len(cfg.keys()) == 0 {
		return noSecret()
	}
	var got string
	switch c.mode {
	case tokenModeHeader:
		v, err := requireHeader(req.Header, c.name)
		if err != nil {
			return err
		}
		got = v
	case tokenModeBody:
		if !gjson.ValidBytes(req.Body) {
			return reject("body is not valid JSON")
		}
		r := gjson.GetBytes(req.Body, c.name)
		if !r.Exists() || r.Type != gjson.String || r.Str == "" {
			return reject("missing body field %s", c.name)
		}
		got = r.Str
	case tokenModeQuery:
		u, err := url.Parse(req.URL)
		if err != nil {
			return reject("malformed request URL")
		}
		got = u.Query().Get(c.name)
		if got == "" {
			return reject("missing query parameter %s", c.name)
		}
	default:
		return reject("source misconfigured: unknown mode")
	}
	if len(got) > maxHeaderLen {
		return reject("secret too long")
	}
	if !anySecretEqual(got, cfg.Secrets) {
		return reject("secret mismatch")
	}
	return nil
}

// sign puts the secret where verify looks for it.
func (c secretCheck) sign(sc SignConfig, req *Request) error {
	if c.mode == tokenModeURL {
		return nil
	}
	secret, err := sc.signingSecret()
	if err != nil {
		return err
	}
	switch c.mode {
	case tokenModeHeader:
		setHeader(req, c.name, secret)
	case tokenModeBody:
		body, err := withBodyField(req.Body, c.name, secret)
		if err != nil {
			return err
		}
		req.Body = body
	case tokenModeQuery:
		u, err := url.Parse(req.URL)
		if err != nil {
			return err
		}
		q := u.Query()
		q.Set(c.name, secret)
		u.RawQuery = q.Encode()
		req.URL = u.String()
	default:
		return errors.New("unknown mode " + c.mode)
	}
	return nil
}

// withBodyField sets a top-level string field of a JSON object body (an empty
// body counts as {}). Key order is not preserved; this is for test senders.
func withBodyField(body []byte, field, value string) ([]byte, error) {
	if strings.ContainsAny(field, ".*?|#@\\") {
		return nil, errors.New("can only sign a top-level body field")
	}
	obj := map[string]json.RawMessage{}
	if len(strings.TrimSpace(string(body))) > 0 {
		if err := json.Unmarshal(body, &obj); err != nil {
			return nil, errors.New("body is not a JSON object")
		}
	}
	v, err := json.Marshal(value)
	if err != nil {
		return nil, err
	}
	obj[field] = v
	return json.Marshal(obj)
}

// validateCheck validates a Config for a secret check.
func validateCheck(kind string, cfg Config, c secretCheck, allowed ...string) error {
	ok := false
	for _, m := range allowed {
		ok = ok || c.mode == m
	}
	if !ok {
		return configError(kind, "mode %q is not one of %q", c.mode, allowed)
	}
	if c.mode == tokenModeURL {
		return nil
	}
	if err := checkSecrets(kind, cfg); err != nil {
		return err
	}
	if c.mode == tokenModeHeader {
		return checkHeaderName(kind, c.name)
	}
	return nil
}

// token: URL token only, or also a header, body field or query secret.
func verifyToken(cfg Config, req Request, _ time.Time) error { return tokenCheck(cfg).verify(cfg, req) }
func signToken(sc SignConfig, req *Request, _ time.Time) error {
	return tokenCheck(sc.Config).sign(sc, req)
}
func validateToken(cfg Config) error {
	return validateCheck(KindToken, cfg, tokenCheck(cfg), tokenModeURL, tokenModeHeader, tokenModeBody, tokenModeQuery)
}

// activecampaign: form-encoded and unsigned; its payload cannot carry a
// secret, so only the URL token, a static header or a query secret apply.
func verifyActiveCampaign(cfg Config, req Request, _ time.Time) error {
	return tokenCheck(cfg).verify(cfg, req)
}
func signActiveCampaign(sc SignConfig, req *Request, _ time.Time) error {
	return tokenCheck(sc.Config).sign(sc, req)
}
func validateActiveCampaign(cfg Config) error {
	return validateCheck(KindActiveCampaign, cfg, tokenCheck(cfg), tokenModeURL, tokenModeHeader, tokenModeQuery)
}

// instantly: a shared secret in a custom header (default X-Leadgate-Secret),
// configured among the webhook's custom headers in Instantly.
func instantlyCheck(cfg Config) secretCheck {
	return secretCheck{tokenModeHeader, orDefault(cfg.Header, DefaultSecretHeader)}
}
func verifyInstantly(cfg Config, req Request, _ time.Time) error {
	return instantlyCheck(cfg).verify(cfg, req)
}
func signInstantly(sc SignConfig, req *Request, _ time.Time) error {
	return instantlyCheck(sc.Config).sign(sc, req)
}
func validateInstantly(cfg Config) error {
	return validateCheck(KindInstantly, cfg, instantlyCheck(cfg), tokenModeHeader)
}

// smartlead: the webhook's secret_key field in the JSON body.
func smartleadCheck(cfg Config) secretCheck {
	return secretCheck{tokenModeBody, orDefault(cfg.BodyField, smartleadBodyField)}
}
func verifySmartlead(cfg Config, req Request, _ time.Time) error {
	return smartleadCheck(cfg).verify(cfg, req)
}
func signSmartlead(sc SignConfig, req *Request, _ time.Time) error {
	return smartleadCheck(sc.Config).sign(sc, req)
}
func validateSmartlead(cfg Config) error {
	return validateCheck(KindSmartlead, cfg, smartleadCheck(cfg), tokenModeBody)
}

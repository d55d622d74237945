package signature

import (
	"strings"
	"time"
)

// Vapi authenticates server-URL calls with a configurable credential.
const (
	vapiModeBearer       = "bearer"        // Authorization: Bearer <secret> (header configurable)
	vapiModeSecretHeader = "secret-header" // legacy X-Vapi-Secret: <secret>
	vapiModeHMAC         = "hmac"          // HMAC of the body in a configurable header

	headerAuthorization = "Authorization"
	headerVapiSecret    = "X-Vapi-Secret"
	// Vapi's HMAC credential defaults (HMACAuthenticationPlan in Vapi's API
	// reference): signatureHeader x-signature, timestampHeader x-timestamp,
	// includeTimestamp true with payloadFormat "{timestamp}.{body}", hex.
	headerVapiSignature = "x-signature"
	headerVapiTimestamp = "x-timestamp"
	// headerVapiLegacySignature was leadgate's earlier default signature
	// header; sources configured without a header still verify with it.
	headerVapiLegacySignature = "x-vapi-signature"
	bearerScheme              = "Bearer "
)

// vapiSpec is the HMAC mode's spec: header (default x-signature), sha256 |
// sha512 | sha1, hex (default) | base64, optional prefix; the timestamp header
// defaults to Vapi's x-timestamp, signed as "{timestamp}.{body}".
func vapiSpec(cfg Config) macSpec {
	return macSpec{
		header:    orDefault(cfg.Header, headerVapiSignature),
		encoding:  orDefault(cfg.Encoding, encodingHex),
		prefix:    cfg.Prefix,
		algorithm: orDefault(cfg.Algorithm, algorithmSHA256),
		tsHeader:  orDefault(cfg.TimestampHeader, headerVapiTimestamp),
	}
}

// verifyVapiHMAC verifies Vapi's HMAC credential. With no header configured
// the signature is read from x-signature (Vapi's default), else from the
// legacy x-vapi-signature. With no timestamp header configured, a delivery
// carrying x-timestamp is checked as "{timestamp}.{body}" within the window,
// and one without it (a credential with includeTimestamp off) as the body
// alone; a captured timestamped delivery cannot pass as body-only, since its
// signature covers the timestamp.
func verifyVapiHMAC(cfg Config, req Request, now time.Time) error {
	spec := vapiSpec(cfg)
	if cfg.Header == "" && req.Header.Get(headerVapiSignature) == "" && req.Header.Get(headerVapiLegacySignature) != "" {
		spec.header = headerVapiLegacySignature
	}
	if cfg.TimestampHeader == "" && req.Header.Get(headerVapiTimestamp) == "" {
		spec.tsHeader = ""
	}
	return spec.verify(cfg, req, now)
}

func validateVapi(cfg Config) error {
	if err := checkSecrets(KindVapi, cfg); err != nil {
		return err
	}
	switch cfg.Mode {
	case "", vapiModeBearer, vapiModeSecretHeader:
	case vapiModeHMAC:
		if err := checkEncoding(KindVapi, cfg.Encoding); err != nil {
			return err
		}
		if _, err := hashFunc(cfg.Algorithm); err != nil {
			return configError(KindVapi, "algorithm must be sha256, sha512 or sha1, not %q", cfg.Algorithm)
		}
		if err := checkHeaderName(KindVapi, cfg.TimestampHeader); err != nil {
			return err
		}
	default:
		return configError(KindVapi, "mode must be bearer, secret-header or hmac, not %q", cfg.Mode)
	}
	return checkHeaderName(KindVapi, cfg.Header)
}

func verifyVapi(cfg Config, req Request, now time.Time) error {
	switch cfg.Mode {
	case vapiModeHMAC:
		return verifyVapiHMAC(cfg, req, now)
	case vapiModeSecretHeader:
		return verifySecretHeader(orDefault(cfg.Header, headerVapiSecret), false, cfg, req)
	case "", vapiModeBearer:
		name := orDefault(cfg.Header, headerAuthorization)
		return verifySecretHeader(name, strings.EqualFold(name, headerAuthorization), cfg, req)
	}
	return reject("source misconfigured: unknown vapi mode")
}

func signVapi(sc SignConfig, req *Request, now time.Time) error {
	switch sc.Mode {
	case vapiModeHMAC:
		return vapiSpec(sc.Config).sign(sc, req, now)
	case vapiModeSecretHeader:
		return signSecretHeader(orDefault(sc.Header, headerVapiSecret), "", sc, req)
	default:
		return signSecretHeader(orDefault(sc.Header, headerAuthorization), bearerScheme, sc, req)
	}
}

// verifySecretHeader checks that header name carries one of the secrets.
// With requireBearer the value must be "Bearer <secret>"; otherwise a
// "Bearer " scheme is tolerated but not required (Vapi's custom header names).
func verifySecretHeader(name string, requireBearer bool, cfg Config, req Request) error {
	if len(cfg.keys()) == 0 {
		return noSecret()
	}
	v, err := requireHeader(req.Header, name)
	if err != nil {
		return err
	}
	hasBearer := len(v) >= len(bearerScheme) && strings.EqualFold(v[:len(bearerScheme)], bearerScheme)
	if hasBearer {
		v = strings.TrimSpace(v[len(bearerScheme):])
	} else if requireBearer {
		return reject("header %s is not a Bearer credential", name)
	}
	if !anySecretEqual(v, cfg.Secrets) {
		return reject("secret mismatch")
	}
	return nil
}

// signSecretHeader sets header name to scheme+secret.
func signSecretHeader(name, scheme string, sc SignConfig, req *Request) error {
	secret, err := sc.signingSecret()
	if err != nil {
		return err
	}
	setHeader(req, name, scheme+secret)
	return nil
}

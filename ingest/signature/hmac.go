package signature

import (
	"strconv"
	"strings"
	"time"
)

// macSpec describes a "one header holds an HMAC of the body" scheme: the
// generic hmac/crm-event kinds, vapi's hmac mode, Typeform, Meta and Tally.
type macSpec struct {
	header    string
	encoding  string // hex | base64
	prefix    string // literal before the digest, e.g. "sha256="
	algorithm string // sha256 | sha1
	// tsHeader, when set, is a unix timestamp header; the signed bytes become
	// "{timestamp}.{body}" and the replay window applies.
	tsHeader string
}

// Fixed provider schemes.
var (
	// Typeform: Typeform-Signature: sha256=<base64 HMAC-SHA256(secret, body)>.
	typeformSpec = macSpec{header: "Typeform-Signature", encoding: encodingBase64, prefix: "sha256="}
	// Tally: Tally-Signature: <base64 HMAC-SHA256(secret, body)>.
	tallySpec = macSpec{header: "Tally-Signature", encoding: encodingBase64}
)

// DefaultHMACHeader is the signature header of the hmac and crm-event kinds
// when Config.Header is empty.
const DefaultHMACHeader = "X-Leadgate-Signature"

// fixedMAC adapts a provider's fixed spec to the scheme signatures.
type fixedMAC macSpec

func (f fixedMAC) verify(cfg Config, req Request, now time.Time) error {
	return macSpec(f).verify(cfg, req, now)
}

func (f fixedMAC) sign(sc SignConfig, req *Request, now time.Time) error {
	return macSpec(f).sign(sc, req, now)
}

// genericSpec is the hmac/crm-event spec from a source's Config.
func genericSpec(cfg Config) macSpec {
	return macSpec{
		header:    orDefault(cfg.Header, DefaultHMACHeader),
		encoding:  orDefault(cfg.Encoding, encodingHex),
		prefix:    cfg.Prefix,
		algorithm: algorithmSHA256,
		tsHeader:  cfg.TimestampHeader,
	}
}

func verifyGenericHMAC(cfg Config, req Request, now time.Time) error {
	return genericSpec(cfg).verify(cfg, req, now)
}

func signGenericHMAC(sc SignConfig, req *Request, now time.Time) error {
	return genericSpec(sc.Config).sign(sc, req, now)
}

// validateGenericHMAC checks an hmac/crm-event Config.
func validateGenericHMAC(kind string) func(Config) error {
	return func(cfg Config) error {
		if err := checkSecrets(kind, cfg); err != nil {
			return err
		}
		if err := checkEncoding(kind, cfg.Encoding); err != nil {
			return err
		}
		if cfg.Algorithm != "" && cfg.Algorithm != algorithmSHA256 {
			return configError(kind, "algorithm must be sha256")
		}
		if err := checkHeaderName(kind, cfg.TimestampHeader); err != nil {
			return err
		}
		return checkHeaderName(kind, cfg.Header)
	}
}

// checkEncoding accepts "", "hex" and "base64".
func checkEncoding(kind, encoding string) error {
	switch encoding {
	case "", encodingHex, encodingBase64:
		return nil
	}
	return configError(kind, "encoding must be hex or base64, not %q", encoding)
}

// checkHeaderName rejects header names net/http could never deliver.
func checkHeaderName(kind, name string) error {
	for i := 0; i < len(name); i++ {
		c := name[i]
		if c <= ' ' || c >= 0x7f || strings.IndexByte("()<>@,;:\\\"/[]?={}", c) >= 0 {
			return configError(kind, "invalid header name %q", name)
		}
	}
	return nil
}

// verify checks the spec's header against every secret.
func (s macSpec) verify(cfg Config, req Request, now time.Time) error {
	newHash, err := hashFunc(s.algorithm)
	if err != nil {
		return reject("source misconfigured: %v", err)
	}
	keys := cfg.keys()
	if len(keys) == 0 {
		return noSecret()
	}
	raw, err := requireHeader(req.Header, s.header)
	if err != nil {
		return err
	}
	if s.prefix != "" {
		if len(raw) < len(s.prefix) || !strings.EqualFold(raw[:len(s.prefix)], s.prefix) {
			return reject("header %s lacks the %s prefix", s.header, s.prefix)
		}
		raw = raw[len(s.prefix):]
	}
	got, err := decodeDigest(s.encoding, strings.TrimSpace(raw))
	if err != nil {
		return reject("malformed signature in header %s", s.header)
	}
	parts := [][]byte{req.Body}
	if s.tsHeader != "" {
		ts, err := requireHeader(req.Header, s.tsHeader)
		if err != nil {
			return err
		}
		if err := checkTimestamp(ts, unitAuto, now, cfg.tolerance()); err != nil {
			return err
		}
		parts = [][]byte{[]byte(ts), []byte("."), req.Body}
	}
	if !anyKeyMatches(newHash, keys, [][]byte{got}, parts...) {
		return errMismatch()
	}
	return nil
}

// sign sets the spec's header (and timestamp header, in seconds).
func (s macSpec) sign(sc SignConfig, req *Request, now time.Time) error {
	secret, err := sc.signingSecret()
	if err != nil {
		return err
	}
	newHash, err := hashFunc(s.algorithm)
	if err != nil {
		return err
	}
	parts := [][]byte{req.Body}
	if s.tsHeader != "" {
		ts := strconv.FormatInt(now.Unix(), 10)
		setHeader(req, s.tsHeader, ts)
		parts = [][]byte{[]byte(ts), []byte("."), req.Body}
	}
	sum := macOf(newHash, []byte(secret), parts...)
	setHeader(req, s.header, s.prefix+encodeDigest(s.encoding, sum))
	return nil
}

package signature

import (
	"crypto"
	"crypto/ed25519"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/pem"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/tidwall/gjson"
)

// GoHighLevel signs the raw body with its own private keys; the operator
// configures HighLevel's published public keys. X-GHL-Signature is a base64
// Ed25519 signature; the legacy x-wh-signature (deprecated 2026-07-01) is a
// base64 RSA-SHA256 PKCS#1 v1.5 signature. Either header verifying with a
// matching key is enough; with neither present the delivery is rejected.
// When the body carries a "timestamp" it must be within the replay window.
const (
	headerGHLSignature    = "X-GHL-Signature"
	headerGHLRSASignature = "X-WH-Signature"
	minRSABits            = 2048
)

// ghlKeys are the parsed public keys of a source.
type ghlKeys struct {
	ed  []ed25519.PublicKey
	rsa []*rsa.PublicKey
}

// parsePublicKeys parses PEM (PKIX "PUBLIC KEY" holding RSA or Ed25519, or
// PKCS#1 "RSA PUBLIC KEY"), base64 DER PKIX, or base64 raw 32-byte Ed25519
// keys.
func parsePublicKeys(keys []string) (ghlKeys, error) {
	var out ghlKeys
	for i, k := range keys {
		pub, err := parsePublicKey(strings.TrimSpace(k))
		if err != nil {
			return ghlKeys{}, fmt.Errorf("public key %d: %w", i+1, err)
		}
		switch p := pub.(type) {
		case ed25519.PublicKey:
			out.ed = append(out.ed, p)
		case *rsa.PublicKey:
			out.rsa = append(out.rsa, p)
		}
	}
	return out, nil
}

// parsePublicKey parses one key in any accepted form.
func parsePublicKey(k string) (crypto.PublicKey, error) {
	if k == "" {
		return nil, errors.New("empty key")
	}
	if strings.HasPrefix(k, "-----BEGIN") {
		block, _ := pem.Decode([]byte(k))
		if block == nil {
			return nil, errors.New("malformed PEM")
		}
		switch block.Type {
		case "PUBLIC KEY":
			return checkPublicKey(x509.ParsePKIXPublicKey(block.Bytes))
		case "RSA PUBLIC KEY":
			return checkPublicKey(x509.ParsePKCS1PublicKey(block.Bytes))
		}
		return nil, fmt.Errorf("unsupported PEM block %q", block.Type)
	}
	raw, err := decodeBase64(k)
	if err != nil {
		return nil, errors.New("neither PEM nor base64")
	}
	if len(raw) == ed25519.PublicKeySize {
		return ed25519.PublicKey(raw), nil
	}
	return checkPublicKey(x509.ParsePKIXPublicKey(raw))
}

// checkPublicKey accepts Ed25519 and RSA keys of at least minRSABits.
func checkPublicKey(pub any, err error) (crypto.PublicKey, error) {
	if err != nil {
		return nil, fmt.Errorf("parse key: %w", err)
	}
	switch p := pub.(type) {
	case ed25519.PublicKey:
		return p, nil
	case *rsa.PublicKey:
		if p.N.BitLen() < minRSABits {
			return nil, fmt.Errorf("RSA key has %d bits, want at least %d", p.N.BitLen(), minRSABits)
		}
		return p, nil
	}
	return nil, fmt.Errorf("unsupported key type %T", pub)
}

func validateGoHighLevel(cfg Config) error {
	if len(cfg.PublicKeys) == 0 {
		return configError(KindGoHighLevel, "a public key is required")
	}
	if _, err := parsePublicKeys(cfg.PublicKeys); err != nil {
		return configError(KindGoHighLevel, "%v", err)
	}
	return nil
}

func verifyGoHighLevel(cfg Config, req Request, now time.Time) error {
	keys, err := parsePublicKeys(cfg.PublicKeys)
	if err != nil || len(keys.ed)+len(keys.rsa) == 0 {
		return reject("source has no usable public key configured")
	}
	edSig, edErr := requireHeader(req.Header, headerGHLSignature)
	rsaSig, rsaErr := requireHeader(req.Header, headerGHLRSASignature)
	if edErr != nil && rsaErr != nil {
		if !isMissing(edErr) {
			return edErr
		}
		if !isMissing(rsaErr) {
			return rsaErr
		}
		return reject("missing header %s", headerGHLSignature)
	}
	if (edErr != nil || len(keys.ed) == 0) && (rsaErr != nil || len(keys.rsa) == 0) {
		return reject("no configured public key matches the signature header")
	}
	verified := false
	if edErr == nil && len(keys.ed) > 0 {
		if sig, err := decodeBase64(edSig); err == nil && len(sig) == ed25519.SignatureSize {
			for _, k := range keys.ed {
				verified = verified || ed25519.Verify(k, req.Body, sig)
			}
		}
	}
	if !verified && rsaErr == nil && len(keys.rsa) > 0 {
		if sig, err := decodeBase64(rsaSig); err == nil {
			digest := sha256.Sum256(req.Body)
			for _, k := range keys.rsa {
				verified = verified || rsa.VerifyPKCS1v15(k, crypto.SHA256, digest[:], sig) == nil
			}
		}
	}
	if !verified {
		return errMismatch()
	}
	return checkBodyTimestamp(req.Body, now, cfg.tolerance())
}

// isMissing reports whether err is a missing-header rejection.
func isMissing(err error) bool {
	var e *Error
	return errors.As(err, &e) && strings.HasPrefix(e.Reason, "missing header")
}

// checkBodyTimestamp enforces the window on a JSON body "timestamp" (ISO-8601,
// or a unix number in seconds or milliseconds) when there is one.
func checkBodyTimestamp(body []byte, now time.Time, tol time.Duration) error {
	r := gjson.GetBytes(body, "timestamp")
	if !r.Exists() || r.Type == gjson.Null {
		return nil
	}
	var ts time.Time
	switch r.Type {
	case gjson.String:
		t, err := time.Parse(time.RFC3339Nano, r.Str)
		if err != nil {
			return reject("invalid body timestamp")
		}
		ts = t
	case gjson.Number:
		t, err := parseUnixTimestamp(r.Raw, unitAuto)
		if err != nil {
			return reject("invalid body timestamp")
		}
		ts = t
	default:
		return reject("invalid body timestamp")
	}
	if err := checkWindow(ts, now, tol); err != nil {
		return reject("body timestamp outside the %s tolerance", tol)
	}
	return nil
}

// signGoHighLevel signs the body with sc.PrivateKey: an ed25519.PrivateKey
// sets X-GHL-Signature, an *rsa.PrivateKey sets the legacy x-wh-signature.
func signGoHighLevel(sc SignConfig, req *Request, _ time.Time) error {
	if sc.PrivateKey == nil {
		return errors.New("a private key is required")
	}
	switch sc.PrivateKey.Public().(type) {
	case ed25519.PublicKey:
		sig, err := sc.PrivateKey.Sign(rand.Reader, req.Body, crypto.Hash(0))
		if err != nil {
			return fmt.Errorf("ed25519: %w", err)
		}
		setHeader(req, headerGHLSignature, base64.StdEncoding.EncodeToString(sig))
	case *rsa.PublicKey:
		digest := sha256.Sum256(req.Body)
		sig, err := sc.PrivateKey.Sign(rand.Reader, digest[:], crypto.SHA256)
		if err != nil {
			return fmt.Errorf("rsa: %w", err)
		}
		setHeader(req, headerGHLRSASignature, base64.StdEncoding.EncodeToString(sig))
	default:
		return fmt.Errorf("unsupported private key %T", sc.PrivateKey)
	}
	return nil
}

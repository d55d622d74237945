package signature

import (
	"crypto/sha256"
	"encoding/hex"
	"strconv"
	"strings"
	"time"
)

// Stripe and Calendly share the "t=<unix s>,v1=<hex>[,v1=<hex>...]" header:
// HMAC-SHA256(secret used as-is, "{t}.{body}"), hex. Only v1 entries count
// (downgrade protection); unknown keys are ignored.
const (
	headerStripeSignature   = "Stripe-Signature"
	headerCalendlySignature = "Calendly-Webhook-Signature"
)

// tv1Header is a parsed t=,v1= header.
type tv1Header struct {
	timestamp  string   // the t= digits, exactly as signed
	signatures [][]byte // decoded v1 digests
}

// parseTV1 parses a t=,v1= header. Every element must be key=value; a v1 that
// is not hex is skipped; at most maxSignatures are kept.
func parseTV1(header string) (tv1Header, error) {
	var h tv1Header
	for _, pair := range strings.Split(header, ",") {
		k, v, ok := strings.Cut(strings.TrimSpace(pair), "=")
		if !ok {
			return tv1Header{}, reject("malformed signature header")
		}
		switch k {
		case "t":
			if _, err := parseUnixTimestamp(v, unitSeconds); err != nil {
				return tv1Header{}, err
			}
			h.timestamp = v
		case "v1":
			if len(h.signatures) == maxSignatures {
				continue
			}
			if sig, err := hex.DecodeString(v); err == nil && len(sig) == sha256.Size {
				h.signatures = append(h.signatures, sig)
			}
		}
	}
	if h.timestamp == "" {
		return tv1Header{}, reject("signature header has no t= timestamp")
	}
	if len(h.signatures) == 0 {
		return tv1Header{}, reject("signature header has no v1 signature")
	}
	return h, nil
}

// verifyTV1 verifies a t=,v1= scheme carried in header name.
func verifyTV1(name string, cfg Config, req Request, now time.Time) error {
	keys := cfg.keys()
	if len(keys) == 0 {
		return noSecret()
	}
	raw, err := requireHeader(req.Header, name)
	if err != nil {
		return err
	}
	h, err := parseTV1(raw)
	if err != nil {
		return err
	}
	if err := checkTimestamp(h.timestamp, unitSeconds, now, cfg.tolerance()); err != nil {
		return err
	}
	if !anyKeyMatches(sha256.New, keys, h.signatures, []byte(h.timestamp), []byte("."), req.Body) {
		return errMismatch()
	}
	return nil
}

// signTV1 sets header name to "t=<now>,v1=<hex>".
func signTV1(name string, sc SignConfig, req *Request, now time.Time) error {
	secret, err := sc.signingSecret()
	if err != nil {
		return err
	}
	ts := strconv.FormatInt(now.Unix(), 10)
	sum := macOf(sha256.New, []byte(secret), []byte(ts), []byte("."), req.Body)
	setHeader(req, name, "t="+ts+",v1="+hex.EncodeToString(sum))
	return nil
}

// Stripe: the whsec_ endpoint secret is the raw HMAC key (unlike Standard
// Webhooks, it is not base64-decoded).
func verifyStripe(cfg Config, req Request, now time.Time) error {
	return verifyTV1(headerStripeSignature, cfg, req, now)
}

func signStripe(sc SignConfig, req *Request, now time.Time) error {
	return signTV1(headerStripeSignature, sc, req, now)
}

// Calendly: the webhook signing key is the raw HMAC key. Its sample code uses
// a 3-minute window (unconfirmed); Config.Tolerance can tighten the 5-minute
// default.
func verifyCalendly(cfg Config, req Request, now time.Time) error {
	return verifyTV1(headerCalendlySignature, cfg, req, now)
}

func signCalendly(sc SignConfig, req *Request, now time.Time) error {
	return signTV1(headerCalendlySignature, sc, req, now)
}

package signature

import (
	"crypto/sha256"
	"encoding/base64"
	"strconv"
	"strings"
	"time"
)

// HubSpot v3 signs method + URI + body + timestamp with HMAC-SHA256 keyed by
// the app's client secret, base64; the timestamp is unix milliseconds.
const (
	headerHubSpotSignature = "X-HubSpot-Signature-v3"
	headerHubSpotTimestamp = "X-HubSpot-Request-Timestamp"
)

// hubspotDecodedEscapes are the percent-escapes HubSpot decodes in the URI
// before signing (%3A : %2F / %3F ? %40 @ %21 ! %24 $ %27 ' %28 ( %29 )
// %2A * %2C , %3B ;). Every other escape stays as sent.
const hubspotDecodedEscapes = ":/?@!$'()*,;"

// hubspotURI applies HubSpot's partial percent-decoding to the full URL in a
// single pass (so "%253A" is not decoded twice).
func hubspotURI(raw string) string {
	if !strings.Contains(raw, "%") {
		return raw
	}
	var b strings.Builder
	b.Grow(len(raw))
	for i := 0; i < len(raw); i++ {
		if raw[i] == '%' && i+2 < len(raw) {
			if c, ok := unhex2(raw[i+1], raw[i+2]); ok && strings.IndexByte(hubspotDecodedEscapes, c) >= 0 {
				b.WriteByte(c)
				i += 2
				continue
			}
		}
		b.WriteByte(raw[i])
	}
	return b.String()
}

// unhex2 decodes two hex digits (either case).
func unhex2(hi, lo byte) (byte, bool) {
	h, ok1 := unhex(hi)
	l, ok2 := unhex(lo)
	return h<<4 | l, ok1 && ok2
}

func unhex(c byte) (byte, bool) {
	switch {
	case '0' <= c && c <= '9':
		return c - '0', true
	case 'a' <= c && c <= 'f':
		return c - 'a' + 10, true
	case 'A' <= c && c <= 'F':
		return c - 'A' + 10, true
	}
	return 0, false
}

// hubspotParts is the v3 source string, in pieces.
func hubspotParts(req Request, ts string) [][]byte {
	method := strings.ToUpper(orDefault(req.Method, "POST"))
	return [][]byte{[]byte(method), []byte(hubspotURI(req.URL)), req.Body, []byte(ts)}
}

func verifyHubSpot(cfg Config, req Request, now time.Time) error {
	keys := cfg.keys()
	if len(keys) == 0 {
		return noSecret()
	}
	sigText, err := requireHeader(req.Header, headerHubSpotSignature)
	if err != nil {
		return err
	}
	ts, err := requireHeader(req.Header, headerHubSpotTimestamp)
	if err != nil {
		return err
	}
	if err := checkTimestamp(ts, unitMillis, now, cfg.tolerance()); err != nil {
		return err
	}
	sig, err := decodeBase64(sigText)
	if err != nil {
		return reject("malformed signature in header %s", headerHubSpotSignature)
	}
	if req.URL == "" {
		return reject("request URL unknown, cannot verify HubSpot v3 signature")
	}
	if !anyKeyMatches(sha256.New, keys, [][]byte{sig}, hubspotParts(req, ts)...) {
		return errMismatch()
	}
	return nil
}

func signHubSpot(sc SignConfig, req *Request, now time.Time) error {
	secret, err := sc.signingSecret()
	if err != nil {
		return err
	}
	if req.URL == "" {
		return errMissingURL
	}
	ts := strconv.FormatInt(now.UnixMilli(), 10)
	sum := macOf(sha256.New, []byte(secret), hubspotParts(*req, ts)...)
	setHeader(req, headerHubSpotTimestamp, ts)
	setHeader(req, headerHubSpotSignature, base64.StdEncoding.EncodeToString(sum))
	return nil
}

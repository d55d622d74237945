package signature

import (
	"crypto/sha256"
	"encoding/hex"
	"strconv"
	"strings"
	"time"
)

// Retell: x-retell-signature: v=<unix ms>,d=<hex HMAC-SHA256(API key, body+v)>.
// The body and the timestamp are concatenated with no separator.
const headerRetellSignature = "x-retell-signature"

// retellHeader is a parsed x-retell-signature.
type retellHeader struct {
	timestamp string
	digest    []byte
}

// parseRetell parses "v=<ms>,d=<hex>" (order-free, unknown keys ignored).
func parseRetell(header string) (retellHeader, error) {
	var h retellHeader
	for _, pair := range strings.Split(header, ",") {
		k, v, ok := strings.Cut(strings.TrimSpace(pair), "=")
		if !ok {
			return retellHeader{}, reject("malformed signature header")
		}
		switch k {
		case "v":
			if _, err := parseUnixTimestamp(v, unitMillis); err != nil {
				return retellHeader{}, err
			}
			h.timestamp = v
		case "d":
			d, err := hex.DecodeString(v)
			if err != nil || len(d) != sha256.Size {
				return retellHeader{}, reject("malformed signature header")
			}
			h.digest = d
		}
	}
	if h.timestamp == "" {
		return retellHeader{}, reject("signature header has no v= timestamp")
	}
	if h.digest == nil {
		return retellHeader{}, reject("signature header has no d= digest")
	}
	return h, nil
}

func verifyRetell(cfg Config, req Request, now time.Time) error {
	keys := cfg.keys()
	if len(keys) == 0 {
		return noSecret()
	}
	raw, err := requireHeader(req.Header, headerRetellSignature)
	if err != nil {
		return err
	}
	h, err := parseRetell(raw)
	if err != nil {
		return err
	}
	if err := checkTimestamp(h.timestamp, unitMillis, now, cfg.tolerance()); err != nil {
		return err
	}
	if !anyKeyMatches(sha256.New, keys, [][]byte{h.digest}, req.Body, []byte(h.timestamp)) {
		return errMismatch()
	}
	return nil
}

func signRetell(sc SignConfig, req *Request, now time.Time) error {
	secret, err := sc.signingSecret()
	if err != nil {
		return err
	}
	ts := strconv.FormatInt(now.UnixMilli(), 10)
	sum := macOf(sha256.New, []byte(secret), req.Body, []byte(ts))
	setHeader(req, headerRetellSignature, "v="+ts+",d="+hex.EncodeToString(sum))
	return nil
}

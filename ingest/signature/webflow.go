package signature

import (
	"crypto/sha256"
	"encoding/hex"
	"strconv"
	"time"
)

// Webflow signs "{timestamp}:{body}" with HMAC-SHA256 (hex, no prefix); the
// timestamp is unix milliseconds.
const (
	headerWebflowSignature = "x-webflow-signature"
	headerWebflowTimestamp = "x-webflow-timestamp"
)

func verifyWebflow(cfg Config, req Request, now time.Time) error {
	keys := cfg.keys()
	if len(keys) == 0 {
		return noSecret()
	}
	sigText, err := requireHeader(req.Header, headerWebflowSignature)
	if err != nil {
		return err
	}
	ts, err := requireHeader(req.Header, headerWebflowTimestamp)
	if err != nil {
		return err
	}
	if err := checkTimestamp(ts, unitMillis, now, cfg.tolerance()); err != nil {
		return err
	}
	sig, err := hex.DecodeString(sigText)
	if err != nil {
		return reject("malformed signature in header %s", headerWebflowSignature)
	}
	if !anyKeyMatches(sha256.New, keys, [][]byte{sig}, []byte(ts), []byte(":"), req.Body) {
		return errMismatch()
	}
	return nil
}

func signWebflow(sc SignConfig, req *Request, now time.Time) error {
	secret, err := sc.signingSecret()
	if err != nil {
		return err
	}
	ts := strconv.FormatInt(now.UnixMilli(), 10)
	sum := macOf(sha256.New, []byte(secret), []byte(ts), []byte(":"), req.Body)
	setHeader(req, headerWebflowTimestamp, ts)
	setHeader(req, headerWebflowSignature, hex.EncodeToString(sum))
	return nil
}

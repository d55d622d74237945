package signature

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Standard Webhooks headers; Svix sends the same scheme under svix-* names.
const (
	headerWebhookID        = "webhook-id"
	headerWebhookTimestamp = "webhook-timestamp"
	headerWebhookSignature = "webhook-signature"
	headerSvixID           = "svix-id"
	headerSvixTimestamp    = "svix-timestamp"
	headerSvixSignature    = "svix-signature"
)

// standardKey decodes a "whsec_"+base64 secret to its HMAC key. The spec asks
// for 24 to 64 random bytes.
func standardKey(secret string) ([]byte, error) {
	key, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(secret, secretPrefix))
	if err != nil {
		return nil, fmt.Errorf("secret is not whsec_ followed by base64: %w", err)
	}
	if len(key) < 24 || len(key) > 64 {
		return nil, fmt.Errorf("secret decodes to %d bytes, want 24 to 64", len(key))
	}
	return key, nil
}

func validateStandardWebhooks(cfg Config) error {
	if err := checkSecrets(KindStandardWebhooks, cfg); err != nil {
		return err
	}
	for i, s := range cfg.Secrets {
		if _, err := standardKey(s); err != nil {
			return configError(KindStandardWebhooks, "secret %d: %v", i+1, err)
		}
	}
	return nil
}

// parseStandardSignatures returns the v1 (HMAC-SHA256) signatures of a
// space-separated "v1,<base64> v1a,<base64> ..." list. Other versions and
// undecodable entries are skipped; at most maxSignatures are kept.
func parseStandardSignatures(header string) [][]byte {
	var sigs [][]byte
	for _, entry := range strings.Fields(header) {
		version, sig, ok := strings.Cut(entry, ",")
		if !ok || version != "v1" {
			continue
		}
		b, err := base64.StdEncoding.DecodeString(sig)
		if err != nil || len(b) != sha256.Size {
			continue
		}
		sigs = append(sigs, b)
		if len(sigs) == maxSignatures {
			break
		}
	}
	return sigs
}

// standardHeaders picks webhook-* headers, or svix-* when no
// webhook-signature is present.
func standardHeaders(req Request) (id, ts, sig string, err error) {
	names := [3]string{headerWebhookID, headerWebhookTimestamp, headerWebhookSignature}
	if _, ok := headerValue(req.Header, headerWebhookSignature); !ok {
		if _, ok := headerValue(req.Header, headerSvixSignature); ok {
			names = [3]string{headerSvixID, headerSvixTimestamp, headerSvixSignature}
		}
	}
	if sig, err = requireHeader(req.Header, names[2]); err != nil {
		return
	}
	if id, err = requireHeader(req.Header, names[0]); err != nil {
		return
	}
	ts, err = requireHeader(req.Header, names[1])
	return
}

func verifyStandardWebhooks(cfg Config, req Request, now time.Time) error {
	id, ts, sigHeader, err := standardHeaders(req)
	if err != nil {
		return err
	}
	if err := checkTimestamp(ts, unitSeconds, now, cfg.tolerance()); err != nil {
		return err
	}
	sigs := parseStandardSignatures(sigHeader)
	if len(sigs) == 0 {
		return reject("no v1 signature in header webhook-signature")
	}
	keys := make([][]byte, 0, len(cfg.Secrets))
	for _, s := range cfg.Secrets {
		if k, err := standardKey(s); err == nil {
			keys = append(keys, k)
		}
	}
	if len(keys) == 0 {
		return noSecret()
	}
	if !anyKeyMatches(sha256.New, keys, sigs, []byte(id), []byte("."), []byte(ts), []byte("."), req.Body) {
		return errMismatch()
	}
	return nil
}

// signStandardWebhooks sets webhook-id (sc.DeliveryID or a fresh msg_ id),
// webhook-timestamp and webhook-signature.
func signStandardWebhooks(sc SignConfig, req *Request, now time.Time) error {
	secret, err := sc.signingSecret()
	if err != nil {
		return err
	}
	key, err := standardKey(secret)
	if err != nil {
		return err
	}
	id := sc.DeliveryID
	if id == "" {
		var b [16]byte
		if _, err := rand.Read(b[:]); err != nil {
			return fmt.Errorf("delivery id: %w", err)
		}
		id = "msg_" + base64.RawURLEncoding.EncodeToString(b[:])
	}
	ts := strconv.FormatInt(now.Unix(), 10)
	sum := macOf(sha256.New, key, []byte(id), []byte("."), []byte(ts), []byte("."), req.Body)
	setHeader(req, headerWebhookID, id)
	setHeader(req, headerWebhookTimestamp, ts)
	setHeader(req, headerWebhookSignature, "v1,"+base64.StdEncoding.EncodeToString(sum))
	return nil
}

package signature

import "net/url"

// Meta Lead Ads (facebook-leads) POSTs are verified by facebookSpec (see
// hmac.go) with the app secret. Subscribing the callback URL first sends
// GET ?hub.mode=subscribe&hub.verify_token=...&hub.challenge=..., answered
// with the challenge as the body.

// facebookSpec: X-Hub-Signature-256: sha256=<hex HMAC-SHA256(app secret, raw
// body)>. The legacy sha1 X-Hub-Signature is not accepted.
var facebookSpec = macSpec{header: "X-Hub-Signature-256", encoding: encodingHex, prefix: "sha256="}

// maxChallengeLen bounds the echoed challenge.
const maxChallengeLen = 256

// facebookHandshake implements Handshake for facebook-leads.
func facebookHandshake(cfg Config, query url.Values) (string, bool, error) {
	mode := query.Get("hub.mode")
	if mode == "" {
		return "", false, nil
	}
	if mode != "subscribe" {
		return "", true, reject("unsupported hub.mode %q", truncate(mode, 32))
	}
	if cfg.VerifyToken == "" {
		return "", true, reject("source has no verify token configured")
	}
	if !secretEqual(query.Get("hub.verify_token"), cfg.VerifyToken) {
		return "", true, reject("verify token mismatch")
	}
	challenge := query.Get("hub.challenge")
	if !safeChallenge(challenge) {
		return "", true, reject("missing or malformed hub.challenge")
	}
	return challenge, true, nil
}

// safeChallenge accepts the short token-like strings Meta sends (an integer in
// practice), so echoing it can never inject markup.
func safeChallenge(s string) bool {
	if s == "" || len(s) > maxChallengeLen {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || c == '-' || c == '_' || c == '.') {
			return false
		}
	}
	return true
}

// truncate shortens untrusted text quoted in a reason.
func truncate(s string, n int) string {
	if len(s) > n {
		return s[:n]
	}
	return s
}

// Package signature authenticates webhook deliveries for every source kind
// leadgate accepts, and signs deliveries for tests, the load generator and the
// demo.
//
// Each kind follows its sender's documented scheme (see
// shared/reference/webhook-sources.md): which header carries the signature,
// which bytes are signed, hex or base64, seconds or milliseconds, the replay
// window. Verification always works on the raw body bytes exactly as received,
// compares in constant time, tries every signature a header carries against
// every configured secret (so rotation is seamless) and never skips a check
// because a header is missing.
//
// The package does no I/O and holds no state: a source's Config (secrets in
// plaintext, decrypted by the caller) and the clock are passed in.
package signature

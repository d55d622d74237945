package signature

import (
	"crypto/hmac"
	"crypto/sha1"
	"crypto/sha256"
	"crypto/sha512"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"hash"
)

// Digest encodings.
const (
	encodingHex    = "hex"
	encodingBase64 = "base64"
)

// HMAC algorithms.
const (
	algorithmSHA256 = "sha256"
	algorithmSHA1   = "sha1"
	algorithmSHA512 = "sha512"
)

// hashFunc maps an algorithm name ("" = sha256) to its constructor.
func hashFunc(algorithm string) (func() hash.Hash, error) {
	switch algorithm {
	case "", algorithmSHA256:
		return sha256.New, nil
	case algorithmSHA1:
		return sha1.New, nil
	case algorithmSHA512:
		return sha512.New, nil
	default:
		return nil, errors.New("unsupported algorithm " + algorithm)
	}
}

// macOf computes HMAC(key, parts...) without concatenating the parts first.
func macOf(newHash func() hash.Hash, key []byte, parts ...[]byte) []byte {
	m := hmac.New(newHash, key)
	for _, p := range parts {
		m.Write(p)
	}
	return m.Sum(nil)
}

// anyKeyMatches reports whether the MAC of parts under any key equals any
// candidate, comparing in constant time. Every secret is tried against every
// candidate so rotated secrets and multi-signature headers both work.
func anyKeyMatches(newHash func() hash.Hash, keys [][]byte, candidates [][]byte, parts ...[]byte) bool {
	for _, key := range keys {
		want := macOf(newHash, key, parts...)
		for _, c := range candidates {
			if hmac.Equal(want, c) {
				return true
			}
		}
	}
	return false
}

// encodeDigest renders a digest as "hex" (default) or "base64" (standard,
// padded).
func encodeDigest(encoding string, sum []byte) string {
	if encoding == encodingBase64 {
		return base64.StdEncoding.EncodeToString(sum)
	}
	return hex.EncodeToString(sum)
}

// decodeDigest parses a received digest. Hex is case-insensitive; base64
// accepts the standard alphabet with or without padding and the URL-safe one,
// since the decoded bytes are what is compared.
func decodeDigest(encoding, s string) ([]byte, error) {
	if encoding == encodingBase64 {
		return decodeBase64(s)
	}
	return hex.DecodeString(s)
}

// decodeBase64 tries the base64 variants senders use.
func decodeBase64(s string) ([]byte, error) {
	for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.RawStdEncoding, base64.URLEncoding, base64.RawURLEncoding} {
		if b, err := enc.DecodeString(s); err == nil {
			return b, nil
		}
	}
	return nil, errors.New("not base64")
}

// secretEqual compares a received secret with a configured one in constant
// time, hashing both first so not even the length leaks.
func secretEqual(got, want string) bool {
	g := sha256.Sum256([]byte(got))
	w := sha256.Sum256([]byte(want))
	return hmac.Equal(g[:], w[:])
}

// anySecretEqual reports whether got equals any non-empty secret.
func anySecretEqual(got string, secrets []string) bool {
	ok := false
	for _, s := range secrets {
		if s != "" && secretEqual(got, s) {
			ok = true
		}
	}
	return ok
}

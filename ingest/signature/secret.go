package signature

import (
	"crypto/rand"
	"encoding/base64"
	"fmt"
)

// secretPrefix marks leadgate-minted secrets.
const secretPrefix = "whsec_"

// NewSecret mints a secret for kind: for standard-webhooks "whsec_" +
// base64(32 random bytes) as the spec serialises it (the HMAC key is the
// decoded bytes); for every other kind "whsec_" + 32 random bytes in unpadded
// URL-safe base64, used as-is. It works for provider-keyed kinds too (useful
// for tests and the demo); GeneratesSecret says whether a source should use it.
func NewSecret(kind string) (string, error) {
	if !Known(kind) {
		return "", fmt.Errorf("%w %q", ErrUnknownKind, kind)
	}
	var b [32]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", fmt.Errorf("signature: new secret: %w", err)
	}
	if kind == KindStandardWebhooks {
		return secretPrefix + base64.StdEncoding.EncodeToString(b[:]), nil
	}
	return secretPrefix + base64.RawURLEncoding.EncodeToString(b[:]), nil
}

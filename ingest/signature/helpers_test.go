package signature

import (
	"crypto"
	"crypto/ed25519"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"hash"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// testNow is the verifier's clock in every table test.
var testNow = time.Date(2026, 10, 31, 8, 14, 22, 0, time.UTC)

// cred is one credential: a shared secret, or a key pair for gohighlevel.
type cred struct {
	secret    string
	publicKey string // PEM
	signer    crypto.Signer
}

// rsaKeys generates RSA keys once per test binary: 2048-bit generation is slow.
var rsaKeys = sync.OnceValue(func() []*rsa.PrivateKey {
	keys := make([]*rsa.PrivateKey, 3)
	for i := range keys {
		k, err := rsa.GenerateKey(rand.Reader, 2048)
		if err != nil {
			panic(err)
		}
		keys[i] = k
	}
	return keys
})

// secretCreds returns n fresh secrets for kind.
func secretCreds(t testing.TB, kind string, n int) []cred {
	t.Helper()
	out := make([]cred, n)
	for i := range out {
		s, err := NewSecret(kind)
		if err != nil {
			t.Fatalf("NewSecret(%q): %v", kind, err)
		}
		out[i] = cred{secret: s}
	}
	return out
}

// ed25519Creds returns n Ed25519 key pairs with PEM public keys.
func ed25519Creds(t testing.TB, n int) []cred {
	t.Helper()
	out := make([]cred, n)
	for i := range out {
		pub, priv, err := ed25519.GenerateKey(rand.Reader)
		if err != nil {
			t.Fatal(err)
		}
		out[i] = cred{publicKey: pemPublicKey(t, pub), signer: priv}
	}
	return out
}

// rsaCreds returns the three shared RSA key pairs.
func rsaCreds(t testing.TB) []cred {
	t.Helper()
	keys := rsaKeys()
	out := make([]cred, len(keys))
	for i, k := range keys {
		out[i] = cred{publicKey: pemPublicKey(t, &k.PublicKey), signer: k}
	}
	return out
}

// pemPublicKey encodes a public key as PKIX PEM.
func pemPublicKey(t testing.TB, pub crypto.PublicKey) string {
	t.Helper()
	der, err := x509.MarshalPKIXPublicKey(pub)
	if err != nil {
		t.Fatal(err)
	}
	return string(pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: der}))
}

// assertReason checks err: nil when want is "", else an *Error whose Reason
// contains want.
func assertReason(t testing.TB, err error, want string) {
	t.Helper()
	if want == "" {
		if err != nil {
			t.Fatalf("want accepted, got %v", err)
		}
		return
	}
	var e *Error
	if !errors.As(err, &e) {
		t.Fatalf("want *Error containing %q, got %v", want, err)
	}
	if !strings.Contains(e.Reason, want) {
		t.Fatalf("reason = %q, want it to contain %q", e.Reason, want)
	}
}

// jsonRequest is a JSON delivery to url.
func jsonRequest(url, body string) Request {
	return Request{
		Method: http.MethodPost,
		URL:    url,
		Header: http.Header{"Content-Type": {"application/json"}},
		Body:   []byte(body),
	}
}

// formRequest is a form-encoded delivery to url.
func formRequest(url, body string) Request {
	return Request{
		Method: http.MethodPost,
		URL:    url,
		Header: http.Header{"Content-Type": {"application/x-www-form-urlencoded"}},
		Body:   []byte(body),
	}
}

// cloneRequest deep-copies a request so a case can mutate it.
func cloneRequest(r Request) Request {
	r.Header = r.Header.Clone()
	if r.Header == nil {
		r.Header = http.Header{}
	}
	r.Body = append([]byte(nil), r.Body...)
	return r
}

// errAs is errors.As, named for readability in assertions.
func errAs(err error, target any) bool { return errors.As(err, target) }

// itoa formats an int64.
func itoa(n int64) string { return strconv.FormatInt(n, 10) }

// hashHash names hash.Hash for test helper signatures.
type hashHash = hash.Hash

package signature

import (
	"crypto/ed25519"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/base64"
	"encoding/pem"
	"errors"
	"regexp"
	"strings"
	"testing"
	"time"
)

func TestValidateConfig(t *testing.T) {
	sw, _ := NewSecret(KindStandardWebhooks)
	edPub, _, _ := ed25519.GenerateKey(rand.Reader)
	weakRSA, err := rsa.GenerateKey(rand.Reader, 1024)
	if err != nil {
		t.Fatal(err)
	}
	weakDER, _ := x509.MarshalPKIXPublicKey(&weakRSA.PublicKey)
	pkcs1 := string(pem.EncodeToMemory(&pem.Block{Type: "RSA PUBLIC KEY", Bytes: x509.MarshalPKCS1PublicKey(&rsaKeys()[0].PublicKey)}))
	ok := []string{"s"}
	cases := []struct {
		name string
		kind string
		cfg  Config
		want string // "" = valid; else a substring of the error
	}{
		{"standard-webhooks whsec secret", KindStandardWebhooks, Config{Secrets: []string{sw}}, ""},
		{"standard-webhooks needs a secret", KindStandardWebhooks, Config{}, "a secret is required"},
		{"standard-webhooks secret not base64", KindStandardWebhooks, Config{Secrets: []string{"whsec_not base64!"}}, "base64"},
		{"standard-webhooks secret too short", KindStandardWebhooks, Config{Secrets: []string{"whsec_" + base64.StdEncoding.EncodeToString([]byte("short"))}}, "want 24 to 64"},
		{"empty rotated secret", KindStripe, Config{Secrets: []string{"a", ""}}, "secret 2 is empty"},
		{"hmac bad encoding", KindHMAC, Config{Secrets: ok, Encoding: "base32"}, "encoding must be hex or base64"},
		{"hmac sha1 refused", KindHMAC, Config{Secrets: ok, Algorithm: "sha1"}, "algorithm must be sha256"},
		{"hmac bad header name", KindHMAC, Config{Secrets: ok, Header: "X Sig"}, "invalid header name"},
		{"crm-event like hmac", KindCRMEvent, Config{Secrets: ok, Encoding: "base64", Prefix: "sha256="}, ""},
		{"negative tolerance", KindStripe, Config{Secrets: ok, Tolerance: -time.Second}, "negative"},
		{"token URL only needs no secret", KindToken, Config{}, ""},
		{"token header needs a secret", KindToken, Config{Mode: "header"}, "a secret is required"},
		{"token unknown mode", KindToken, Config{Secrets: ok, Mode: "cookie"}, "mode \"cookie\""},
		{"activecampaign cannot use a body field", KindActiveCampaign, Config{Secrets: ok, Mode: "body"}, "mode \"body\""},
		{"activecampaign query", KindActiveCampaign, Config{Secrets: ok, Mode: "query"}, ""},
		{"instantly needs a secret", KindInstantly, Config{}, "a secret is required"},
		{"smartlead needs a secret", KindSmartlead, Config{}, "a secret is required"},
		{"vapi default bearer", KindVapi, Config{Secrets: ok}, ""},
		{"vapi hmac sha1 base64", KindVapi, Config{Secrets: ok, Mode: "hmac", Algorithm: "sha1", Encoding: "base64"}, ""},
		{"vapi hmac md5", KindVapi, Config{Secrets: ok, Mode: "hmac", Algorithm: "md5"}, "algorithm must be sha256, sha512 or sha1"},
		{"vapi unknown mode", KindVapi, Config{Secrets: ok, Mode: "oauth2"}, "mode must be"},
		{"twilio needs the auth token", KindTwilio, Config{}, "a secret is required"},
		{"gohighlevel needs a public key", KindGoHighLevel, Config{Secrets: ok}, "a public key is required"},
		{"gohighlevel raw ed25519", KindGoHighLevel, Config{PublicKeys: []string{base64.StdEncoding.EncodeToString(edPub)}}, ""},
		{"gohighlevel PEM ed25519", KindGoHighLevel, Config{PublicKeys: []string{pemPublicKey(t, edPub)}}, ""},
		{"gohighlevel PKCS1 RSA", KindGoHighLevel, Config{PublicKeys: []string{pkcs1}}, ""},
		{"gohighlevel weak RSA", KindGoHighLevel, Config{PublicKeys: []string{base64.StdEncoding.EncodeToString(weakDER)}}, "want at least 2048"},
		{"gohighlevel garbage key", KindGoHighLevel, Config{PublicKeys: []string{"not a key"}}, "public key 1"},
		{"gohighlevel broken PEM", KindGoHighLevel, Config{PublicKeys: []string{"-----BEGIN PUBLIC KEY-----\nAAAA\n"}}, "malformed PEM"},
		{"unknown kind", "fax", Config{}, "unknown source kind"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := ValidateConfig(c.kind, c.cfg)
			switch {
			case c.want == "" && err != nil:
				t.Fatalf("want valid, got %v", err)
			case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
				t.Fatalf("err = %v, want it to contain %q", err, c.want)
			}
		})
	}
}

func TestKindsAndSecrets(t *testing.T) {
	minted := map[string]bool{
		KindStandardWebhooks: true, KindHMAC: true, KindToken: true, KindCRMEvent: true,
		KindInstantly: true, KindSmartlead: true, KindVapi: true, KindActiveCampaign: true,
	}
	kinds := Kinds()
	if len(kinds) != 18 {
		t.Fatalf("Kinds() has %d kinds, want 18", len(kinds))
	}
	urlSafe := regexp.MustCompile(`^whsec_[A-Za-z0-9_-]{43}$`)
	for _, k := range kinds {
		if !Known(k) {
			t.Errorf("Known(%q) = false", k)
		}
		if got := GeneratesSecret(k); got != minted[k] {
			t.Errorf("GeneratesSecret(%q) = %v, want %v", k, got, minted[k])
		}
		s1, err := NewSecret(k)
		if err != nil {
			t.Fatalf("NewSecret(%q): %v", k, err)
		}
		s2, _ := NewSecret(k)
		if s1 == s2 {
			t.Errorf("NewSecret(%q) repeated a secret", k)
		}
		if k == KindStandardWebhooks {
			if _, err := standardKey(s1); err != nil {
				t.Errorf("standard-webhooks secret %q: %v", s1, err)
			}
		} else if !urlSafe.MatchString(s1) {
			t.Errorf("NewSecret(%q) = %q, want whsec_ + 43 url-safe chars", k, s1)
		}
	}
	for _, k := range []string{"", "Stripe", "svix", "jotform"} {
		if Known(k) || GeneratesSecret(k) {
			t.Errorf("%q reported as known", k)
		}
		if _, err := NewSecret(k); !errors.Is(err, ErrUnknownKind) {
			t.Errorf("NewSecret(%q) err = %v, want ErrUnknownKind", k, err)
		}
		if err := Sign(k, SignConfig{}, &Request{}, testNow); !errors.Is(err, ErrUnknownKind) {
			t.Errorf("Sign(%q) err = %v, want ErrUnknownKind", k, err)
		}
	}
}

func TestSignErrors(t *testing.T) {
	cases := []struct {
		name string
		kind string
		sc   SignConfig
		req  Request
	}{
		{"no secret", KindStripe, SignConfig{}, jsonRequest(hookURL, `{}`)},
		{"standard-webhooks secret not whsec base64", KindStandardWebhooks, SignConfig{Secret: "plain"}, jsonRequest(hookURL, `{}`)},
		{"twilio without URL", KindTwilio, SignConfig{Secret: "t"}, jsonRequest("", `{}`)},
		{"hubspot without URL", KindHubSpot, SignConfig{Secret: "t"}, jsonRequest("", `{}`)},
		{"smartlead body not an object", KindSmartlead, SignConfig{Secret: "t"}, jsonRequest(hookURL, `[1]`)},
		{"token nested body field", KindToken, SignConfig{Secret: "t", Config: Config{Mode: "body", BodyField: "a.b"}}, jsonRequest(hookURL, `{}`)},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			req := c.req
			if err := Sign(c.kind, c.sc, &req, testNow); err == nil {
				t.Fatal("Sign succeeded")
			}
		})
	}
	if err := Sign(KindStripe, SignConfig{Secret: "s"}, nil, testNow); err == nil {
		t.Fatal("Sign(nil request) succeeded")
	}
}

package signature

import (
	"net/http"
	"testing"
	"time"
)

// Parsers of sender-controlled headers must never panic and must keep their
// bounds whatever arrives.

func FuzzParseTV1(f *testing.F) {
	for _, s := range []string{
		"t=1495999758,v1=5257a869e7ecebeda32affa62cdca3fa51cad7e77a0e56ff536d0ce8e108d8bd",
		"t=1,v1=00,v1=zz,v0=aa", "t=,v1=", "=,=", ",,,", "t=99999999999999999999", "v1=ab", "t=1",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		h, err := parseTV1(s)
		if err != nil {
			return
		}
		if h.timestamp == "" || len(h.signatures) == 0 || len(h.signatures) > maxSignatures {
			t.Fatalf("accepted %q with timestamp %q and %d signatures", s, h.timestamp, len(h.signatures))
		}
	})
}

func FuzzParseRetell(f *testing.F) {
	for _, s := range []string{
		"v=1700000000000,d=5257a869e7ecebeda32affa62cdca3fa51cad7e77a0e56ff536d0ce8e108d8bd",
		"d=00,v=1", "v=,d=", "v=1", "d=zz", "", "v=1,d=00,x",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		h, err := parseRetell(s)
		if err == nil && (h.timestamp == "" || len(h.digest) != 32) {
			t.Fatalf("accepted %q as %+v", s, h)
		}
	})
}

func FuzzParseStandardSignatures(f *testing.F) {
	for _, s := range []string{
		"v1,K5oZfzN95Z9UVu1EsfQmfVNQhnkZ2pj9o9NDN/H/pI4= v1a,hnO3f9T8Ytu9HwrXslvumlUpqtNVqkhqw/enGzPCXe5BdqfYInXZ/m4KWtNxVTw==",
		"v1,", ",", "v1,,,, v1", "   ", "v2,abc v1,@@@",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if sigs := parseStandardSignatures(s); len(sigs) > maxSignatures {
			t.Fatalf("%d signatures kept", len(sigs))
		}
	})
}

func FuzzParsePublicKeys(f *testing.F) {
	f.Add("MCowBQYDK2VwAyEAGb9ECWmEzf6FQbrBZ9w7lshQhqowtrbLDFw4rXAxZuE=")
	f.Add("-----BEGIN PUBLIC KEY-----\nMCowBQYDK2VwAyEAGb9ECWmEzf6FQbrBZ9w7lshQhqowtrbLDFw4rXAxZuE=\n-----END PUBLIC KEY-----\n")
	f.Add("-----BEGIN RSA PUBLIC KEY-----\nAAAA\n-----END RSA PUBLIC KEY-----\n")
	f.Add("GZ9ECWmEzf6FQbrBZ9w7lshQhqowtrbLDFw4rXAxZuE")
	f.Add("")
	f.Fuzz(func(t *testing.T, s string) {
		keys, err := parsePublicKeys([]string{s})
		if err == nil && len(keys.ed)+len(keys.rsa) != 1 {
			t.Fatalf("parsed %q into %d keys", s, len(keys.ed)+len(keys.rsa))
		}
	})
}

func FuzzHubSpotURI(f *testing.F) {
	f.Add("https://a.test/h?x=%3A%2f%25%zz%3")
	f.Fuzz(func(t *testing.T, s string) {
		if got := hubspotURI(s); len(got) > len(s) {
			t.Fatalf("decoding grew %q to %q", s, got)
		}
	})
}

// FuzzVerify throws arbitrary signature headers and bodies at every kind.
func FuzzVerify(f *testing.F) {
	f.Add(uint8(0), "v1,abc", "t=1,v1=00", []byte(`{"timestamp":"x"}`))
	f.Add(uint8(12), "Bearer x", "sha256=zz", []byte("a=b&c=%zz"))
	f.Fuzz(func(t *testing.T, k uint8, sig, ts string, body []byte) {
		kinds := Kinds()
		kind := kinds[int(k)%len(kinds)]
		h := http.Header{}
		for _, name := range []string{
			"webhook-signature", "webhook-id", "Stripe-Signature", "Calendly-Webhook-Signature",
			"x-retell-signature", "X-GHL-Signature", "X-WH-Signature", "X-Twilio-Signature", "Authorization",
			"X-Hub-Signature-256", "Typeform-Signature", "Tally-Signature", "x-webflow-signature",
			"X-HubSpot-Signature-v3", DefaultHMACHeader, DefaultSecretHeader,
		} {
			h.Set(name, sig)
		}
		for _, name := range []string{"webhook-timestamp", "x-webflow-timestamp", "X-HubSpot-Request-Timestamp", "X-Ts"} {
			h.Set(name, ts)
		}
		cfg := Config{
			Secrets:         []string{"whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"},
			PublicKeys:      []string{"MCowBQYDK2VwAyEAGb9ECWmEzf6FQbrBZ9w7lshQhqowtrbLDFw4rXAxZuE="},
			TimestampHeader: "X-Ts",
			Mode:            map[string]string{KindToken: "body", KindVapi: "hmac", KindActiveCampaign: "query"}[kind],
		}
		req := Request{Method: "POST", URL: "https://a.test/h?" + ts, Header: h, Body: body}
		_ = Verify(kind, cfg, req, time.Unix(1700000000, 0))
	})
}

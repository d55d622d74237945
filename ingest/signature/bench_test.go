package signature

import (
	"crypto/ed25519"
	"crypto/rand"
	"encoding/base64"
	"testing"
	"time"
)

// BenchmarkVerify measures one verification of a ~1 KB body per kind, with
// one current and one previous secret (the rotation worst case: the match is
// on the second secret).
func BenchmarkVerify(b *testing.B) {
	body := make([]byte, 1024)
	for i := range body {
		body[i] = 'a' + byte(i%26)
	}
	edPub, edPriv, _ := ed25519.GenerateKey(rand.Reader)
	now := time.Now()
	cases := []struct {
		kind string
		cfg  Config
		sc   SignConfig
	}{
		{KindStandardWebhooks, Config{}, SignConfig{}},
		{KindStripe, Config{}, SignConfig{}},
		{KindHubSpot, Config{}, SignConfig{}},
		{KindTwilio, Config{}, SignConfig{}},
		{KindHMAC, Config{Encoding: "base64", Prefix: "sha256=", TimestampHeader: "X-Ts"}, SignConfig{}},
		{KindGoHighLevel, Config{PublicKeys: []string{base64.StdEncoding.EncodeToString(edPub)}}, SignConfig{PrivateKey: edPriv}},
	}
	for _, c := range cases {
		b.Run(c.kind, func(b *testing.B) {
			cfg := c.cfg
			sc := c.sc
			if c.kind != KindGoHighLevel {
				creds := secretCreds(b, c.kind, 2)
				cfg.Secrets = []string{creds[0].secret, creds[1].secret}
				sc.Secret = creds[1].secret
			}
			sc.Config = cfg
			req := jsonRequest(hookURL, string(body))
			if err := Sign(c.kind, sc, &req, now); err != nil {
				b.Fatal(err)
			}
			if err := Verify(c.kind, cfg, req, now); err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			for b.Loop() {
				if err := Verify(c.kind, cfg, req, now); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

package signature

import (
	"crypto/ed25519"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"crypto/sha512"
	"encoding/base64"
	"encoding/hex"
	"hash"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"
)

// Twilio's published validator vectors (auth token "12345"), as used by the
// twilio-php and twilio-csharp RequestValidator tests.
func TestTwilioPublishedVectors(t *testing.T) {
	const (
		token   = "12345"
		base    = "https://mycompany.com/myapp.php?foo=1&bar=2"
		form    = "CallSid=CA1234567890ABCDE&Caller=%2B14158675309&Digits=1234&From=%2B14158675309&To=%2B18005551212"
		jsonB   = `{"property": "value", "boolean": true}`
		bodyHex = "0a1ff7634d9ab3b95db5c9a2dfe9416e41502b283a80c7cf19632632f96e6620"
	)
	cfg := Config{Secrets: []string{token}}
	cases := []struct {
		name, url, body, sig, want string
	}{
		{"form params sorted by name", base, form, "RSOYDt4T1cUTdK1PDd93/VVr8B8=", ""},
		{"form params in any order", base, "To=%2B18005551212&Digits=1234&CallSid=CA1234567890ABCDE&From=%2B14158675309&Caller=%2B14158675309", "RSOYDt4T1cUTdK1PDd93/VVr8B8=", ""},
		{"repeated params: values sorted, duplicates once", base, "Sid=CA123&SidAccount=AC123&Digits=5678&Digits=1234&Digits=1234", "IK+Dwps556ElfBT0I3Rgjkr1wJU=", ""},
		{"signed without the port it was called on", "https://mycompany.com:1234/myapp.php?foo=1&bar=2", form, "RSOYDt4T1cUTdK1PDd93/VVr8B8=", ""},
		{"signed with the custom port", "https://mycompany.com:1234/myapp.php?foo=1&bar=2", form, "CYn1h0gLBdNxDGkKJg6hYohgeD8=", ""},
		{"signed with the default https port", base, form, "kvajT1Ptam85bY51eRf/AJRuM3w=", ""},
		{"signed with the default http port", "http://mycompany.com/myapp.php?foo=1&bar=2", form, "0ZXoZLH/DfblKGATFgpif+LLRf4=", ""},
		{"credentials in the URL are kept", "https://user:pass@mycompany.com/myapp.php?foo=1&bar=2", form, "CukzLTc1tT5dXEDIHm/tKBanW10=", ""},
		{"JSON body via bodySHA256", base + "&bodySHA256=" + bodyHex, jsonB, "a9nBmqA0ju/hNViExpshrM61xv4=", ""},
		{"JSON body, bodySHA256 only", "https://mycompany.com/myapp.php?bodySHA256=" + bodyHex, jsonB, "y77kIzt2vzLz71DgmJGsen2scGs=", ""},
		{"JSON body not matching bodySHA256", base + "&bodySHA256=" + bodyHex, `{"property": "other"}`, "a9nBmqA0ju/hNViExpshrM61xv4=", "body hash mismatch"},
		{"extra query parameter", base + "&extra=1", form, "RSOYDt4T1cUTdK1PDd93/VVr8B8=", "signature mismatch"},
		{"tampered param", base, strings.Replace(form, "1234", "9999", 1), "RSOYDt4T1cUTdK1PDd93/VVr8B8=", "signature mismatch"},
		{"not base64", base, form, "invalid 王", "malformed signature"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			req := formRequest(c.url, c.body)
			req.Header.Set("X-Twilio-Signature", c.sig)
			assertReason(t, Verify(KindTwilio, cfg, req, testNow), c.want)
		})
	}
	t.Run("Sign reproduces the published form signature", func(t *testing.T) {
		req := formRequest(base, form)
		if err := Sign(KindTwilio, SignConfig{Secret: token}, &req, testNow); err != nil {
			t.Fatal(err)
		}
		if got := req.Header.Get("X-Twilio-Signature"); got != "RSOYDt4T1cUTdK1PDd93/VVr8B8=" {
			t.Fatalf("signature = %q", got)
		}
	})
	t.Run("Sign appends bodySHA256 for JSON like Twilio", func(t *testing.T) {
		req := jsonRequest(base, jsonB)
		if err := Sign(KindTwilio, SignConfig{Secret: token}, &req, testNow); err != nil {
			t.Fatal(err)
		}
		if req.URL != base+"&bodySHA256="+bodyHex {
			t.Fatalf("URL = %q", req.URL)
		}
		if got := req.Header.Get("X-Twilio-Signature"); got != "a9nBmqA0ju/hNViExpshrM61xv4=" {
			t.Fatalf("signature = %q", got)
		}
	})
}

func TestHubSpotURIDecoding(t *testing.T) {
	cases := []struct{ in, want string }{
		{"https://a.test/h?x=1", "https://a.test/h?x=1"},
		{"https://a.test/h?cb=https%3A%2F%2Fb.test%2Fp%3Fq%40r", "https://a.test/h?cb=https://b.test/p?q@r"},
		{"https://a.test/h?s=%21%24%27%28%29%2A%2C%3B", "https://a.test/h?s=!$'()*,;"},
		{"https://a.test/h?lower=%3a%2f", "https://a.test/h?lower=:/"},
		// Escapes outside HubSpot's list stay encoded.
		{"https://a.test/h?sp=a%20b&amp=%26&eq=%3D&plus=%2B", "https://a.test/h?sp=a%20b&amp=%26&eq=%3D&plus=%2B"},
		// Single pass: an encoded percent is not decoded twice.
		{"https://a.test/h?x=%253A", "https://a.test/h?x=%253A"},
		{"https://a.test/h?trailing=%3", "https://a.test/h?trailing=%3"},
		{"https://a.test/h?bad=%zz", "https://a.test/h?bad=%zz"},
	}
	for _, c := range cases {
		if got := hubspotURI(c.in); got != c.want {
			t.Errorf("hubspotURI(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

func TestHubSpotSignsMethodAndURL(t *testing.T) {
	cfg := Config{Secrets: []string{"client-secret"}}
	req := jsonRequest("https://leadgate.example.com/hooks/t?a=%3A", `[{"eventId":1}]`)
	if err := Sign(KindHubSpot, SignConfig{Config: cfg}, &req, testNow); err != nil {
		t.Fatal(err)
	}
	// HubSpot signs the decoded form, so the encoded and decoded URLs agree.
	decoded := req
	decoded.URL = "https://leadgate.example.com/hooks/t?a=:"
	assertReason(t, Verify(KindHubSpot, cfg, decoded, testNow), "")

	otherPath := req
	otherPath.URL = "https://leadgate.example.com/hooks/u?a=%3A"
	assertReason(t, Verify(KindHubSpot, cfg, otherPath, testNow), "signature mismatch")

	otherMethod := req
	otherMethod.Method = http.MethodPut
	assertReason(t, Verify(KindHubSpot, cfg, otherMethod, testNow), "signature mismatch")

	noURL := req
	noURL.URL = ""
	assertReason(t, Verify(KindHubSpot, cfg, noURL, testNow), "request URL unknown")
}

func TestFacebookHandshake(t *testing.T) {
	cfg := Config{Secrets: []string{"app-secret"}, VerifyToken: "verify-me"}
	cases := []struct {
		name        string
		kind        string
		cfg         Config
		query       string
		wantBody    string
		wantHandled bool
		wantReason  string
	}{
		{"valid subscribe echoes the challenge", KindFacebookLeads, cfg,
			"hub.mode=subscribe&hub.verify_token=verify-me&hub.challenge=1158201444", "1158201444", true, ""},
		{"wrong verify token", KindFacebookLeads, cfg,
			"hub.mode=subscribe&hub.verify_token=nope&hub.challenge=1", "", true, "verify token mismatch"},
		{"missing verify token", KindFacebookLeads, cfg,
			"hub.mode=subscribe&hub.challenge=1", "", true, "verify token mismatch"},
		{"no verify token configured", KindFacebookLeads, Config{Secrets: []string{"s"}},
			"hub.mode=subscribe&hub.verify_token=&hub.challenge=1", "", true, "no verify token configured"},
		{"markup in the challenge is refused", KindFacebookLeads, cfg,
			"hub.mode=subscribe&hub.verify_token=verify-me&hub.challenge=%3Cscript%3E", "", true, "malformed hub.challenge"},
		{"missing challenge", KindFacebookLeads, cfg,
			"hub.mode=subscribe&hub.verify_token=verify-me", "", true, "malformed hub.challenge"},
		{"other hub.mode", KindFacebookLeads, cfg,
			"hub.mode=unsubscribe&hub.verify_token=verify-me&hub.challenge=1", "", true, "unsupported hub.mode"},
		{"not a handshake", KindFacebookLeads, cfg, "foo=bar", "", false, ""},
		{"other kinds never handshake", KindStripe, cfg,
			"hub.mode=subscribe&hub.verify_token=verify-me&hub.challenge=1", "", false, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			q, err := url.ParseQuery(c.query)
			if err != nil {
				t.Fatal(err)
			}
			body, handled, err := Handshake(c.kind, c.cfg, q)
			if body != c.wantBody || handled != c.wantHandled {
				t.Fatalf("Handshake = (%q, %v), want (%q, %v)", body, handled, c.wantBody, c.wantHandled)
			}
			assertReason(t, err, c.wantReason)
		})
	}
}

func TestFacebookRejectsLegacySHA1Header(t *testing.T) {
	cfg := Config{Secrets: []string{"app-secret"}}
	req := jsonRequest(hookURL, leadJSON)
	req.Header.Set("X-Hub-Signature", "sha1=0123456789abcdef0123456789abcdef01234567")
	assertReason(t, Verify(KindFacebookLeads, cfg, req, testNow), "missing header X-Hub-Signature-256")
}

func TestGoHighLevel(t *testing.T) {
	edPub, edPriv, _ := ed25519.GenerateKey(rand.Reader)
	rsaKey := rsaKeys()[0]
	body := ghlBody(testNow)

	signed := func(t *testing.T, signer SignConfig) Request {
		t.Helper()
		req := jsonRequest(hookURL, body)
		if err := Sign(KindGoHighLevel, signer, &req, testNow); err != nil {
			t.Fatal(err)
		}
		return req
	}
	both := func(t *testing.T) Request {
		req := signed(t, SignConfig{PrivateKey: edPriv})
		legacy := signed(t, SignConfig{PrivateKey: rsaKey})
		req.Header.Set("X-WH-Signature", legacy.Header.Get("X-WH-Signature"))
		return req
	}
	rawEd := base64.StdEncoding.EncodeToString(edPub)

	t.Run("raw base64 Ed25519 key", func(t *testing.T) {
		assertReason(t, Verify(KindGoHighLevel, Config{PublicKeys: []string{rawEd}}, signed(t, SignConfig{PrivateKey: edPriv}), testNow), "")
	})
	t.Run("both headers, only the RSA key configured", func(t *testing.T) {
		cfg := Config{PublicKeys: []string{pemPublicKey(t, &rsaKey.PublicKey)}}
		assertReason(t, Verify(KindGoHighLevel, cfg, both(t), testNow), "")
	})
	t.Run("both headers, only the Ed25519 key configured", func(t *testing.T) {
		assertReason(t, Verify(KindGoHighLevel, Config{PublicKeys: []string{rawEd}}, both(t), testNow), "")
	})
	t.Run("header whose key type is not configured", func(t *testing.T) {
		cfg := Config{PublicKeys: []string{pemPublicKey(t, &rsaKey.PublicKey)}}
		assertReason(t, Verify(KindGoHighLevel, cfg, signed(t, SignConfig{PrivateKey: edPriv}), testNow),
			"no configured public key matches")
	})
	t.Run("no signature header at all is never skipped", func(t *testing.T) {
		req := jsonRequest(hookURL, body)
		assertReason(t, Verify(KindGoHighLevel, Config{PublicKeys: []string{rawEd}}, req, testNow), "missing header X-GHL-Signature")
	})
	t.Run("a body without timestamp needs only the signature", func(t *testing.T) {
		req := jsonRequest(hookURL, `{"type":"ContactCreate","email":"jane@example.com"}`)
		if err := Sign(KindGoHighLevel, SignConfig{PrivateKey: edPriv}, &req, testNow); err != nil {
			t.Fatal(err)
		}
		assertReason(t, Verify(KindGoHighLevel, Config{PublicKeys: []string{rawEd}}, req, testNow), "")
	})
	t.Run("an unparseable body timestamp is rejected", func(t *testing.T) {
		req := jsonRequest(hookURL, `{"timestamp":"yesterday"}`)
		if err := Sign(KindGoHighLevel, SignConfig{PrivateKey: edPriv}, &req, testNow); err != nil {
			t.Fatal(err)
		}
		assertReason(t, Verify(KindGoHighLevel, Config{PublicKeys: []string{rawEd}}, req, testNow), "invalid body timestamp")
	})
	t.Run("a numeric millisecond body timestamp is checked", func(t *testing.T) {
		req := jsonRequest(hookURL, `{"timestamp":`+itoa(testNow.Add(-time.Hour).UnixMilli())+`}`)
		if err := Sign(KindGoHighLevel, SignConfig{PrivateKey: edPriv}, &req, testNow); err != nil {
			t.Fatal(err)
		}
		assertReason(t, Verify(KindGoHighLevel, Config{PublicKeys: []string{rawEd}}, req, testNow), "body timestamp outside")
	})
	t.Run("Sign needs a private key", func(t *testing.T) {
		req := jsonRequest(hookURL, body)
		if err := Sign(KindGoHighLevel, SignConfig{}, &req, testNow); err == nil {
			t.Fatal("Sign without a key succeeded")
		}
	})
}

func TestVapiBearer(t *testing.T) {
	cfg := Config{Secrets: []string{"tok"}}
	cases := []struct {
		name, header, value string
		cfg                 Config
		want                string
	}{
		{"Bearer scheme", "Authorization", "Bearer tok", cfg, ""},
		{"scheme is case-insensitive", "Authorization", "bearer tok", cfg, ""},
		{"Authorization without Bearer", "Authorization", "tok", cfg, "not a Bearer credential"},
		{"wrong token", "Authorization", "Bearer tok2", cfg, "secret mismatch"},
		{"custom header, raw token", "X-Api-Key", "tok", Config{Secrets: []string{"tok"}, Header: "X-Api-Key"}, ""},
		{"custom header, Bearer token", "X-Api-Key", "Bearer tok", Config{Secrets: []string{"tok"}, Header: "X-Api-Key"}, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			req := jsonRequest(hookURL, `{}`)
			req.Header.Set(c.header, c.value)
			assertReason(t, Verify(KindVapi, c.cfg, req, testNow), c.want)
		})
	}
}

// TestHMACGitHubPublishedVector: the generic hmac kind, configured as its page
// says for GitHub-style senders, verifies GitHub's published test values
// ("Validating webhook deliveries": secret "It's a Secret to Everybody",
// payload "Hello, World!").
func TestHMACGitHubPublishedVector(t *testing.T) {
	cfg := Config{Secrets: []string{"It's a Secret to Everybody"}, Header: "X-Hub-Signature-256", Prefix: "sha256=", Encoding: "hex"}
	req := jsonRequest(hookURL, "Hello, World!")
	req.Header.Set("X-Hub-Signature-256", "sha256=757107ea0eb2509fc211221cce984b8a37570b6d7586c22c46f4379c8b043e17")
	assertReason(t, Verify(KindHMAC, cfg, req, testNow), "")
	req.Body = []byte("Hello, World?")
	assertReason(t, Verify(KindHMAC, cfg, req, testNow), "mismatch")
}

// TestVapiHMACCredentialDefaults signs the way Vapi's HMAC credential does
// with its defaults (HMACAuthenticationPlan, Vapi API reference): hex
// HMAC-SHA256 of "{timestamp}.{body}" in x-signature, the unix timestamp in
// x-timestamp. A source with mode hmac and nothing else configured accepts it.
func TestVapiHMACCredentialDefaults(t *testing.T) {
	body := `{"message":{"type":"end-of-call-report","call":{"id":"c1"}}}`
	ts := strconv.FormatInt(testNow.Unix(), 10)
	sign := func(algorithm func() hash.Hash, parts ...string) string {
		m := hmac.New(algorithm, []byte("s3cret"))
		for _, p := range parts {
			m.Write([]byte(p))
		}
		return hex.EncodeToString(m.Sum(nil))
	}
	cfg := Config{Secrets: []string{"s3cret"}, Mode: "hmac"}
	cases := []struct {
		name    string
		cfg     Config
		headers map[string]string
		at      time.Time
		want    string
	}{
		{"Vapi's defaults", cfg, map[string]string{"x-signature": sign(sha256.New, ts, ".", body), "x-timestamp": ts}, testNow, ""},
		{"includeTimestamp off: the body alone", cfg, map[string]string{"x-signature": sign(sha256.New, body)}, testNow, ""},
		{"leadgate's earlier default header, body alone", cfg, map[string]string{"x-vapi-signature": sign(sha256.New, body)}, testNow, ""},
		{"sha512", Config{Secrets: []string{"s3cret"}, Mode: "hmac", Algorithm: "sha512"},
			map[string]string{"x-signature": sign(sha512.New, ts, ".", body), "x-timestamp": ts}, testNow, ""},
		{"a timestamped signature replayed late", cfg, map[string]string{"x-signature": sign(sha256.New, ts, ".", body), "x-timestamp": ts},
			testNow.Add(time.Hour), "outside"},
		{"a timestamped signature with its timestamp stripped", cfg, map[string]string{"x-signature": sign(sha256.New, ts, ".", body)}, testNow, "mismatch"},
		{"the timestamp moved on", cfg, map[string]string{"x-signature": sign(sha256.New, ts, ".", body),
			"x-timestamp": strconv.FormatInt(testNow.Unix()+1, 10)}, testNow, "mismatch"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			req := jsonRequest(hookURL, body)
			for k, v := range c.headers {
				req.Header.Set(k, v)
			}
			assertReason(t, Verify(KindVapi, c.cfg, req, c.at), c.want)
		})
	}
}

func TestHMACHeaderFormats(t *testing.T) {
	body := []byte(leadJSON)
	sum := macOf(mustHash(t, ""), []byte("s3cret"), body)
	hexSig := encodeDigest("hex", sum)
	b64Sig := encodeDigest("base64", sum)
	cases := []struct {
		name  string
		cfg   Config
		value string
		want  string
	}{
		{"hex, no prefix", Config{}, hexSig, ""},
		{"uppercase hex", Config{}, strings.ToUpper(hexSig), ""},
		{"prefix required", Config{Prefix: "sha256="}, hexSig, "lacks the sha256= prefix"},
		{"prefix case-insensitive", Config{Prefix: "sha256="}, "SHA256=" + hexSig, ""},
		{"base64", Config{Encoding: "base64"}, b64Sig, ""},
		{"base64 without padding", Config{Encoding: "base64"}, strings.TrimRight(b64Sig, "="), ""},
		{"base64 sent but hex configured", Config{}, b64Sig, "malformed signature"},
		{"timestamp header required when configured", Config{TimestampHeader: "X-Ts"}, hexSig, "missing header X-Ts"},
		{"oversized header", Config{}, strings.Repeat("a", maxHeaderLen+2), "too long"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cfg := c.cfg
			cfg.Secrets = []string{"s3cret"}
			req := jsonRequest(hookURL, string(body))
			req.Header.Set(DefaultHMACHeader, c.value)
			assertReason(t, Verify(KindHMAC, cfg, req, testNow), c.want)
		})
	}
	t.Run("millisecond timestamp header", func(t *testing.T) {
		cfg := Config{Secrets: []string{"s3cret"}, TimestampHeader: "X-Ts"}
		ts := itoa(testNow.UnixMilli())
		req := jsonRequest(hookURL, string(body))
		req.Header.Set("X-Ts", ts)
		req.Header.Set(DefaultHMACHeader, encodeDigest("hex", macOf(mustHash(t, ""), []byte("s3cret"), []byte(ts+"."), body)))
		assertReason(t, Verify(KindHMAC, cfg, req, testNow), "")
	})
}

func TestRetellHeaderOrderAndCalendlyWindow(t *testing.T) {
	cfg := Config{Secrets: []string{"key_retell"}}
	req := jsonRequest(hookURL, `{"event":"call_ended"}`)
	if err := Sign(KindRetell, SignConfig{Config: cfg}, &req, testNow); err != nil {
		t.Fatal(err)
	}
	v, d, _ := strings.Cut(req.Header.Get("x-retell-signature"), ",")
	req.Header.Set("x-retell-signature", d+","+v)
	assertReason(t, Verify(KindRetell, cfg, req, testNow), "")

	// Calendly's own samples use 3 minutes; an operator can configure that.
	cal := Config{Secrets: []string{"signing-key"}, Tolerance: 3 * time.Minute}
	creq := jsonRequest(hookURL, `{"event":"invitee.created"}`)
	if err := Sign(KindCalendly, SignConfig{Config: cal}, &creq, testNow.Add(-4*time.Minute)); err != nil {
		t.Fatal(err)
	}
	assertReason(t, Verify(KindCalendly, cal, creq, testNow), "outside the 3m0s tolerance")
}

func mustHash(t *testing.T, alg string) func() hashHash {
	t.Helper()
	h, err := hashFunc(alg)
	if err != nil {
		t.Fatal(err)
	}
	return h
}

func TestRestampedDeliveryIsRejected(t *testing.T) {
	// A replayer who refreshes the timestamp but cannot re-sign must fail.
	old := testNow.Add(-10 * time.Minute)
	cases := []struct {
		kind, header string
		cfg          Config
		restamp      func(r *Request)
	}{
		{KindStripe, "Stripe-Signature", Config{Secrets: []string{"whsec_x"}}, func(r *Request) {
			_, sig, _ := strings.Cut(r.Header.Get("Stripe-Signature"), ",")
			r.Header.Set("Stripe-Signature", "t="+itoa(testNow.Unix())+","+sig)
		}},
		{KindStandardWebhooks, "webhook-timestamp", Config{Secrets: []string{"whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"}}, func(r *Request) {
			r.Header.Set("webhook-timestamp", itoa(testNow.Unix()))
		}},
		{KindHubSpot, "X-HubSpot-Request-Timestamp", Config{Secrets: []string{"cs"}}, func(r *Request) {
			r.Header.Set("X-HubSpot-Request-Timestamp", itoa(testNow.UnixMilli()))
		}},
		{KindWebflow, "x-webflow-timestamp", Config{Secrets: []string{"cs"}}, func(r *Request) {
			r.Header.Set("x-webflow-timestamp", itoa(testNow.UnixMilli()))
		}},
	}
	for _, c := range cases {
		t.Run(c.kind, func(t *testing.T) {
			req := jsonRequest(hookURL, leadJSON)
			if err := Sign(c.kind, SignConfig{Config: c.cfg}, &req, old); err != nil {
				t.Fatal(err)
			}
			c.restamp(&req)
			assertReason(t, Verify(c.kind, c.cfg, req, testNow), "signature mismatch")
		})
	}
}

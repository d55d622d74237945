package signature

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

const (
	leadJSON = `{"event_type":"form_submitted","email":"Jane.Doe@Example.com","first_name":"Jane"}`
	leadForm = `contact%5Bemail%5D=jane%40example.com&contact%5Bfirst_name%5D=Jane&type=subscribe`
	hookURL  = "https://leadgate.example.com/hooks/tok_abc123"
)

// kindCase describes one kind (or one configuration of it) for the shared
// specification below.
type kindCase struct {
	name string
	kind string
	// creds makes three credentials: current, previous, unrelated.
	creds func(t testing.TB) []cred
	// config builds the source's Config from the credentials it accepts.
	config func(accepted []cred) Config
	// request builds the unsigned delivery; at is when it is sent.
	request func(at time.Time) Request
	// strip removes the authenticating header (or field); missing is the
	// expected reason.
	strip   func(r *Request)
	missing string
	// mismatch is the reason for a wrong secret.
	mismatch string
	// bodySigned: tampering with the body must be detected.
	bodySigned bool
	// timestamped: a stale delivery must be rejected.
	timestamped bool
}

func secrets(kind string) func(testing.TB) []cred {
	return func(t testing.TB) []cred { return secretCreds(t, kind, 3) }
}

func withSecrets(base Config) func([]cred) Config {
	return func(cs []cred) Config {
		c := base
		c.Secrets = nil
		for _, cr := range cs {
			c.Secrets = append(c.Secrets, cr.secret)
		}
		return c
	}
}

func withKeys(cs []cred) Config {
	var c Config
	for _, cr := range cs {
		c.PublicKeys = append(c.PublicKeys, cr.publicKey)
	}
	return c
}

func jsonAt(url, body string) func(time.Time) Request {
	return func(time.Time) Request { return jsonRequest(url, body) }
}

func del(names ...string) func(*Request) {
	return func(r *Request) {
		for _, n := range names {
			r.Header.Del(n)
		}
	}
}

// ghlBody is a GoHighLevel payload stamped at.
func ghlBody(at time.Time) string {
	return fmt.Sprintf(`{"type":"ContactCreate","webhookId":"wh_1","timestamp":%q,"email":"jane@example.com","firstName":"Jane"}`,
		at.UTC().Format(time.RFC3339Nano))
}

func kindCases() []kindCase {
	const mismatch, secretMismatch = "signature mismatch", "secret mismatch"
	return []kindCase{
		{name: "standard-webhooks", kind: KindStandardWebhooks, creds: secrets(KindStandardWebhooks),
			config: withSecrets(Config{}), request: jsonAt(hookURL, leadJSON),
			strip: del("webhook-signature"), missing: "missing header webhook-signature",
			mismatch: mismatch, bodySigned: true, timestamped: true},
		{name: "hmac/defaults", kind: KindHMAC, creds: secrets(KindHMAC),
			config: withSecrets(Config{}), request: jsonAt(hookURL, leadJSON),
			strip: del(DefaultHMACHeader), missing: "missing header X-Leadgate-Signature",
			mismatch: mismatch, bodySigned: true},
		{name: "hmac/base64+prefix+timestamp", kind: KindHMAC, creds: secrets(KindHMAC),
			config:  withSecrets(Config{Header: "X-Signature", Encoding: "base64", Prefix: "sha256=", TimestampHeader: "X-Timestamp"}),
			request: jsonAt(hookURL, leadJSON),
			strip:   del("X-Signature"), missing: "missing header X-Signature",
			mismatch: mismatch, bodySigned: true, timestamped: true},
		{name: "crm-event", kind: KindCRMEvent, creds: secrets(KindCRMEvent),
			config: withSecrets(Config{Header: "X-CRM-Signature", Prefix: "sha256="}), request: jsonAt(hookURL, leadJSON),
			strip: del("X-CRM-Signature"), missing: "missing header X-CRM-Signature",
			mismatch: mismatch, bodySigned: true},
		{name: "token/header", kind: KindToken, creds: secrets(KindToken),
			config: withSecrets(Config{Mode: "header"}), request: jsonAt(hookURL, leadJSON),
			strip: del(DefaultSecretHeader), missing: "missing header X-Leadgate-Secret",
			mismatch: secretMismatch},
		{name: "token/body", kind: KindToken, creds: secrets(KindToken),
			config: withSecrets(Config{Mode: "body", BodyField: "auth"}), request: jsonAt(hookURL, leadJSON),
			strip: func(r *Request) { r.Body = []byte(leadJSON) }, missing: "missing body field auth",
			mismatch: secretMismatch},
		{name: "token/query", kind: KindToken, creds: secrets(KindToken),
			config: withSecrets(Config{Mode: "query"}), request: jsonAt(hookURL, leadJSON),
			strip: func(r *Request) { r.URL = hookURL }, missing: "missing query parameter secret",
			mismatch: secretMismatch},
		{name: "stripe", kind: KindStripe, creds: secrets(KindStripe),
			config: withSecrets(Config{}), request: jsonAt(hookURL, `{"id":"evt_1","type":"checkout.session.completed","data":{"object":{"customer_details":{"name":"Jane"}}}}`),
			strip: del("Stripe-Signature"), missing: "missing header Stripe-Signature",
			mismatch: mismatch, bodySigned: true, timestamped: true},
		{name: "typeform", kind: KindTypeform, creds: secrets(KindTypeform),
			config: withSecrets(Config{}), request: jsonAt(hookURL, `{"event_id":"LtWXD3crgy","form_response":{"token":"Jane"}}`),
			strip: del("Typeform-Signature"), missing: "missing header Typeform-Signature",
			mismatch: mismatch, bodySigned: true},
		{name: "facebook-leads", kind: KindFacebookLeads, creds: secrets(KindFacebookLeads),
			config:  withSecrets(Config{VerifyToken: "vt"}),
			request: jsonAt(hookURL, `{"object":"page","entry":[{"changes":[{"field":"leadgen","value":{"leadgen_id":"Jane"}}]}]}`),
			strip:   del("X-Hub-Signature-256"), missing: "missing header X-Hub-Signature-256",
			mismatch: mismatch, bodySigned: true},
		{name: "webflow", kind: KindWebflow, creds: secrets(KindWebflow),
			config: withSecrets(Config{}), request: jsonAt(hookURL, `{"triggerType":"form_submission","payload":{"id":"Jane"}}`),
			strip: del("x-webflow-signature"), missing: "missing header x-webflow-signature",
			mismatch: mismatch, bodySigned: true, timestamped: true},
		{name: "calendly", kind: KindCalendly, creds: secrets(KindCalendly),
			config: withSecrets(Config{}), request: jsonAt(hookURL, `{"event":"invitee.created","payload":{"name":"Jane"}}`),
			strip: del("Calendly-Webhook-Signature"), missing: "missing header Calendly-Webhook-Signature",
			mismatch: mismatch, bodySigned: true, timestamped: true},
		{name: "hubspot", kind: KindHubSpot, creds: secrets(KindHubSpot),
			config:  withSecrets(Config{}),
			request: jsonAt(hookURL+"?portal=1&cb=https%3A%2F%2Fx.test%2Fa%40b", `[{"eventId":1,"subscriptionType":"contact.creation","objectId":"Jane"}]`),
			strip:   del("X-HubSpot-Signature-v3"), missing: "missing header X-HubSpot-Signature-v3",
			mismatch: mismatch, bodySigned: true, timestamped: true},
		{name: "tally", kind: KindTally, creds: secrets(KindTally),
			config: withSecrets(Config{}), request: jsonAt(hookURL, `{"eventId":"e1","eventType":"FORM_RESPONSE","data":{"name":"Jane"}}`),
			strip: del("Tally-Signature"), missing: "missing header Tally-Signature",
			mismatch: mismatch, bodySigned: true},
		{name: "retell", kind: KindRetell, creds: secrets(KindRetell),
			config: withSecrets(Config{}), request: jsonAt(hookURL, `{"event":"call_ended","call":{"call_id":"Jane"}}`),
			strip: del("x-retell-signature"), missing: "missing header x-retell-signature",
			mismatch: mismatch, bodySigned: true, timestamped: true},
		{name: "vapi/bearer", kind: KindVapi, creds: secrets(KindVapi),
			config: withSecrets(Config{}), request: jsonAt(hookURL, `{"message":{"type":"end-of-call-report","call":{"id":"Jane"}}}`),
			strip: del("Authorization"), missing: "missing header Authorization",
			mismatch: secretMismatch},
		{name: "vapi/secret-header", kind: KindVapi, creds: secrets(KindVapi),
			config: withSecrets(Config{Mode: "secret-header"}), request: jsonAt(hookURL, `{"message":{"type":"status-update"}}`),
			strip: del("X-Vapi-Secret"), missing: "missing header X-Vapi-Secret",
			mismatch: secretMismatch},
		{name: "vapi/hmac-sha1-base64-timestamp", kind: KindVapi, creds: secrets(KindVapi),
			config:  withSecrets(Config{Mode: "hmac", Algorithm: "sha1", Encoding: "base64", TimestampHeader: "x-vapi-timestamp"}),
			request: jsonAt(hookURL, `{"message":{"type":"end-of-call-report","call":{"id":"Jane"}}}`),
			strip:   del("x-signature"), missing: "missing header x-signature",
			mismatch: mismatch, bodySigned: true, timestamped: true},
		{name: "vapi/hmac-default", kind: KindVapi, creds: secrets(KindVapi),
			config: withSecrets(Config{Mode: "hmac"}), request: jsonAt(hookURL, `{"message":{"type":"tool-calls","name":"Jane"}}`),
			strip: del("x-signature"), missing: "missing header x-signature",
			mismatch: mismatch, bodySigned: true, timestamped: true},
		{name: "twilio/form", kind: KindTwilio, creds: secrets(KindTwilio),
			config: withSecrets(Config{}),
			request: func(time.Time) Request {
				return formRequest(hookURL+"?foo=1", "From=%2B14155550134&Body=Hi+Jane&MessageSid=SM1&To=%2B18005551212")
			},
			strip: del("X-Twilio-Signature"), missing: "missing header X-Twilio-Signature",
			mismatch: mismatch, bodySigned: true},
		{name: "twilio/json", kind: KindTwilio, creds: secrets(KindTwilio),
			config: withSecrets(Config{}), request: jsonAt(hookURL, `{"CallSid":"CA1","Caller":"Jane"}`),
			strip: del("X-Twilio-Signature"), missing: "missing header X-Twilio-Signature",
			mismatch: mismatch, bodySigned: true},
		{name: "gohighlevel/ed25519", kind: KindGoHighLevel,
			creds: func(t testing.TB) []cred { return ed25519Creds(t, 3) }, config: withKeys,
			request: func(at time.Time) Request { return jsonRequest(hookURL, ghlBody(at)) },
			strip:   del("X-GHL-Signature"), missing: "missing header X-GHL-Signature",
			mismatch: mismatch, bodySigned: true, timestamped: true},
		{name: "gohighlevel/rsa-legacy", kind: KindGoHighLevel,
			creds: rsaCreds, config: withKeys,
			request: func(at time.Time) Request { return jsonRequest(hookURL, ghlBody(at)) },
			strip:   del("X-WH-Signature"), missing: "missing header X-GHL-Signature",
			mismatch: mismatch, bodySigned: true, timestamped: true},
		{name: "activecampaign/header", kind: KindActiveCampaign, creds: secrets(KindActiveCampaign),
			config:  withSecrets(Config{Mode: "header", Header: "X-AC-Secret"}),
			request: func(time.Time) Request { return formRequest(hookURL, leadForm) },
			strip:   del("X-AC-Secret"), missing: "missing header X-AC-Secret",
			mismatch: secretMismatch},
		{name: "activecampaign/query", kind: KindActiveCampaign, creds: secrets(KindActiveCampaign),
			config:  withSecrets(Config{Mode: "query", QueryParam: "k"}),
			request: func(time.Time) Request { return formRequest(hookURL+"?list=3", leadForm) },
			strip:   func(r *Request) { r.URL = hookURL + "?list=3" }, missing: "missing query parameter k",
			mismatch: secretMismatch},
		{name: "instantly", kind: KindInstantly, creds: secrets(KindInstantly),
			config: withSecrets(Config{}), request: jsonAt(hookURL, `{"event_type":"reply_received","lead_email":"jane@example.com"}`),
			strip: del(DefaultSecretHeader), missing: "missing header X-Leadgate-Secret",
			mismatch: secretMismatch},
		{name: "smartlead", kind: KindSmartlead, creds: secrets(KindSmartlead),
			config:  withSecrets(Config{}),
			request: jsonAt(hookURL, `{"event_type":"EMAIL_REPLY","stats_id":"s1","to_email":"jane@example.com"}`),
			strip: func(r *Request) {
				r.Body = []byte(`{"event_type":"EMAIL_REPLY","stats_id":"s1","to_email":"jane@example.com"}`)
			},
			missing: "missing body field secret_key", mismatch: secretMismatch},
	}
}

// signWith signs a fresh request from c with credential cr at time at.
func signWith(t *testing.T, c kindCase, cfg Config, cr cred, at time.Time) Request {
	t.Helper()
	req := c.request(at)
	sc := SignConfig{Config: cfg, Secret: cr.secret, PrivateKey: cr.signer}
	if err := Sign(c.kind, sc, &req, at); err != nil {
		t.Fatalf("Sign: %v", err)
	}
	return req
}

// TestVerify is the specification every kind meets.
func TestVerify(t *testing.T) {
	covered := map[string]bool{}
	for _, c := range kindCases() {
		covered[c.kind] = true
		t.Run(c.name, func(t *testing.T) {
			creds := c.creds(t)
			current, previous, stranger := creds[0], creds[1], creds[2]
			cfg := c.config([]cred{current, previous})
			if err := ValidateConfig(c.kind, cfg); err != nil {
				t.Fatalf("ValidateConfig: %v", err)
			}

			t.Run("signed with the current secret is accepted", func(t *testing.T) {
				req := signWith(t, c, cfg, current, testNow)
				assertReason(t, Verify(c.kind, cfg, req, testNow), "")
			})
			t.Run("signed with the previous secret is accepted during rotation", func(t *testing.T) {
				req := signWith(t, c, cfg, previous, testNow)
				assertReason(t, Verify(c.kind, cfg, req, testNow), "")
			})
			t.Run("signed with an unrelated secret is rejected", func(t *testing.T) {
				req := signWith(t, c, cfg, stranger, testNow)
				assertReason(t, Verify(c.kind, cfg, req, testNow), c.mismatch)
			})
			t.Run("missing authentication is rejected", func(t *testing.T) {
				req := cloneRequest(signWith(t, c, cfg, current, testNow))
				c.strip(&req)
				assertReason(t, Verify(c.kind, cfg, req, testNow), c.missing)
			})
			if c.bodySigned {
				t.Run("tampered body is rejected", func(t *testing.T) {
					req := cloneRequest(signWith(t, c, cfg, current, testNow))
					tampered := strings.Replace(string(req.Body), "Jane", "Jake", 1)
					if tampered == string(req.Body) {
						t.Fatal("test body has no Jane to tamper with")
					}
					req.Body = []byte(tampered)
					assertReason(t, Verify(c.kind, cfg, req, testNow), "mismatch")
				})
			}
			if c.timestamped {
				t.Run("stale timestamp is rejected", func(t *testing.T) {
					req := signWith(t, c, cfg, current, testNow.Add(-6*time.Minute))
					assertReason(t, Verify(c.kind, cfg, req, testNow), "outside the 5m0s tolerance")
				})
				t.Run("timestamp from the future is rejected", func(t *testing.T) {
					req := signWith(t, c, cfg, current, testNow.Add(6*time.Minute))
					assertReason(t, Verify(c.kind, cfg, req, testNow), "outside the 5m0s tolerance")
				})
				t.Run("a configured tolerance is honoured", func(t *testing.T) {
					tight := cfg
					tight.Tolerance = time.Minute
					req := signWith(t, c, cfg, current, testNow.Add(-2*time.Minute))
					assertReason(t, Verify(c.kind, tight, req, testNow), "outside the 1m0s tolerance")
					assertReason(t, Verify(c.kind, cfg, req, testNow), "")
				})
			}
		})
	}
	for _, k := range Kinds() {
		if !covered[k] {
			t.Errorf("kind %q has no case in TestVerify", k)
		}
	}
}

func TestVerifyUnknownKind(t *testing.T) {
	err := Verify("carrier-pigeon", Config{}, Request{}, testNow)
	if err == nil || !strings.Contains(err.Error(), "unknown source kind") {
		t.Fatalf("err = %v, want unknown kind", err)
	}
	var e *Error
	if errAs(err, &e) {
		t.Fatalf("unknown kind must not be a verification *Error (it is a server bug), got %v", err)
	}
}

func TestVerifyWithoutSecretsFailsClosed(t *testing.T) {
	req := jsonRequest(hookURL, leadJSON)
	req.Header.Set("Stripe-Signature", "t=1,v1=00")
	for _, kind := range []string{KindStandardWebhooks, KindHMAC, KindStripe, KindTypeform, KindWebflow, KindHubSpot,
		KindRetell, KindTwilio, KindInstantly, KindSmartlead, KindCRMEvent, KindGoHighLevel, KindVapi} {
		if err := Verify(kind, Config{}, req, testNow); err == nil {
			t.Errorf("%s: a source without secrets accepted a delivery", kind)
		}
	}
}

func TestTokenURLOnlyAcceptsWithoutSecret(t *testing.T) {
	// The URL token already matched: nothing else to check.
	for _, kind := range []string{KindToken, KindActiveCampaign} {
		assertReason(t, Verify(kind, Config{}, formRequest(hookURL, leadForm), testNow), "")
		if err := ValidateConfig(kind, Config{}); err != nil {
			t.Errorf("%s: URL-token-only config rejected: %v", kind, err)
		}
	}
}

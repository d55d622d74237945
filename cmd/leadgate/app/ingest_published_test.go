package app_test

import (
	"crypto"
	"crypto/hmac"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha1"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"encoding/pem"
	"net/http"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"
	"github.com/stripe/stripe-go/v82/webhook"
	twilio "github.com/twilio/twilio-go/client"

	"github.com/leadgate/leadgate/ingest/signature"
)

// publishedCase is one provider's published example payload (the mapping
// package's testdata/published, whose test names each example's source),
// signed the provider's way: with the provider's SDK where it has a Go one
// (stripe-go, the Standard Webhooks library, twilio-go's RequestValidator),
// otherwise by the provider's documented recipe written out here, apart from
// leadgate's own signer.
type publishedCase struct {
	kind, file, contentType string
	config                  map[string]any
	provider                bool // the operator pastes a provider-issued secret
	sign                    func(t *testing.T, d *delivery, secret string, at time.Time)
	tamper                  func(d *delivery) // what a forger would change (default: the body)
	// restamp puts the attempt's time into a body that carries its own timestamp.
	restamp func(t *testing.T, body []byte, at time.Time) []byte
	// What the stored event must be: type, identity, first name, fields.
	eventType, email, firstName string
	fields                      map[string]any
	hydrated                    bool // id-only: the provider id is stored for hydration
}

func hmacSHA256(key, msg []byte) []byte {
	m := hmac.New(sha256.New, key)
	m.Write(msg)
	return m.Sum(nil)
}

func publishedCases() []publishedCase {
	ghlKey, ghlPub := rsaKeyPair()
	return []publishedCase{
		{kind: "stripe", file: "stripe.json", provider: true, eventType: "checkout.session.completed", email: "jenny.rosen@example.com", firstName: "Jenny",
			fields: map[string]any{"payment_status": "paid"},
			sign: func(t *testing.T, d *delivery, secret string, at time.Time) {
				signed := webhook.GenerateTestSignedPayload(&webhook.UnsignedPayload{Payload: d.Body, Secret: secret, Timestamp: at})
				d.Header.Set("Stripe-Signature", signed.Header)
			}},
		{kind: "standard-webhooks", file: "standard-webhooks.json", eventType: "contact.created", email: "example@example.com", firstName: "Example",
			sign: func(t *testing.T, d *delivery, secret string, at time.Time) {
				wh, err := standardwebhooks.NewWebhook(secret)
				if err != nil {
					t.Fatal(err)
				}
				id := "msg_2KWPBgLlAfxdpx2AI54pPJ85f4W"
				sig, err := wh.Sign(id, at, d.Body)
				if err != nil {
					t.Fatal(err)
				}
				d.Header.Set("webhook-id", id)
				d.Header.Set("webhook-timestamp", strconv.FormatInt(at.Unix(), 10))
				d.Header.Set("webhook-signature", sig)
			}},
		{kind: "twilio", file: "twilio-sms.txt", contentType: formCT, provider: true, eventType: "message.received",
			fields: map[string]any{"message_body": "Hello"},
			sign: func(t *testing.T, d *delivery, secret string, _ time.Time) {
				form, err := url.ParseQuery(string(d.Body))
				if err != nil {
					t.Fatal(err)
				}
				params := map[string]string{}
				keys := make([]string, 0, len(form))
				for k := range form {
					keys = append(keys, k)
					params[k] = form.Get(k)
				}
				sort.Strings(keys)
				data := d.URL
				for _, k := range keys {
					data += k + params[k]
				}
				m := hmac.New(sha1.New, []byte(secret))
				m.Write([]byte(data))
				sig := base64.StdEncoding.EncodeToString(m.Sum(nil))
				v := twilio.NewRequestValidator(secret)
				if !v.Validate(d.URL, params, sig) {
					t.Fatal("twilio-go's RequestValidator refuses the signature as computed from Twilio's documented recipe")
				}
				d.Header.Set("X-Twilio-Signature", sig)
			}},
		{kind: "typeform", file: "typeform.json", provider: true, eventType: "form_response", email: "laura@example.com", firstName: "Laura",
			fields: map[string]any{"readable_ref_date": "2005-10-15"},
			sign: func(t *testing.T, d *delivery, secret string, _ time.Time) {
				d.Header.Set("Typeform-Signature", "sha256="+base64.StdEncoding.EncodeToString(hmacSHA256([]byte(secret), d.Body)))
			}},
		{kind: "facebook-leads", file: "facebook-leads.json", provider: true, eventType: "leadgen", hydrated: true,
			sign: func(t *testing.T, d *delivery, secret string, _ time.Time) {
				d.Header.Set("X-Hub-Signature-256", "sha256="+hex.EncodeToString(hmacSHA256([]byte(secret), d.Body)))
			}},
		{kind: "hubspot", file: "hubspot.json", provider: true, eventType: "contact.propertyChange", hydrated: true,
			sign: func(t *testing.T, d *delivery, secret string, at time.Time) {
				ts := strconv.FormatInt(at.UnixMilli(), 10)
				d.Header.Set("X-HubSpot-Request-Timestamp", ts)
				d.Header.Set("X-HubSpot-Signature-v3", base64.StdEncoding.EncodeToString(hmacSHA256([]byte(secret), []byte(http.MethodPost+d.URL+string(d.Body)+ts))))
			}},
		{kind: "calendly", file: "calendly.json", provider: true, eventType: "invitee.created", email: "test@example.com", firstName: "John",
			fields: map[string]any{"meeting_uri": "https://api.calendly.com/scheduled_events/GBGBDCAADAEDCRZ2"},
			sign: func(t *testing.T, d *delivery, secret string, at time.Time) {
				ts := strconv.FormatInt(at.Unix(), 10)
				d.Header.Set("Calendly-Webhook-Signature", "t="+ts+",v1="+hex.EncodeToString(hmacSHA256([]byte(secret), []byte(ts+"."+string(d.Body)))))
			}},
		{kind: "tally", file: "tally.json", provider: true, eventType: "FORM_RESPONSE", email: "alice@example.com", firstName: "Alice",
			fields: map[string]any{"matrix": map[string]any{"Row 1": []any{"Column 1"}, "Row 2": []any{"Column 2"}}},
			sign: func(t *testing.T, d *delivery, secret string, _ time.Time) {
				d.Header.Set("Tally-Signature", base64.StdEncoding.EncodeToString(hmacSHA256([]byte(secret), d.Body)))
			}},
		{kind: "webflow", file: "webflow.json", provider: true, eventType: "form_submission", email: "zaphod@heartofgold.ai", firstName: "Zaphod",
			sign: func(t *testing.T, d *delivery, secret string, at time.Time) {
				ts := strconv.FormatInt(at.UnixMilli(), 10)
				d.Header.Set("x-webflow-timestamp", ts)
				d.Header.Set("x-webflow-signature", hex.EncodeToString(hmacSHA256([]byte(secret), []byte(ts+":"+string(d.Body)))))
			}},
		{kind: "retell", file: "retell.json", provider: true, eventType: "call_analyzed", email: "john.doe@example.com", firstName: "John",
			sign: func(t *testing.T, d *delivery, secret string, at time.Time) {
				ts := strconv.FormatInt(at.UnixMilli(), 10)
				d.Header.Set("x-retell-signature", "v="+ts+",d="+hex.EncodeToString(hmacSHA256([]byte(secret), []byte(string(d.Body)+ts))))
			}},
		// ActiveCampaign signs nothing: the shared secret rides in a header of the
		// webhook URL's configuration, so a forger without it is what is refused.
		{kind: "activecampaign", file: "activecampaign-tag-added.txt", contentType: formCT, config: map[string]any{"mode": "header", "header": "X-AC-Secret"},
			eventType: "contact_tag_added", email: "test@test.com", firstName: "Test", fields: map[string]any{"tag": "vip customer"},
			sign:   func(t *testing.T, d *delivery, secret string, _ time.Time) { d.Header.Set("X-AC-Secret", secret) },
			tamper: func(d *delivery) { d.Header.Set("X-AC-Secret", "guessed") }},
		// Vapi's HMAC credential with its defaults (HMACAuthenticationPlan, Vapi API reference): hex
		// HMAC-SHA256 of "{timestamp}.{body}" in x-signature, the unix timestamp in x-timestamp.
		{kind: "vapi", file: "vapi-end-of-call-report.json", config: map[string]any{"mode": "hmac"},
			eventType: "end-of-call-report", email: "john@example.com", firstName: "John",
			fields: map[string]any{"phone_verified": true, "satisfaction_score": 8.0},
			sign: func(t *testing.T, d *delivery, secret string, at time.Time) {
				ts := strconv.FormatInt(at.Unix(), 10)
				d.Header.Set("x-timestamp", ts)
				d.Header.Set("x-signature", hex.EncodeToString(hmacSHA256([]byte(secret), []byte(ts+"."+string(d.Body)))))
			}},
		// Instantly signs nothing; its webhook settings add custom headers, so the source's secret
		// rides in one of them and a forger without it is what is refused.
		{kind: "instantly", file: "instantly-reply-received.json", eventType: "reply_received", email: "dana@example.com", firstName: "Dana",
			fields: map[string]any{"reply_text_snippet": "Yes, Tuesday works"},
			sign: func(t *testing.T, d *delivery, secret string, _ time.Time) {
				d.Header.Set(signature.DefaultSecretHeader, secret)
			},
			tamper: func(d *delivery) { d.Header.Set(signature.DefaultSecretHeader, "guessed") }},
		// Smartlead signs nothing either: the webhook's secret_key rides in the body, so a forger
		// without it is what is refused.
		{kind: "smartlead", file: "smartlead-email-reply.json", eventType: "EMAIL_REPLY", email: "david.carroll@example.com", firstName: "David",
			fields: map[string]any{"reply_text": "Sounds interesting, tell me more"},
			sign: func(t *testing.T, d *delivery, secret string, _ time.Time) {
				body := strings.Replace(string(d.Body), `"secret_key": ""`, `"secret_key": "`+secret+`"`, 1)
				if body == string(d.Body) {
					t.Fatal("smartlead example has no secret_key to fill")
				}
				d.Body = []byte(body)
			},
			tamper: func(d *delivery) {
				var m map[string]any
				if err := json.Unmarshal(d.Body, &m); err != nil {
					panic(err)
				}
				m["secret_key"] = "guessed"
				d.Body, _ = json.Marshal(m)
			}},
		// HighLevel signs with its private key; the test stands in for it with its own key pair and
		// configures the public half, as an operator pastes HighLevel's published key. x-wh-signature
		// is the recipe of "Webhook Authentication Guide": base64 RSA-SHA256 of the raw body.
		{kind: "gohighlevel", file: "gohighlevel-contact-create.json", config: map[string]any{"public_keys": []string{ghlPub}},
			eventType: "ContactCreate", email: "johndeo@gmail.comm", firstName: "John", fields: map[string]any{"ghl_contact_id": "nmFmQEsNgz6AVpgLVUJ0"},
			restamp: func(t *testing.T, b []byte, at time.Time) []byte {
				stamped := strings.Replace(string(b), `"2025-01-28T14:35:00Z"`, `"`+at.UTC().Format(time.RFC3339)+`"`, 1)
				if stamped == string(b) {
					t.Fatal("gohighlevel example has no timestamp to restamp")
				}
				return []byte(stamped)
			},
			sign: func(t *testing.T, d *delivery, _ string, _ time.Time) {
				digest := sha256.Sum256(d.Body)
				sig, err := rsa.SignPKCS1v15(rand.Reader, ghlKey, crypto.SHA256, digest[:])
				if err != nil {
					t.Fatal(err)
				}
				d.Header.Set("x-wh-signature", base64.StdEncoding.EncodeToString(sig))
			}},
	}
}

func TestPublishedExamplesSignedTheProvidersWay(t *testing.T) {
	t.Parallel()
	h := newHarness(t, opts{})
	for _, c := range publishedCases() {
		t.Run(c.kind, func(t *testing.T) {
			h := h.with(t)
			in := map[string]any{"kind": c.kind, "name": c.kind + " example", "channel": "test", "default_region": "US"}
			for k, v := range c.config {
				in[k] = v
			}
			if c.provider {
				s, err := signature.NewSecret(c.kind)
				if err != nil {
					t.Fatal(err)
				}
				in["secret"] = s
			}
			src := h.createSource(in)
			ct := c.contentType
			if ct == "" {
				ct = jsonCT
			}
			body := fixture(t, "published/"+c.file)
			signed := func() delivery {
				d := delivery{URL: src.URL, ContentType: ct, Header: http.Header{}, Body: append([]byte(nil), body...)}
				if c.restamp != nil {
					d.Body = c.restamp(t, d.Body, h.clock.Now())
				}
				c.sign(t, &d, src.Secret, h.clock.Now())
				return d
			}

			first := h.send(signed())
			if first.Status != http.StatusOK || first.str("status") != "queued" {
				t.Fatalf("the provider's example, signed its way: %s, want 200 queued", first)
			}
			if again := h.send(signed()); again.Status != http.StatusOK || again.str("status") != "duplicate" {
				t.Fatalf("the same delivery retried: %s, want 200 duplicate", again)
			}
			forged := signed()
			if c.tamper != nil {
				c.tamper(&forged)
			} else if ct == formCT {
				forged.Body = []byte(strings.Replace(string(forged.Body), "Hello", "Hellp", 1))
			} else {
				forged.Body = append(forged.Body[:1:1], append([]byte(" "), forged.Body[1:]...)...) // one byte more
			}
			if r := h.send(forged); r.Status != http.StatusUnauthorized {
				t.Fatalf("tampered: %s, want 401", r)
			}

			events := h.events("source=" + itoa(src.ID))
			if len(events) == 0 {
				t.Fatal("no event stored")
			}
			id, _ := events[len(events)-1]["id"].(string) // newest first: the first item of a batch is last
			r := h.api(http.MethodGet, "/events/"+id, nil)
			if r.Status != http.StatusOK {
				t.Fatalf("event %s: %s", id, r)
			}
			ev := r.JSON
			if inner, ok := ev["event"].(map[string]any); ok {
				ev = inner
			}
			if ev["event_type"] != c.eventType {
				t.Errorf("event_type %v, want %s", ev["event_type"], c.eventType)
			}
			if c.hydrated {
				if ev["hydration"] == nil || ev["email"] != nil {
					t.Errorf("id-only event: hydration %v, email %v; want the provider id kept for hydration", ev["hydration"], ev["email"])
				}
				return
			}
			if ev["email"] != c.email && c.email != "" {
				t.Errorf("email %v, want %s", ev["email"], c.email)
			}
			if c.email == "" && ev["phone"] == nil {
				t.Errorf("no identity stored: %v", ev)
			}
			if first, _ := ev["first_name"].(string); c.firstName != "" && !strings.EqualFold(first, c.firstName) {
				t.Errorf("first_name %q, want %s", first, c.firstName)
			}
			var fields map[string]any
			raw, _ := json.Marshal(ev["fields"])
			_ = json.Unmarshal(raw, &fields)
			for k, want := range c.fields {
				if got, _ := json.Marshal(fields[k]); string(got) != mustJSON(t, want) {
					t.Errorf("fields[%s] = %s, want %s", k, got, mustJSON(t, want))
				}
			}
		})
	}
}

// rsaKeyPair is a stand-in for a provider's RSA signing key and its PEM public key.
func rsaKeyPair() (*rsa.PrivateKey, string) {
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		panic(err)
	}
	der, err := x509.MarshalPKIXPublicKey(&key.PublicKey)
	if err != nil {
		panic(err)
	}
	return key, string(pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: der}))
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

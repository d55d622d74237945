package app_test

import (
	"crypto"
	"crypto/ed25519"
	"crypto/rand"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/leadgate/leadgate/ingest/signature"
)

const (
	jsonCT = "application/json"
	formCT = "application/x-www-form-urlencoded"
)

// fixture is a provider payload from the mapping package's test data, the
// same bytes its presets are specified against.
func fixture(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "..", "ingest", "mapping", "testdata", name))
	if err != nil {
		t.Fatalf("fixture: %v", err)
	}
	return []byte(strings.TrimSpace(string(b)))
}

// kindCase is one source kind (in one configuration) driven through HTTP.
type kindCase struct {
	kind        string
	config      map[string]any // extra source settings for the admin API
	provider    bool           // the operator pastes a provider-issued secret
	publicKey   bool           // gohighlevel: an Ed25519 key pair instead of a secret
	file        string
	contentType string
	// body renders the payload signed at `at` (default: the fixture as is).
	body func(t testing.TB, at time.Time) []byte
	// strip removes the authentication (a header, or the body secret).
	strip       func(d *delivery)
	bodySigned  bool // a tampered body must be refused
	timestamped bool // a stale delivery must be refused
	events      int  // inbox rows one delivery becomes
}

func dropHeaders(names ...string) func(*delivery) {
	return func(d *delivery) {
		for _, n := range names {
			d.Header.Del(n)
		}
	}
}

func kindCases() []kindCase {
	return []kindCase{
		{kind: "standard-webhooks", file: "standard-webhooks.json", strip: dropHeaders("webhook-signature"), bodySigned: true, timestamped: true},
		{kind: "hmac", config: map[string]any{"timestamp_header": "X-Timestamp"}, file: "token-fullname.json",
			strip: dropHeaders(signature.DefaultHMACHeader), bodySigned: true, timestamped: true},
		{kind: "token", config: map[string]any{"mode": "header"}, file: "token-fullname.json", strip: dropHeaders(signature.DefaultSecretHeader)},
		{kind: "crm-event", config: map[string]any{"header": "X-CRM-Signature", "prefix": "sha256="}, file: "crm-event.json",
			strip: dropHeaders("X-CRM-Signature"), bodySigned: true},
		{kind: "stripe", provider: true, file: "stripe.json", strip: dropHeaders("Stripe-Signature"), bodySigned: true, timestamped: true},
		{kind: "typeform", provider: true, file: "typeform.json", strip: dropHeaders("Typeform-Signature"), bodySigned: true},
		{kind: "facebook-leads", provider: true, file: "facebook-leads.json", strip: dropHeaders("X-Hub-Signature-256"), bodySigned: true, events: 3},
		{kind: "webflow", provider: true, file: "webflow.json", strip: dropHeaders("x-webflow-signature"), bodySigned: true, timestamped: true},
		{kind: "calendly", provider: true, file: "calendly.json", strip: dropHeaders("Calendly-Webhook-Signature"), bodySigned: true, timestamped: true},
		{kind: "hubspot", provider: true, file: "hubspot.json", strip: dropHeaders("X-HubSpot-Signature-v3"), bodySigned: true, timestamped: true, events: 3},
		{kind: "tally", provider: true, file: "tally.json", strip: dropHeaders("Tally-Signature"), bodySigned: true},
		{kind: "retell", provider: true, file: "retell.json", strip: dropHeaders("x-retell-signature"), bodySigned: true, timestamped: true},
		{kind: "vapi", config: map[string]any{"mode": "hmac", "timestamp_header": "x-vapi-timestamp"}, file: "vapi.json",
			strip: dropHeaders("x-signature"), bodySigned: true, timestamped: true},
		{kind: "twilio", provider: true, file: "twilio-sms.txt", contentType: formCT, strip: dropHeaders("X-Twilio-Signature"), bodySigned: true},
		{kind: "gohighlevel", publicKey: true, file: "gohighlevel.json", strip: dropHeaders("X-GHL-Signature"), bodySigned: true, timestamped: true,
			body: func(t testing.TB, at time.Time) []byte {
				b := fixture(t, "gohighlevel.json")
				stamped := strings.Replace(string(b), `"2026-10-31T08:14:22.000Z"`, `"`+at.UTC().Format(time.RFC3339Nano)+`"`, 1)
				if stamped == string(b) {
					t.Fatal("gohighlevel fixture has no timestamp to restamp")
				}
				return []byte(stamped)
			}},
		{kind: "activecampaign", config: map[string]any{"mode": "header", "header": "X-AC-Secret"}, file: "activecampaign.txt",
			contentType: formCT, strip: dropHeaders("X-AC-Secret")},
		{kind: "instantly", file: "instantly.json", strip: dropHeaders(signature.DefaultSecretHeader)},
		{kind: "smartlead", file: "smartlead.json", strip: func(d *delivery) {
			var m map[string]any
			if err := json.Unmarshal(d.Body, &m); err != nil {
				panic(err)
			}
			delete(m, "secret_key")
			d.Body, _ = json.Marshal(m)
		}},
	}
}

// keyPair is a gohighlevel signing key and its PEM public key.
func keyPair(t testing.TB) (crypto.Signer, string) {
	t.Helper()
	pub, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	der, err := x509.MarshalPKIXPublicKey(pub)
	if err != nil {
		t.Fatal(err)
	}
	return priv, string(pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: der}))
}

// TestIngestEveryKind is the HTTP specification every source kind meets: a
// correctly signed delivery is stored and queued; a tampered body, a wrong
// secret, a stale timestamp or missing authentication answers 401 with a
// reason and stores nothing.
func TestIngestEveryKind(t *testing.T) {
	t.Parallel()
	h := newHarness(t, opts{})
	covered := map[string]bool{}
	for _, c := range kindCases() {
		covered[c.kind] = true
		t.Run(c.kind, func(t *testing.T) {
			h := h.with(t)
			in := map[string]any{"kind": c.kind, "channel": "test", "default_region": "US"}
			for k, v := range c.config {
				in[k] = v
			}
			var key, strangerKey crypto.Signer
			if c.provider {
				s, err := signature.NewSecret(c.kind)
				if err != nil {
					t.Fatal(err)
				}
				in["secret"] = s
			}
			if c.publicKey {
				var pub string
				key, pub = keyPair(t)
				strangerKey, _ = keyPair(t)
				in["public_keys"] = []string{pub}
			}
			src := h.createSource(in)
			ct := c.contentType
			if ct == "" {
				ct = jsonCT
			}
			body := func(at time.Time) []byte {
				if c.body != nil {
					return c.body(t, at)
				}
				return fixture(t, c.file)
			}
			now := h.clock.Now()
			good := func() delivery { return h.signed(src, ct, body(now), sign{key: key}) }

			refused := map[string]delivery{}
			wrong, _ := signature.NewSecret(c.kind)
			refused["wrong secret"] = h.signed(src, ct, body(now), sign{secret: wrong, key: strangerKey})
			d := good()
			c.strip(&d)
			refused["missing authentication"] = d
			if c.bodySigned {
				d := good()
				if ct == formCT {
					d.Body = append(d.Body, "&Injected=1"...)
				} else {
					d.Body = []byte(strings.Replace(string(d.Body), "}", " }", 1))
				}
				refused["tampered body"] = d
			}
			if c.timestamped {
				at := now.Add(-6 * time.Minute)
				refused["stale timestamp"] = h.signed(src, ct, body(at), sign{key: key, at: at})
			}
			for name, d := range refused {
				r := h.send(d)
				if r.Status != http.StatusUnauthorized || r.str("error") == "" {
					t.Errorf("%s: got %s, want 401 with a reason", name, r)
				}
			}
			if n := len(h.events("source=" + itoa(src.ID))); n != 0 {
				t.Fatalf("refused deliveries stored %d events", n)
			}

			r := h.send(good())
			if r.Status != http.StatusOK || r.str("status") != "queued" {
				t.Fatalf("signed delivery: got %s, want 200 queued", r)
			}
			want := max(c.events, 1)
			var ids []string
			if want == 1 {
				ids = []string{r.str("event_id")}
			} else {
				items, _ := r.JSON["events"].([]any)
				for _, it := range items {
					m := it.(map[string]any)
					if m["status"] != "queued" {
						t.Errorf("item %v: want queued", m)
					}
					ids = append(ids, m["event_id"].(string))
				}
			}
			if len(ids) != want || ids[0] == "" {
				t.Fatalf("answer carries event ids %v, want %d", ids, want)
			}
			stored := h.events("source=" + itoa(src.ID))
			if len(stored) != want {
				t.Fatalf("inbox holds %d rows for the source, want %d", len(stored), want)
			}
			for _, e := range stored {
				if e["status"] != "pending" || !contains(ids, e["id"].(string)) {
					t.Errorf("inbox row %v: want a pending row answered in %v", e["id"], ids)
				}
			}
		})
	}
	for _, k := range signature.Kinds() {
		if !covered[k] {
			t.Errorf("kind %s has no end-to-end case", k)
		}
	}
}

// TestIngestSecretRotation: after a rotation both secrets are accepted until
// the previous one's grace ends, then only the new one.
func TestIngestSecretRotation(t *testing.T) {
	t.Parallel()
	h := newHarness(t, opts{})
	src := h.createSource(map[string]any{"kind": "standard-webhooks"})
	old := src.Secret
	body := `{"email":"rota@example.com"}`

	r := h.api(http.MethodPost, "/sources/"+itoa(src.ID)+"/rotate-secret", map[string]any{"grace_seconds": 2})
	if r.Status != http.StatusOK || r.str("secret") == "" || r.str("secret") == old {
		t.Fatalf("rotate: %s", r)
	}
	fresh := r.str("secret")
	send := func(secret, id string) reply {
		return h.send(h.signed(src, jsonCT, []byte(body), sign{secret: secret, id: id}))
	}
	if r := send(old, "rot-1"); r.Status != http.StatusOK {
		t.Fatalf("previous secret during grace: %s, want 200", r)
	}
	if r := send(fresh, "rot-2"); r.Status != http.StatusOK {
		t.Fatalf("new secret: %s, want 200", r)
	}
	// 3 s later the grace has ended, though the source cache (5 s TTL) still
	// holds the entry it loaded during the grace.
	h.clock.Advance(3 * time.Second)
	if r := send(old, "rot-3"); r.Status != http.StatusUnauthorized {
		t.Fatalf("previous secret after grace: %s, want 401", r)
	}
	if r := send(fresh, "rot-4"); r.Status != http.StatusOK {
		t.Fatalf("new secret after grace: %s, want 200", r)
	}

	// A rotation without grace retires the old secret at once.
	r = h.api(http.MethodPost, "/sources/"+itoa(src.ID)+"/rotate-secret", map[string]any{"grace_seconds": 0})
	if r.Status != http.StatusOK {
		t.Fatalf("rotate: %s", r)
	}
	if r := send(fresh, "rot-5"); r.Status != http.StatusUnauthorized {
		t.Fatalf("secret rotated away without grace: %s, want 401", r)
	}
	if r := send(r.str("secret"), "rot-6"); r.Status != http.StatusOK {
		t.Fatalf("newest secret: %s, want 200", r)
	}
	if n := len(h.events("source=" + itoa(src.ID))); n != 4 {
		t.Fatalf("inbox holds %d rows, want the 4 accepted deliveries", n)
	}
}

// TestIngestFacebookHandshake: Meta's GET hub.challenge subscription check.
func TestIngestFacebookHandshake(t *testing.T) {
	t.Parallel()
	h := newHarness(t, opts{})
	secret, _ := signature.NewSecret("facebook-leads")
	src := h.createSource(map[string]any{"kind": "facebook-leads", "secret": secret})
	if src.VerifyToken == "" {
		t.Fatal("a facebook-leads source must be given a verify token")
	}
	handshake := func(token, challenge string) reply {
		q := url.Values{"hub.mode": {"subscribe"}, "hub.verify_token": {token}, "hub.challenge": {challenge}}
		req, _ := http.NewRequest(http.MethodGet, src.URL+"?"+q.Encode(), nil)
		return h.do(req)
	}
	r := handshake(src.VerifyToken, "1158201444")
	if r.Status != http.StatusOK || string(r.Raw) != "1158201444" || !strings.HasPrefix(r.Header.Get("Content-Type"), "text/plain") {
		t.Fatalf("handshake: %s (%s), want 200 text/plain echoing the challenge", r, r.Header.Get("Content-Type"))
	}
	if r := handshake("not-the-token", "1158201444"); r.Status != http.StatusForbidden || r.str("error") == "" {
		t.Fatalf("wrong verify token: %s, want 403 with a reason", r)
	}
	if r := handshake(src.VerifyToken, "<script>"); r.Status != http.StatusForbidden {
		t.Fatalf("unsafe challenge: %s, want 403", r)
	}
	// A plain GET on a source of another kind is not a delivery.
	other := h.createSource(map[string]any{"kind": "standard-webhooks"})
	req, _ := http.NewRequest(http.MethodGet, other.URL, nil)
	if r := h.do(req); r.Status != http.StatusMethodNotAllowed {
		t.Fatalf("GET on a standard-webhooks source: %s, want 405", r)
	}
	if n := h.inboxCount(); n != 0 {
		t.Fatalf("handshakes stored %d events", n)
	}
}

// TestIngestMultiEventPayloads: Meta entry[].changes[] and HubSpot arrays
// become one inbox row per event; a redelivery answers every item duplicate
// with the original ids.
func TestIngestMultiEventPayloads(t *testing.T) {
	t.Parallel()
	h := newHarness(t, opts{})
	for _, c := range []struct{ kind, file string }{{"facebook-leads", "facebook-leads.json"}, {"hubspot", "hubspot.json"}} {
		secret, _ := signature.NewSecret(c.kind)
		src := h.createSource(map[string]any{"kind": c.kind, "secret": secret})
		send := func() reply { return h.send(h.signed(src, jsonCT, fixture(t, c.file), sign{})) }
		itemIDs := func(r reply, status string) []string {
			t.Helper()
			if r.Status != http.StatusOK || r.str("status") != status {
				t.Fatalf("%s: %s, want 200 %s", c.kind, r, status)
			}
			var ids []string
			for _, it := range r.JSON["events"].([]any) {
				m := it.(map[string]any)
				if m["status"] != status {
					t.Errorf("%s item %v, want %s", c.kind, m, status)
				}
				ids = append(ids, m["event_id"].(string))
			}
			return ids
		}
		first := itemIDs(send(), "queued")
		again := itemIDs(send(), "duplicate")
		if len(first) != 3 || strings.Join(first, ",") != strings.Join(again, ",") {
			t.Fatalf("%s: first answer %v, redelivery %v; want the same 3 ids", c.kind, first, again)
		}
		rows := h.events("source=" + itoa(src.ID))
		if len(rows) != 3 {
			t.Fatalf("%s: %d inbox rows, want 3", c.kind, len(rows))
		}
		for _, e := range rows {
			if e["hydration"] != nil {
				continue // only on GET /events/{id}
			}
			one := h.api(http.MethodGet, "/events/"+e["id"].(string), nil)
			if one.JSON["hydration"] == nil {
				t.Errorf("%s event %v: an id-only event must be marked for hydration", c.kind, e["id"])
			}
		}
	}
	if tasks := h.applyTasks(); len(tasks) != 6 {
		t.Fatalf("%d apply tasks, want 6 (one per event)", len(tasks))
	}
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

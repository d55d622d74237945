package mapping

import (
	"bytes"
	"encoding/json"
	"errors"
	"net/http"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

// want describes one expected item. Scalars are compared exactly; Fields and Attribution list the
// entries that must be present with these values; NoFields lists keys that must be absent.
type want struct {
	DeliveryID, EventType, OccurredAt          string
	Email, Phone, FirstName, LastName, Company string
	TargetStage, CurrentStage                  string
	Fields, Attribution                        map[string]any
	NoFields                                   []string
	Hydrate                                    *Hydration
	RuleOverrides                              string
}

const jsonCT = "application/json"
const formCT = "application/x-www-form-urlencoded"

func fixture(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatalf("read fixture: %v", err)
	}
	return bytes.TrimSpace(b)
}

func TestMapPresets(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, kind, file, contentType string
		header                        http.Header
		want                          []want
	}{
		{
			name: "standard webhooks contract payload", kind: "standard-webhooks", file: "standard-webhooks.json", contentType: jsonCT,
			header: http.Header{"Webhook-Id": {"msg_2KWPBgLlAfxdpx2AI54pPJ85f4W"}},
			want: []want{{
				DeliveryID: "msg_2KWPBgLlAfxdpx2AI54pPJ85f4W", EventType: "form_submitted", OccurredAt: "2026-10-31T08:14:22Z",
				Email: "Jane.Doe@Example.com ", Phone: "(415) 555-0134", FirstName: "jane", LastName: "doe", Company: "Acme",
				TargetStage: "SQL",
				Fields:      map[string]any{"budget": "10k", "phone_verified": true},
				Attribution: map[string]any{"utm_source": "ads", "utm_campaign": "fall-launch"},
			}},
		},
		{
			name: "standard webhooks falls back to svix-id", kind: "standard-webhooks", file: "standard-webhooks.json", contentType: jsonCT,
			header: http.Header{"Svix-Id": {"msg_svix_1"}},
			want: []want{{
				DeliveryID: "msg_svix_1", EventType: "form_submitted", OccurredAt: "2026-10-31T08:14:22Z",
				Email: "Jane.Doe@Example.com ", Phone: "(415) 555-0134", FirstName: "jane", LastName: "doe", Company: "Acme",
				TargetStage: "SQL", Fields: map[string]any{"budget": "10k"},
			}},
		},
		{
			name: "token kind with full name, unix time and body event id", kind: "token", file: "token-fullname.json", contentType: jsonCT,
			want: []want{{
				DeliveryID: "evt_form_8841", EventType: "lead.created", OccurredAt: "2026-10-31T08:14:22Z",
				Email: "maria@example.org", FirstName: "Maria", LastName: "del Carmen Ruiz", Company: "Ruiz & Hijos",
				Fields:      map[string]any{"consent": map[string]any{"marketing": true}},
				Attribution: map[string]any{"gclid": "Cj0KCQjw"},
			}},
		},
		{
			name: "hmac kind prefers Idempotency-Key header", kind: "hmac", file: "token-fullname.json", contentType: jsonCT,
			header: http.Header{"Idempotency-Key": {"idem-1"}},
			want: []want{{
				DeliveryID: "idem-1", EventType: "lead.created", OccurredAt: "2026-10-31T08:14:22Z",
				Email: "maria@example.org", FirstName: "Maria", LastName: "del Carmen Ruiz", Company: "Ruiz & Hijos",
			}},
		},
		{
			name: "crm event with rule overrides", kind: "crm-event", file: "crm-event.json", contentType: jsonCT,
			want: []want{{
				DeliveryID: "idem-7f3a", EventType: "stage_changed", OccurredAt: "2026-10-31T09:00:00Z",
				Email: "Sam@Example.com", TargetStage: "Closed", CurrentStage: "SQL",
				Fields:        map[string]any{"deal_value": 12000.0, "source": "crm_workflow"},
				RuleOverrides: `{"allow_regression":true,"stages":["Discovered","Engaged","SQL","Closed"]}`,
			}},
		},
		{
			name: "stripe checkout session", kind: "stripe", file: "stripe.json", contentType: jsonCT,
			want: []want{{
				DeliveryID: "evt_1QxYzAbCdEfGhIjK", EventType: "checkout.session.completed", OccurredAt: "2026-10-31T08:14:22Z",
				Email: "Buyer@Example.com", Phone: "+14155550134", FirstName: "Ada", LastName: "Lovelace", Company: "Analytical Engines Ltd",
				Fields: map[string]any{"amount": 49900.0, "currency": "usd", "stripe_customer": "cus_R2d2C3po",
					"stripe_object": "checkout.session", "payment_status": "paid", "plan": "pro"},
				Attribution: map[string]any{"utm_source": "newsletter"},
			}},
		},
		{
			name: "typeform response", kind: "typeform", file: "typeform.json", contentType: jsonCT,
			want: []want{{
				DeliveryID: "a3a12ec67a1365927098a606107fac15", EventType: "form_response", OccurredAt: "2026-10-31T08:14:22Z",
				Email: "grace@navy.example.mil", Phone: "+12025550199", FirstName: "grace", LastName: "HOPPER", Company: "US Navy",
				Fields: map[string]any{"budget": "$10k-$50k", "which_products_interest_you": []any{"Compilers", "COBOL"},
					"consent": true, "score": 9.0},
				Attribution: map[string]any{"utm_source": "linkedin", "utm_campaign": "q4-demo", "form_id": "lT4Z3j", "form_title": "Book a demo"},
			}},
		},
		{
			name: "tally response", kind: "tally", file: "tally.json", contentType: jsonCT,
			want: []want{{
				DeliveryID: "a4cb511e-d513-4fa5-baee-b815d718dfd1", EventType: "FORM_RESPONSE", OccurredAt: "2026-10-31T08:14:22Z",
				Email: "linus@example.fi", Phone: "+358401234567", FirstName: "linus", LastName: "torvalds", Company: "Linux Foundation",
				Fields:      map[string]any{"team_size": []any{"11-50"}},
				Attribution: map[string]any{"utm_source": "hn", "form_id": "VwbNEw", "form_name": "Contact sales"},
			}},
		},
		{
			name: "facebook lead ads batch splits per leadgen change", kind: "facebook-leads", file: "facebook-leads.json", contentType: jsonCT,
			want: []want{
				{
					DeliveryID: "444444444444", EventType: "leadgen", OccurredAt: "2026-10-31T08:14:22Z",
					Hydrate:     &Hydration{Provider: "meta", Object: "leadgen", ID: "444444444444"},
					Attribution: map[string]any{"ad_id": "777777777777", "adgroup_id": "666666666666", "form_id": "555555555555", "page_id": "153125381133"},
				},
				{
					DeliveryID: "444444444445", EventType: "leadgen", OccurredAt: "2026-10-31T08:14:30Z",
					Hydrate:     &Hydration{Provider: "meta", Object: "leadgen", ID: "444444444445"},
					Attribution: map[string]any{"ad_id": "777777777778"},
				},
				{
					DeliveryID: "444444444446", EventType: "leadgen", OccurredAt: "2026-10-31T08:14:59Z",
					Hydrate:     &Hydration{Provider: "meta", Object: "leadgen", ID: "444444444446"},
					Attribution: map[string]any{"form_id": "555555555556", "page_id": "153125381134"},
				},
			},
		},
		{
			name: "hubspot batch splits per element", kind: "hubspot", file: "hubspot.json", contentType: jsonCT,
			want: []want{
				{
					DeliveryID: "62515:2881778:1793434001", EventType: "contact.propertyChange", OccurredAt: "2026-10-31T08:14:22Z",
					TargetStage: "salesqualifiedlead",
					Hydrate:     &Hydration{Provider: "hubspot", Object: "contact", ID: "1246965"},
					Fields:      map[string]any{"changeSource": "CRM_UI", "sourceId": "userId:215482", "propertyName": "lifecyclestage"},
				},
				{
					DeliveryID: "62515:2881779:1793434002", EventType: "contact.creation", OccurredAt: "2026-10-31T08:14:23Z",
					Hydrate: &Hydration{Provider: "hubspot", Object: "contact", ID: "1246966"},
					Fields:  map[string]any{"changeSource": "INTEGRATION", "sourceId": "1160452", "changeFlag": "CREATED", "attemptNumber": 1.0},
				},
				{
					DeliveryID: "62515:2881780:1793434003", EventType: "deal.propertyChange", OccurredAt: "2026-10-31T08:14:24Z",
					Hydrate: &Hydration{Provider: "hubspot", Object: "deal", ID: "98765"},
					Fields:  map[string]any{"changeSource": "API", "sourceId": "leadgate", "propertyValue": "closedwon"},
				},
			},
		},
		{
			name: "webflow form submission with case-insensitive keys", kind: "webflow", file: "webflow.json", contentType: jsonCT,
			want: []want{{
				DeliveryID: "6321a3b5e7f1d2a9c4b0e8f7", EventType: "form_submission", OccurredAt: "2026-10-31T08:14:22.512Z",
				Email: "zora@example.com", Phone: "555-867-5309", FirstName: "Zora", LastName: "Hurston", Company: "Eatonville Press",
				Fields: map[string]any{"message": "Interested in a demo"},
				Attribution: map[string]any{"utm_source": "google", "form_id": "65429eadebe8a9f3a30f62d0", "form_name": "Contact Us",
					"site_id": "65427cf400e02b306eaa049c", "page_path": "/contact"},
			}},
		},
		{
			name: "calendly invitee created", kind: "calendly", file: "calendly.json", contentType: jsonCT,
			want: []want{{
				DeliveryID: "invitee.created:https://api.calendly.com/scheduled_events/GBGBDCAADAEDCRZ2/invitees/AAAAAAAAAAAAAAAA",
				EventType:  "invitee.created", OccurredAt: "2026-10-31T08:14:22Z",
				Email: "katherine@example.com", Phone: "+1 757-555-0142", FirstName: "Katherine", LastName: "Johnson", Company: "NASA Langley",
				Fields: map[string]any{"what_would_you_like_to_discuss": "Orbital mechanics tooling", "meeting_name": "30 Minute Discovery Call",
					"meeting_start": "2026-11-03T15:00:00.000000Z", "rescheduled": false},
				Attribution: map[string]any{"utm_campaign": "webinar", "utm_source": "email"},
				NoFields:    []string{"utm_medium"},
			}},
		},
		{
			name: "retell outbound call analyzed", kind: "retell", file: "retell.json", contentType: jsonCT,
			want: []want{{
				DeliveryID: "Jabr9TXYYJHfvl6Syypi88rdAHYHmcq6:call_analyzed", EventType: "call_analyzed", OccurredAt: "2026-10-31T08:14:22Z",
				Email: "John.Smith@Example.com", Phone: "+14155550134", FirstName: "john", LastName: "smith",
				Fields: map[string]any{"phone_verified": true, "budget": "20 seats", "call_status": "ended",
					"disconnection_reason": "user_hangup", "duration_ms": 62000.0, "user_sentiment": "Positive"},
				Attribution: map[string]any{"agent_id": "oBeDLoLOeuAbiuaMFXRtDOLriTJ5tSxD", "utm_campaign": "reactivation"},
			}},
		},
		{
			name: "retell dial failed is not verified", kind: "retell", file: "retell-dialfailed.json", contentType: jsonCT,
			want: []want{{
				DeliveryID: "call_failed_1:call_ended", EventType: "call_ended", OccurredAt: "2026-10-31T08:13:20Z",
				Phone:  "+14155550177",
				Fields: map[string]any{"phone_verified": false, "disconnection_reason": "dial_failed"},
			}},
		},
		{
			name: "vapi end of call report", kind: "vapi", file: "vapi.json", contentType: jsonCT,
			want: []want{{
				DeliveryID: "c0ffee00-1234-4abc-9def-0123456789ab:end-of-call-report", EventType: "end-of-call-report", OccurredAt: "2026-10-31T08:14:22Z",
				Email: "lin@example.com", Phone: "+14155550134", FirstName: "Lin", LastName: "Manuel", Company: "Hamilton LLC",
				Fields: map[string]any{"phone_verified": true, "wants_demo": true, "ended_reason": "customer-ended-call",
					"duration_seconds": 187.4, "call_summary": "Booked a follow-up."},
				Attribution: map[string]any{"assistant_id": "asst_42", "phone_number_id": "pn_7"},
			}},
		},
		{
			name: "vapi status update keys on status", kind: "vapi", file: "vapi-status.json", contentType: jsonCT,
			want: []want{{
				DeliveryID: "c0ffee00-1234-4abc-9def-0123456789ab:status-update:in-progress", EventType: "status-update", OccurredAt: "2026-10-31T08:13:20Z",
				Phone: "+14155550134", FirstName: "Lin", LastName: "Manuel",
				Fields:   map[string]any{"call_status": "in-progress", "call_type": "outboundPhoneCall"},
				NoFields: []string{"phone_verified"},
			}},
		},
		{
			name: "twilio inbound sms form", kind: "twilio", file: "twilio-sms.txt", contentType: formCT,
			want: []want{{
				DeliveryID: "SM1f0e8ae6ade43cb3c0ce4525424e404f:received", EventType: "message.received",
				Phone:       "+14155550134",
				Fields:      map[string]any{"message_body": "Yes, I'm interested 👍", "status": "received"},
				Attribution: map[string]any{"tracking_number": "+14155550100"},
				NoFields:    []string{"phone_verified"},
			}},
		},
		{
			name: "twilio keys on MessageSid and status even with an idempotency header, no content type reads a form", kind: "twilio", file: "twilio-sms.txt",
			header: http.Header{"I-Twilio-Idempotency-Token": {"0f8b6c1e-retry-stable"}},
			want: []want{{
				DeliveryID: "SM1f0e8ae6ade43cb3c0ce4525424e404f:received", EventType: "message.received", Phone: "+14155550134",
			}},
		},
		{
			name: "twilio outbound call status callback", kind: "twilio", file: "twilio-call.txt", contentType: formCT + "; charset=utf-8",
			want: []want{{
				DeliveryID: "CA3f5a0b1c2d3e4f5a6b7c8d9e0f1a2b3c:completed", EventType: "call.completed", OccurredAt: "2026-10-31T08:14:22Z",
				Phone:       "+14155550134",
				Fields:      map[string]any{"phone_verified": true, "call_duration": "42", "direction": "outbound-api"},
				Attribution: map[string]any{"tracking_number": "+14155550100"},
			}},
		},
		{
			name: "gohighlevel contact create", kind: "gohighlevel", file: "gohighlevel.json", contentType: jsonCT,
			want: []want{{
				DeliveryID: "9a4f2b4c-6c1d-4d6b-9a53-3c4f8b8b7e11", EventType: "ContactCreate", OccurredAt: "2026-10-31T08:14:22Z",
				Email: "JohnDeo@gmail.com", Phone: "+919509597501", FirstName: "John", LastName: "Deo", Company: "Loram ipsum",
				Fields: map[string]any{"ghl_contact_id": "nmFmQEsNgz6AVpgLVUJ0", "location_id": "ve9EPM428h8vShlRW1KT",
					"BcdmQEsNgz6AVpgLVUJ0": "XYZ Corp", "source": "public api"},
				Attribution: map[string]any{"utmSource": "facebook", "utmCampaign": "spring"},
			}},
		},
		{
			name: "activecampaign nested form keys", kind: "activecampaign", file: "activecampaign.txt", contentType: formCT,
			want: []want{{
				DeliveryID: "subscribe:42:2026-10-31T03:14:22-05:00", EventType: "subscribe", OccurredAt: "2026-10-31T08:14:22Z",
				Email: "Test@Example.com", Phone: "+1 415 555 0134", FirstName: "Testy", LastName: "McTest", Company: "Testing Inc",
				Fields: map[string]any{"budget": "10k", "12": "Yes", "initiated_by": "admin", "initiated_from": "admin",
					"ac_contact_id": "42", "tags": "webinar, vip"},
			}},
		},
		{
			name: "instantly reply", kind: "instantly", file: "instantly.json", contentType: jsonCT,
			want: []want{{
				DeliveryID: "reply_received:0199a3c4-5d6e-7f80-9a1b-2c3d4e5f6a7b:2026-10-31T08:14:22.123Z", EventType: "reply_received", OccurredAt: "2026-10-31T08:14:22.123Z",
				Email: "prospect@example.io", FirstName: "Pat", LastName: "Prospect", Company: "Prospect Industries",
				Fields: map[string]any{"email_account": "sdr@ourco.example", "is_first": true},
				Attribution: map[string]any{"campaign_id": "0c2b4e6a-8c0e-4a2c-9e4a-6c8e0a2c4e6a", "campaign_name": "Q4 outbound",
					"step": 2.0, "variant": 1.0},
			}},
		},
		{
			name: "smartlead reply drops the secret", kind: "smartlead", file: "smartlead.json", contentType: jsonCT,
			want: []want{{
				DeliveryID: "EMAIL_REPLY:8f2b1e7c-3d4a-4b5c-9e8f-7a6b5c4d3e2f:<CAF=abc123@mail.example.net>", EventType: "EMAIL_REPLY",
				OccurredAt: "2026-10-31T08:14:22.618881Z",
				Email:      "reply.guy@example.net", FirstName: "Reply", LastName: "Guy",
				Fields:      map[string]any{"sl_email_lead_id": "2209144", "campaign_status": "ACTIVE"},
				Attribution: map[string]any{"campaign_id": 1180.0, "campaign_name": "Founders outreach", "sequence_number": 2.0},
				NoFields:    []string{"secret_key"},
			}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			items, err := Map(tt.kind, Overrides{}, tt.contentType, tt.header, fixture(t, tt.file))
			if err != nil {
				t.Fatalf("Map: %v", err)
			}
			checkItems(t, items, tt.want)
			for _, it := range items {
				if bytes.Contains(it.Raw, []byte("DO_NOT_LEAK")) || bytes.Contains(it.Raw, []byte("secret_key")) {
					t.Errorf("Raw leaks the secret: %s", it.Raw)
				}
				if !json.Valid(it.Raw) {
					t.Errorf("Raw is not valid JSON: %s", it.Raw)
				}
			}
		})
	}
}

func checkItems(t *testing.T, items []Item, wants []want) {
	t.Helper()
	if len(items) != len(wants) {
		t.Fatalf("got %d items, want %d: %+v", len(items), len(wants), items)
	}
	for i, w := range wants {
		it := items[i]
		occurred := ""
		if !it.OccurredAt.IsZero() {
			occurred = it.OccurredAt.Format(time.RFC3339Nano)
		}
		got := []string{it.DeliveryID, it.EventType, occurred, it.Email, it.Phone, it.FirstName, it.LastName, it.Company, it.TargetStage, it.CurrentStage, string(it.RuleOverrides)}
		exp := []string{w.DeliveryID, w.EventType, w.OccurredAt, w.Email, w.Phone, w.FirstName, w.LastName, w.Company, w.TargetStage, w.CurrentStage, w.RuleOverrides}
		names := []string{"DeliveryID", "EventType", "OccurredAt", "Email", "Phone", "FirstName", "LastName", "Company", "TargetStage", "CurrentStage", "RuleOverrides"}
		for j := range names {
			if got[j] != exp[j] {
				t.Errorf("item %d %s = %q, want %q", i, names[j], got[j], exp[j])
			}
		}
		if !reflect.DeepEqual(it.Hydrate, w.Hydrate) {
			t.Errorf("item %d Hydrate = %+v, want %+v", i, it.Hydrate, w.Hydrate)
		}
		if it.Fields == nil || it.Attribution == nil {
			t.Errorf("item %d has nil Fields or Attribution", i)
		}
		checkSubset(t, i, "Fields", it.Fields, w.Fields)
		checkSubset(t, i, "Attribution", it.Attribution, w.Attribution)
		for _, k := range w.NoFields {
			if v, ok := it.Fields[k]; ok {
				t.Errorf("item %d Fields[%q] = %v, want absent", i, k, v)
			}
			if v, ok := it.Attribution[k]; ok {
				t.Errorf("item %d Attribution[%q] = %v, want absent", i, k, v)
			}
		}
	}
}

func checkSubset(t *testing.T, i int, what string, got, want map[string]any) {
	t.Helper()
	for k, v := range want {
		if !reflect.DeepEqual(got[k], v) {
			t.Errorf("item %d %s[%q] = %#v, want %#v (all: %v)", i, what, k, got[k], v, got)
		}
	}
}

func TestMapMultiEventRaw(t *testing.T) {
	t.Parallel()
	items, err := Map("hubspot", Overrides{}, jsonCT, nil, fixture(t, "hubspot.json"))
	if err != nil {
		t.Fatalf("Map: %v", err)
	}
	for i, it := range items {
		var obj map[string]any
		if err := json.Unmarshal(it.Raw, &obj); err != nil {
			t.Fatalf("item %d Raw: %v", i, err)
		}
		if _, isBatch := obj["eventId"]; !isBatch || bytes.HasPrefix(it.Raw, []byte("[")) {
			t.Errorf("item %d Raw is not its own element: %s", i, it.Raw)
		}
	}
	single := `{"eventId":1,"portalId":2,"subscriptionId":3,"objectId":4,"subscriptionType":"contact.creation"}`
	items, err = Map("hubspot", Overrides{}, jsonCT, nil, []byte(single))
	if err != nil || len(items) != 1 || items[0].DeliveryID != "2:3:1" {
		t.Fatalf("single hubspot object: items=%+v err=%v", items, err)
	}
	items, err = Map("hubspot", Overrides{}, jsonCT, nil, []byte(`[]`))
	if err != nil || len(items) != 0 {
		t.Fatalf("empty hubspot batch: items=%+v err=%v", items, err)
	}
}

func TestMapOverrides(t *testing.T) {
	t.Parallel()
	body := []byte(`{"type":"lead","data":{"contact":{"mail":"x@example.com","tel":"+14155550134","given":"Ada","family":"L"},
		"org":{"name":"Engines"},"when":"1793434462000","stage":"SQL","ref":"r-1"},"email":"ignored@example.com",
		"meta":{"campaign":"c-9","score":7}}`)
	ov := Overrides{Paths: map[string]string{
		"email": "data.contact.mail", "phone": "data.contact.tel", "first_name": "data.contact.given",
		"last_name": "data.contact.family", "company": "data.org.name", "occurred_at": "data.when",
		"target_stage": "data.stage", "delivery_id": "data.ref", "event_type": "type",
		"fields.score": "meta.score", "attribution.campaign": "meta.campaign", "fields.missing": "nope.nothing",
	}}
	items, err := Map("token", ov, jsonCT, nil, body)
	if err != nil {
		t.Fatalf("Map: %v", err)
	}
	checkItems(t, items, []want{{
		DeliveryID: "r-1", EventType: "lead", OccurredAt: "2026-10-31T08:14:22Z",
		Email: "x@example.com", Phone: "+14155550134", FirstName: "Ada", LastName: "L", Company: "Engines", TargetStage: "SQL",
		Fields: map[string]any{"score": 7.0}, Attribution: map[string]any{"campaign": "c-9"}, NoFields: []string{"missing"},
	}})

	// Overrides evaluate per item: each Meta change reads its own value.
	fb, err := Map("facebook-leads", Overrides{Paths: map[string]string{"fields.form": "value.form_id"}}, jsonCT, nil, fixture(t, "facebook-leads.json"))
	if err != nil {
		t.Fatalf("Map facebook: %v", err)
	}
	if fb[0].Fields["form"] != "555555555555" || fb[2].Fields["form"] != "555555555556" {
		t.Errorf("per-item override: %v / %v", fb[0].Fields, fb[2].Fields)
	}

	// An override is authoritative: a path that finds nothing empties the field.
	items, err = Map("standard-webhooks", Overrides{Paths: map[string]string{"email": "contact.email"}}, jsonCT, nil, fixture(t, "standard-webhooks.json"))
	if err != nil || items[0].Email != "" {
		t.Errorf("missing override path: email=%q err=%v", items[0].Email, err)
	}
}

func TestOverridesValidate(t *testing.T) {
	t.Parallel()
	tooMany := map[string]string{}
	for i := range 65 {
		tooMany["fields.f"+strings.Repeat("x", i)] = "a"
	}
	tests := []struct {
		name    string
		paths   map[string]string
		wantErr string
	}{
		{"zero value", nil, ""},
		{"known keys", map[string]string{"email": "a.b", "fields.budget": "x", "attribution.utm_source": "q.utm", "delivery_id": "id"}, ""},
		{"unknown key", map[string]string{"emali": "a"}, "unknown override key"},
		{"empty path", map[string]string{"email": "  "}, "empty path"},
		{"empty custom name", map[string]string{"fields.": "a"}, "empty custom field name"},
		{"long path", map[string]string{"email": strings.Repeat("a", 513)}, "longer than"},
		{"control char", map[string]string{"email": "a\x00b"}, "invalid characters"},
		{"too many", tooMany, "at most 64"},
	}
	for _, tt := range tests {
		err := Overrides{Paths: tt.paths}.Validate()
		switch {
		case tt.wantErr == "" && err != nil:
			t.Errorf("%s: unexpected error %v", tt.name, err)
		case tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)):
			t.Errorf("%s: error %v, want containing %q", tt.name, err, tt.wantErr)
		}
	}
	if _, err := Map("token", Overrides{Paths: map[string]string{"bogus": "x"}}, jsonCT, nil, []byte(`{}`)); err == nil {
		t.Error("Map accepted invalid overrides")
	}
}

func TestMapMalformed(t *testing.T) {
	t.Parallel()
	deep := strings.Repeat(`{"a":`, 1000) + `1` + strings.Repeat(`}`, 1000)
	tests := []struct {
		name, kind, contentType, body, reason string
	}{
		{"invalid JSON", "standard-webhooks", jsonCT, `{"email":`, "invalid JSON"},
		{"trailing garbage", "token", jsonCT, `{"a":1} x`, "invalid JSON"},
		{"empty body", "token", jsonCT, ``, "empty body"},
		{"invalid UTF-8", "standard-webhooks", jsonCT, "{\"email\":\"a\xff@b.com\"}", "invalid UTF-8"},
		{"1000-deep nesting", "standard-webhooks", jsonCT, deep, "nesting deeper than 32 levels"},
		{"33-deep arrays", "hubspot", jsonCT, strings.Repeat("[", 33) + strings.Repeat("]", 33), "nesting deeper than 32 levels"},
		{"array for object kind", "stripe", jsonCT, `[{"id":"evt_1"}]`, "body must be a JSON object"},
		{"string top level", "token", jsonCT, `"hello"`, "body must be a JSON object"},
		{"number top level for hubspot", "hubspot", jsonCT, `42`, "body must be a JSON object or array"},
		{"form with bad escape", "twilio", formCT, "From=%zz", "form body does not parse"},
		{"form with invalid UTF-8", "activecampaign", formCT, "contact%5Bemail%5D=%ff", "invalid UTF-8"},
		{"form nesting too deep", "activecampaign", formCT, "a" + strings.Repeat("[b]", 40) + "=1", "nesting deeper than 32 levels"},
		{"JSON body sent as form kind without type", "twilio", "", `{"From":`, "invalid JSON"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			items, err := Map(tt.kind, Overrides{}, tt.contentType, nil, []byte(tt.body))
			var me *MalformedError
			if !errors.As(err, &me) {
				t.Fatalf("Map error = %v (items %v), want *MalformedError", err, items)
			}
			if !strings.Contains(me.Reason, tt.reason) {
				t.Errorf("Reason = %q, want containing %q", me.Reason, tt.reason)
			}
		})
	}
}

func TestMapDepthLimitBoundary(t *testing.T) {
	t.Parallel()
	ok := strings.Repeat(`{"a":`, 31) + `{"email":"x@example.com"}` + strings.Repeat(`}`, 31)
	if _, err := Map("token", Overrides{}, jsonCT, nil, []byte(ok)); err != nil {
		t.Errorf("32 levels rejected: %v", err)
	}
	// Brackets inside strings are not nesting.
	str := `{"note":"` + strings.Repeat("[{", 100) + `"}`
	if _, err := Map("token", Overrides{}, jsonCT, nil, []byte(str)); err != nil {
		t.Errorf("brackets in a string rejected: %v", err)
	}
}

func TestMapUnknownKind(t *testing.T) {
	t.Parallel()
	_, err := Map("carrier-pigeon", Overrides{}, jsonCT, nil, []byte(`{}`))
	if !errors.Is(err, ErrUnknownKind) {
		t.Errorf("err = %v, want ErrUnknownKind", err)
	}
}

func TestPresets(t *testing.T) {
	t.Parallel()
	got := Presets()
	want := []string{"activecampaign", "calendly", "crm-event", "facebook-leads", "gohighlevel", "hmac", "hubspot",
		"instantly", "retell", "smartlead", "standard-webhooks", "stripe", "tally", "token", "twilio", "typeform", "vapi", "webflow"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Presets() = %v, want %v", got, want)
	}
	// Every preset maps an empty object without error and without inventing an identity.
	for _, kind := range got {
		items, err := Map(kind, Overrides{}, jsonCT, nil, []byte(`{}`))
		if err != nil {
			t.Errorf("%s: Map({}) error %v", kind, err)
		}
		for _, it := range items {
			if it.Email != "" || it.Phone != "" || it.DeliveryID != "" {
				t.Errorf("%s: Map({}) invented %+v", kind, it)
			}
		}
	}
}

func TestFormDocument(t *testing.T) {
	t.Parallel()
	tests := []struct{ body, want string }{
		{"a=1&b=x+y", `{"a":"1","b":"x y"}`},
		{"contact[email]=a%40b.com&contact[fields][7]=z", `{"contact":{"email":"a@b.com","fields":{"7":"z"}}}`},
		{"tags[]=a&tags[]=b", `{"tags":["a","b"]}`},
		{"a=1&a=2", `{"a":"1"}`},
		{"a=1&a[b]=2", `{"a":"1","a[b]":"2"}`},
		{"x[y=1&[z]=2", `{"[z]":"2","x[y":"1"}`},
		{"", `{}`},
	}
	for _, tt := range tests {
		got, err := formDocument([]byte(tt.body))
		if err != nil || string(got) != tt.want {
			t.Errorf("formDocument(%q) = %s, %v; want %s", tt.body, got, err, tt.want)
		}
	}
}

func TestParseTime(t *testing.T) {
	t.Parallel()
	tests := []struct{ json, want string }{
		{`1793434462`, "2026-10-31T08:14:22Z"},
		{`1793434462000`, "2026-10-31T08:14:22Z"},
		{`"1793434462"`, "2026-10-31T08:14:22Z"},
		{`"2026-10-31T08:14:22Z"`, "2026-10-31T08:14:22Z"},
		{`"2026-10-31T10:14:22+02:00"`, "2026-10-31T08:14:22Z"},
		{`"2026-10-31 08:14:22"`, "2026-10-31T08:14:22Z"},
		{`"2026-10-31T08:14:22"`, "2026-10-31T08:14:22Z"},
		{`"Sat, 31 Oct 2026 08:14:22 +0000"`, "2026-10-31T08:14:22Z"},
		{`"2026-10-31"`, "2026-10-31T00:00:00Z"},
		{`"yesterday"`, ""},
		{`-5`, ""},
		{`null`, ""},
		{`1e300`, ""},
	}
	for _, tt := range tests {
		items, err := Map("token", Overrides{}, jsonCT, nil, []byte(`{"occurred_at":`+tt.json+`}`))
		if err != nil {
			t.Fatalf("%s: %v", tt.json, err)
		}
		got := ""
		if ts := items[0].OccurredAt; !ts.IsZero() {
			got = ts.Format(time.RFC3339Nano)
		}
		if got != tt.want {
			t.Errorf("occurred_at %s = %q, want %q", tt.json, got, tt.want)
		}
	}
}

func TestLabelRole(t *testing.T) {
	t.Parallel()
	tests := []struct {
		label string
		want  role
	}{
		{"Email", roleEmail}, {"E-mail address", roleEmail}, {"your_email", roleEmail},
		{"Phone Number", rolePhone}, {"mobilePhone", rolePhone}, {"Tel", rolePhone},
		{"First Name", roleFirstName}, {"firstName", roleFirstName}, {"first-name", roleFirstName},
		{"Last name", roleLastName}, {"Surname", roleLastName},
		{"Company name", roleCompany}, {"Organisation", roleCompany},
		{"Name", roleFullName}, {"Full name", roleFullName}, {"full_name", roleFullName},
		{"Username", roleOther}, {"Last contacted", roleOther}, {"Message", roleOther}, {"Budget", roleOther},
	}
	for _, tt := range tests {
		if got := labelRole(tt.label); got != tt.want {
			t.Errorf("labelRole(%q) = %d, want %d", tt.label, got, tt.want)
		}
	}
}

func BenchmarkMapGeneric(b *testing.B) {
	body := fixture(b, "standard-webhooks.json")
	header := http.Header{"Webhook-Id": {"msg_1"}}
	b.SetBytes(int64(len(body)))
	for b.Loop() {
		if _, err := Map("standard-webhooks", Overrides{}, jsonCT, header, body); err != nil {
			b.Fatal(err)
		}
	}
}

// The default mapping reads a payload's members the way a path lookup would: a name given twice counts
// by its first occurrence (even when that one is blank), an escaped name is its unescaped self, and a
// top-level attribution key fills in only what the attribution object left out.
func TestTheDefaultMappingReadsMembersAsAPathLookupWould(t *testing.T) {
	t.Parallel()
	body := []byte(`{"email":"","email":"second@example.com","email_address":"alt@example.com",
		"ph\u006fne":"+1 415 555 0134","first_name":"Ann","first_name":"Bea",
		"attribution":{"utm_source":"object"},"utm_source":"top","utm_medium":"","utm_medium":"cpc"}`)
	items, err := Map("token", Overrides{}, jsonCT, nil, body)
	if err != nil {
		t.Fatal(err)
	}
	checkItems(t, items, []want{{
		Email: "alt@example.com", Phone: "+1 415 555 0134", FirstName: "Ann",
		Attribution: map[string]any{"utm_source": "object", "utm_medium": "cpc"},
	}})
	if got := items[0].Attribution; len(got) != 2 {
		t.Errorf("attribution = %v, want utm_source from the object and utm_medium from its non-blank occurrence", got)
	}
}

package mapping

import (
	"net/http"
	"strconv"
	"testing"
)

// publishedExample is one provider's own published example payload (a file in
// testdata/published), with what it must map to.
type publishedExample struct {
	name, kind, file, contentType string
	header                        http.Header
	want                          []want
}

// PublishedExamples lists the providers' published example payloads. Each
// fixture is built from the example the provider publishes (the comment names
// where); values the example leaves null are filled the way the provider
// documents them.
func publishedExamples() []publishedExample {
	return []publishedExample{
		// Stripe: the Event object and Checkout Session object examples,
		// docs.stripe.com/api/events/object and /api/checkout/sessions/object.
		{name: "stripe", kind: "stripe", file: "stripe.json", contentType: jsonCT, want: []want{{
			DeliveryID: "evt_1NG8Du2eZvKYlo2CUI79vXWy", EventType: "checkout.session.completed", OccurredAt: "2023-06-06T22:19:30Z",
			Email: "jenny.rosen@example.com", Phone: "+14155550134", FirstName: "Jenny", LastName: "Rosen",
			Fields:      map[string]any{"amount": 2198.0, "currency": "usd", "payment_status": "paid", "stripe_customer": "cus_NffrFeUfNV2Hib"},
			Attribution: map[string]any{"utm_source": "newsletter"},
		}}},
		// Typeform: "Example webhook payload", typeform.com/developers/webhooks/example-payload/
		// (answers name their question by id and type only; refs come from definition.fields).
		{name: "typeform", kind: "typeform", file: "typeform.json", contentType: jsonCT, want: []want{{
			DeliveryID: "a3a12ec67a1365927098a606107fac15", EventType: "form_response", OccurredAt: "2018-01-18T18:17:02Z",
			Email: "laura@example.com", FirstName: "Laura",
			Fields: map[string]any{"readable_ref_long_text": "It's cold right now! I live in an older medium-sized city with a university. Geographically, the area is hilly.",
				"readable_ref_date": "2005-10-15", "readable_ref_picture_choice": []any{"London", "Sydney"}, "readable_ref_number1": 5.0,
				"readable_ref_legal": true, "readable_ref_multiple_choice": "London", "score": 9.0},
			Attribution: map[string]any{"user_id": "abc123456", "form_id": "lT4Z3j", "form_title": "Webhooks example"},
			NoFields:    []string{"what_is_your_first_name", "readable_ref_short_text", "readable_ref_email"},
		}}},
		// Meta Lead Ads: the leadgen sample notification of "Webhooks for Leadgen",
		// developers.facebook.com/docs/graph-api/webhooks/getting-started/webhooks-for-leadgen.
		{name: "meta lead ads", kind: "facebook-leads", file: "facebook-leads.json", contentType: jsonCT, want: []want{{
			DeliveryID: "444444444444", EventType: "leadgen", OccurredAt: "2019-01-10T18:07:38Z",
			Hydrate:     &Hydration{Provider: "meta", Object: "leadgen", ID: "444444444444"},
			Attribution: map[string]any{"ad_id": "444444444", "adgroup_id": "44444444444", "form_id": "444444444444", "page_id": "444444444444"},
		}}},
		// HubSpot: the example batch of "Webhooks API" (developers.hubspot.com/docs/api/webhooks).
		{name: "hubspot", kind: "hubspot", file: "hubspot.json", contentType: jsonCT, want: []want{
			{DeliveryID: "33:25:3816279340", EventType: "contact.propertyChange", OccurredAt: "2016-05-02T19:11:47.945Z", TargetStage: "subscriber",
				Hydrate: &Hydration{Provider: "hubspot", Object: "contact", ID: "1246965"},
				Fields:  map[string]any{"changeSource": "ACADEMY_COURSE_ENROLLMENT", "propertyName": "lifecyclestage", "attemptNumber": 0.0}},
			{DeliveryID: "33:22:3816279480", EventType: "contact.creation", OccurredAt: "2016-05-02T19:11:47.945Z",
				Hydrate: &Hydration{Provider: "hubspot", Object: "contact", ID: "1246978"},
				Fields:  map[string]any{"changeSource": "IMPORT"}},
		}},
		// Calendly: the invitee.created payload of "Webhook payload" (developer.calendly.com,
		// api-docs webhooks), v2: payload.event is the scheduled event's URI.
		{name: "calendly", kind: "calendly", file: "calendly.json", contentType: jsonCT, want: []want{{
			DeliveryID: "invitee.created:https://api.calendly.com/scheduled_events/GBGBDCAADAEDCRZ2/invitees/AAAAAAAAAAAAAAAA",
			EventType:  "invitee.created", OccurredAt: "2020-11-23T17:51:19Z",
			Email: "test@example.com", Phone: "+1 404-555-1234", FirstName: "John", LastName: "Doe", Company: "Acme Corp",
			Fields: map[string]any{"meeting_uri": "https://api.calendly.com/scheduled_events/GBGBDCAADAEDCRZ2",
				"what_would_you_like_to_discuss": "I'd like to discuss pricing", "rescheduled": false, "timezone": "America/New_York"},
			Attribution: map[string]any{"utm_campaign": "spring", "utm_source": "newsletter"},
		}}},
		// Tally: "Example webhook event", tally.so/help/webhooks (a MATRIX field
		// answers {row id: [column ids]}).
		{name: "tally", kind: "tally", file: "tally.json", contentType: jsonCT, want: []want{{
			DeliveryID: "a4cb511e-d513-4fa5-baee-b815d718dfd1", EventType: "FORM_RESPONSE", OccurredAt: "2023-06-28T15:00:21.889Z",
			Email: "alice@example.com", Phone: "+32 470 12 34 56", FirstName: "Alice",
			Fields:      map[string]any{"multiple_choice": []any{"Option 1"}, "matrix": map[string]any{"Row 1": []any{"Column 1"}, "Row 2": []any{"Column 2"}}},
			Attribution: map[string]any{"utm_source": "twitter", "form_id": "VwbNEw", "form_name": "Webhook payload"},
		}}},
		// Webflow: the form_submission example of "Working with webhooks"
		// (developers.webflow.com/data/reference/webhooks/events/form-submission).
		{name: "webflow", kind: "webflow", file: "webflow.json", contentType: jsonCT, want: []want{{
			DeliveryID: "6321ca84df3949bfc6752327", EventType: "form_submission", OccurredAt: "2022-09-14T12:35:16.117Z",
			Email: "zaphod@heartofgold.ai", Phone: "15550000000", FirstName: "Zaphod", LastName: "Beeblebrox",
			Attribution: map[string]any{"form_id": "65429eadebe8a9f3a30f62d0", "form_name": "Contact Us", "site_id": "65427cf400e02b306eaa049c", "page_path": "/contact-us"},
		}}},
		// Retell: the call_analyzed example of "Webhook overview", docs.retellai.com/features/webhook-overview.
		{name: "retell", kind: "retell", file: "retell.json", contentType: jsonCT, want: []want{{
			DeliveryID: "Jabr9TXYYJHfvl6Syypi88rdAHYHmcq6:call_analyzed", EventType: "call_analyzed", OccurredAt: "2024-05-02T00:08:11.736Z",
			Email: "john.doe@example.com", Phone: "+12137771234", FirstName: "John", LastName: "Doe",
			Fields: map[string]any{"user_sentiment": "Positive", "disconnection_reason": "user_hangup"},
		}}},
		// Twilio: the incoming-message parameters of "TwiML for Programmable
		// Messaging" (twilio.com/docs/messaging/guides/webhook-request).
		{name: "twilio", kind: "twilio", file: "twilio-sms.txt", contentType: formCT, want: []want{{
			DeliveryID: "SMaaaabbbbccccddddeeeeffff00001111:received", EventType: "message.received", Phone: "+14155552671",
			Fields: map[string]any{"message_body": "Hello", "status": "received"}, Attribution: map[string]any{"tracking_number": "+15005550006"},
		}}},
		{name: "twilio with an idempotency token keys the same", kind: "twilio", file: "twilio-sms.txt", contentType: formCT,
			header: http.Header{"I-Twilio-Idempotency-Token": {"3f1e2d3c-retry"}}, want: []want{{
				DeliveryID: "SMaaaabbbbccccddddeeeeffff00001111:received", EventType: "message.received", Phone: "+14155552671",
			}}},
		// Standard Webhooks: the spec's example payload (standard-webhooks.md,
		// "Payload structure"), its data carrying the contact.
		{name: "standard webhooks", kind: "standard-webhooks", file: "standard-webhooks.json", contentType: jsonCT,
			header: http.Header{"Webhook-Id": {"msg_2KWPBgLlAfxdpx2AI54pPJ85f4W"}}, want: []want{{
				DeliveryID: "msg_2KWPBgLlAfxdpx2AI54pPJ85f4W", EventType: "contact.created", OccurredAt: "2022-11-03T20:26:10.344522Z",
				Email: "example@example.com", FirstName: "Example", LastName: "Person",
			}}},
		// ActiveCampaign: the contact_tag_added sample of "Webhooks"
		// (developers.activecampaign.com/page/webhooks), form-encoded.
		{name: "activecampaign tag added", kind: "activecampaign", file: "activecampaign-tag-added.txt", contentType: formCT, want: []want{{
			DeliveryID: "contact_tag_added:8:2013-01-01 12:00:00", EventType: "contact_tag_added", OccurredAt: "2013-01-01T12:00:00Z",
			Email: "test@test.com", FirstName: "Test", LastName: "Test", Company: "Test Org",
			Fields: map[string]any{"tag": "vip customer", "ac_contact_id": "8", "initiated_by": "admin"},
		}}},
		// HighLevel: the ContactCreate example of "Webhook Events" (GoHighLevel/highlevel-api-docs,
		// docs/webhook events/ContactCreate.md, marketplace.gohighlevel.com/docs/webhook/ContactCreate),
		// with the timestamp and webhookId every delivery carries per "Webhook Authentication Guide"
		// (docs/oauth/WebhookAuthentication.md; its example values).
		{name: "gohighlevel contact create", kind: "gohighlevel", file: "gohighlevel-contact-create.json", contentType: jsonCT, want: []want{{
			DeliveryID: "abc123xyz", EventType: "ContactCreate", OccurredAt: "2025-01-28T14:35:00Z",
			Email: "JohnDeo@gmail.comm", Phone: "+919509597501", FirstName: "John", LastName: "Deo", Company: "Loram ipsum",
			Fields: map[string]any{"ghl_contact_id": "nmFmQEsNgz6AVpgLVUJ0", "location_id": "ve9EPM428h8vShlRW1KT",
				"BcdmQEsNgz6AVpgLVUJ0": "XYZ Corp", "source": "xyz form", "dnd": true,
				"tags": []any{"id magna sed Lorem", "Duis dolor commodo aliqua"}},
		}}},
		// HighLevel: the ContactUpdate example (docs/webhook events/ContactUpdate.md), as published
		// (no timestamp): its dateAdded is when the contact was created, not when it changed.
		{name: "gohighlevel contact update", kind: "gohighlevel", file: "gohighlevel-contact-update.json", contentType: jsonCT, want: []want{{
			EventType: "ContactUpdate", Email: "JohnDeo@gmail.comm", Phone: "+919509597501", FirstName: "John", LastName: "Deo",
			Company: "Loram ipsum", Fields: map[string]any{"ghl_contact_id": "nmFmQEsNgz6AVpgLVUJ0"},
		}}},
		// HighLevel: the OpportunityCreate example (docs/webhook events/OpportunityCreate.md): name is
		// the opportunity's title and id the opportunity; the lead is contactId.
		{name: "gohighlevel opportunity create", kind: "gohighlevel", file: "gohighlevel-opportunity-create.json", contentType: jsonCT, want: []want{{
			EventType: "OpportunityCreate", OccurredAt: "2021-11-26T12:41:02.193Z",
			Fields: map[string]any{"ghl_contact_id": "cJAWDskpkJHbRbhAT7bs", "ghl_object_id": "wWhVuzqpRuOA1ZVWi4FC",
				"opportunity_name": "Loram ipsu", "opportunity_status": "open", "monetary_value": 40.0,
				"pipeline_id": "VDm7RPYC2GLUvdpKmBfC", "pipeline_stage_id": "e93ba61a-53b3-45e7-985a-c7732dbcdb69"},
		}}},
		// HighLevel: the AppointmentCreate example (docs/webhook events/AppointmentCreate.md): the
		// contact is appointment.contactId.
		{name: "gohighlevel appointment create", kind: "gohighlevel", file: "gohighlevel-appointment-create.json", contentType: jsonCT, want: []want{{
			EventType: "AppointmentCreate", OccurredAt: "2023-09-25T10:30:00Z",
			Fields: map[string]any{"ghl_contact_id": "9NkT25Vor1v4aQatFsv2", "ghl_object_id": "0007BWpSzSwfiuSl0tR2",
				"appointment_title": "Appointment with GHL Dev team", "appointment_status": "confirmed",
				"appointment_start": "2023-09-25T16:00:00+05:30", "source": "booking_widget", "location_id": "0007BWpSzSwfiuSl0tR2"},
		}}},
		// Vapi: the end-of-call-report of "Server events" (docs.vapi.ai/server-url/events; VapiAI/docs
		// fern/server-url/events.mdx) with the members its schema documents (ServerMessageEndOfCallReport
		// in fern/apis/api/openapi.json: timestamp in ms, startedAt, endedAt, customer, call, analysis)
		// and the structured outputs of "Structured outputs quickstart" (fern/assistants/
		// structured-outputs-quickstart.mdx), which Vapi recommends over analysis.structuredData. The
		// report has no duration member: a connected call shows in startedAt/endedAt.
		{name: "vapi end-of-call-report", kind: "vapi", file: "vapi-end-of-call-report.json", contentType: jsonCT, want: []want{{
			DeliveryID: "7c7a3c3e-4d2f-4f8e-9c55-2a1f3b8e9d01:end-of-call-report", EventType: "end-of-call-report", OccurredAt: "2024-05-02T00:08:11.736Z",
			Phone: "+14155550134", Email: "john@example.com", FirstName: "John", LastName: "Smith",
			Fields: map[string]any{"phone_verified": true, "ended_reason": "hangup", "duration_seconds": 176.592, "call_type": "inboundPhoneCall",
				"customer_phone": "+1234567890", "issue_priority": "urgent", "follow_up_required": true, "satisfaction_score": 8.0,
				"call_summary": "The caller could not log in and asked for help; a ticket was opened."},
			Attribution: map[string]any{"assistant_id": "5b0a4ba7-6b6d-4c39-8d42-2f7f2f6f1e10", "phone_number_id": "9a8b7c6d-5e4f-4a3b-8c2d-1e0f9a8b7c6d"},
		}}},
		// Instantly: the event schema of "Webhook events" (developer.instantly.ai/guides/webhook-events),
		// filled in for a reply_received, with lead data merged in as the extra keys it documents.
		// The same payload a second later is another event (another reply to the same email).
		{name: "instantly reply received", kind: "instantly", file: "instantly-reply-received.json", contentType: jsonCT, want: []want{{
			DeliveryID: "reply_received:0196d1a2-7b3c-7e4f-8a9b-0c1d2e3f4a5b:2025-06-03T14:21:07.512Z", EventType: "reply_received",
			OccurredAt: "2025-06-03T14:21:07.512Z", Email: "dana@example.com", Phone: "+14155550188", FirstName: "Dana", LastName: "Lee",
			Company: "Lee Analytics",
			Fields: map[string]any{"email_account": "alex@outreach.example.com", "is_first": true, "reply_text_snippet": "Yes, Tuesday works",
				"jobTitle": "Founder", "personalization": "Saw your talk at the data summit", "website": "lee-analytics.example"},
			Attribution: map[string]any{"campaign_id": "3f2e1d0c-9b8a-4c7d-8e6f-5a4b3c2d1e0f", "campaign_name": "Founders outreach", "step": 1.0, "variant": 2.0},
			NoFields:    []string{"email_html", "reply_html", "timestamp", "event_type"},
		}}},
		// Smartlead: the EMAIL_REPLY "Response Structure" (help.smartlead.ai/Threaded-Replies-
		// ff92a607c93645b7b1568d8219218423), non-deprecated members filled; the example's own addresses
		// are obfuscated on the page, so they are example.com ones here.
		{name: "smartlead email reply", kind: "smartlead", file: "smartlead-email-reply.json", contentType: jsonCT, want: []want{{
			DeliveryID: "EMAIL_REPLY:7b1f6c2e-3a4d-4e5f-9a8b-1c2d3e4f5a6b:<reply-8c2d@mail.example.com>", EventType: "EMAIL_REPLY",
			OccurredAt: "2023-09-25T17:31:11.618881Z", Email: "david.carroll@example.com", FirstName: "David", LastName: "Carroll",
			Fields:      map[string]any{"sl_email_lead_id": 2145236541.0, "campaign_status": "COMPLETED", "reply_text": "Sounds interesting, tell me more"},
			Attribution: map[string]any{"campaign_id": 111.0, "campaign_name": "OR Tracker", "sequence_number": 1.0},
			NoFields:    []string{"secret_key"},
		}}},
		// Smartlead: LEAD_CATEGORY_UPDATED, its "Response Structure" with the lead_data values it shows
		// (help.smartlead.ai/Lead-Category-Updated-22cab06ce4a0499ca417916cececa62c). A lead moves through
		// several categories under one lead_id: the new category and the event's time are in the key.
		{name: "smartlead lead category updated", kind: "smartlead", file: "smartlead-lead-category-updated.json", contentType: jsonCT, want: []want{{
			DeliveryID: "LEAD_CATEGORY_UPDATED:2145236542:1:2023-09-26T11:16:24.671Z", EventType: "LEAD_CATEGORY_UPDATED",
			OccurredAt: "2023-09-26T11:16:24.671Z", Email: "ramesh.kumar@example.com", Phone: "23454212", FirstName: "Ramesh", LastName: "Kumar",
			Company: "Smartlead",
			Fields: map[string]any{"lead_category": "Interested", "first_line": "Super massive black hole", "website": "smartlead.ai",
				"linkedin_profile": "linkedin.com"},
			NoFields: []string{"secret_key"},
		}}},
		// Smartlead: the EMAIL_SENT "Payload Example" of "Webhook Events" (api.smartlead.ai/api-reference/
		// webhooks/events): no stats id, so the message id keys it.
		{name: "smartlead email sent", kind: "smartlead", file: "smartlead-email-sent.json", contentType: jsonCT, want: []want{{
			DeliveryID: "EMAIL_SENT:abc123def456", EventType: "EMAIL_SENT", OccurredAt: "2025-01-15T09:00:00Z",
			Email: "lead@example.com", FirstName: "John", LastName: "Doe",
			Attribution: map[string]any{"campaign_id": 123.0, "campaign_name": "Q1 Outreach", "sequence_number": 1.0},
		}}},
		// Smartlead: the same page's earlier {"event","lead_id","lead"} EMAIL_SENT example: every email
		// sent to lead 789 has its lead id, so the event's time is in the key.
		{name: "smartlead email sent, lead shape", kind: "smartlead", file: "smartlead-email-sent-lead.json", contentType: jsonCT, want: []want{{
			DeliveryID: "EMAIL_SENT:789:2024-11-25T09:00:00Z", EventType: "EMAIL_SENT", OccurredAt: "2024-11-25T09:00:00Z",
			Email: "lead@example.com", FirstName: "John", LastName: "Doe", Company: "Acme Corp",
		}}},
	}
}

func TestMapPublishedExamples(t *testing.T) {
	t.Parallel()
	for _, ex := range publishedExamples() {
		t.Run(ex.name, func(t *testing.T) {
			t.Parallel()
			items, err := Map(ex.kind, Overrides{}, ex.contentType, ex.header, fixture(t, "published/"+ex.file))
			if err != nil {
				t.Fatalf("Map: %v", err)
			}
			checkItems(t, items, ex.want)
		})
	}
}

// TestVapiMessagesSentManyTimesPerCallKeyOnTheirTimestamp: transcripts ("Server
// events", docs.vapi.ai/server-url/events) come many times per call, so two of
// them are two events, while the same message sent again is one.
func TestVapiMessagesSentManyTimesPerCallKeyOnTheirTimestamp(t *testing.T) {
	t.Parallel()
	transcript := func(ts int64, words string) []byte {
		return []byte(`{"message":{"type":"transcript","role":"user","transcriptType":"partial","transcript":"` + words +
			`","timestamp":` + strconv.FormatInt(ts, 10) + `,"call":{"id":"7c7a3c3e","customer":{"number":"+14155550134"}}}}`)
	}
	key := func(body []byte) string {
		items, err := Map("vapi", Overrides{}, jsonCT, nil, body)
		if err != nil || len(items) != 1 {
			t.Fatalf("Map: %v, %d items", err, len(items))
		}
		return items[0].DeliveryID
	}
	first, second := key(transcript(1714608491736, "I'd like to book...")), key(transcript(1714608493120, "a demo"))
	if first == second {
		t.Fatalf("two transcripts of one call share the key %q", first)
	}
	if again := key(transcript(1714608491736, "I'd like to book...")); again != first {
		t.Fatalf("the same transcript sent again keys %q, first %q", again, first)
	}
	if first != "7c7a3c3e:transcript:1714608491736" {
		t.Fatalf("key %q, want call id, type and timestamp", first)
	}
}

package demo

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/url"
	"time"
)

// delivery is one webhook to send: body, content type and the delivery id a
// retry must repeat.
type delivery struct {
	role        string
	body        []byte
	contentType string
	deliveryID  string
}

func jsonDelivery(role, id string, v any) delivery {
	b, _ := json.Marshal(v)
	return delivery{role: role, body: b, contentType: "application/json", deliveryID: id}
}

func formDelivery(p *person, rng *rand.Rand, eventType, stage string, at time.Time) delivery {
	body := map[string]any{"event_type": eventType, "occurred_at": at.UTC().Format(time.RFC3339), "email": p.emailForm(rng),
		"first_name": p.first, "last_name": p.last, "company": p.company,
		"attribution": map[string]string{"utm_source": []string{"google", "linkedin", "newsletter"}[rng.IntN(3)], "utm_medium": "cpc"},
		"fields":      map[string]string{"budget": []string{"<10k", "10k-50k", "50k+"}[rng.IntN(3)]}}
	if rng.IntN(2) == 0 {
		body["phone"] = p.phoneForm(rng)
	}
	if stage != "" {
		body["target_stage"] = stage
	}
	return jsonDelivery("form", fmt.Sprintf("msg_%d_%d", at.UnixNano(), rng.IntN(1e6)), body)
}

func typeformDelivery(p *person, rng *rand.Rand, at time.Time) delivery {
	token := fmt.Sprintf("%x", rng.Uint64())
	field := func(ref, typ string) map[string]string { return map[string]string{"ref": ref, "type": typ} }
	return jsonDelivery("typeform", token, map[string]any{
		"event_id": fmt.Sprintf("tf_%d", at.UnixNano()), "event_type": "form_response",
		"form_response": map[string]any{
			"form_id": "demoForm", "token": token, "submitted_at": at.UTC().Format(time.RFC3339),
			"hidden": map[string]string{"utm_source": "typeform", "utm_campaign": "q4-demo"},
			"answers": []map[string]any{
				{"type": "text", "text": p.first, "field": field("first_name", "short_text")},
				{"type": "text", "text": p.last, "field": field("last_name", "short_text")},
				{"type": "email", "email": p.emailForm(rng), "field": field("work_email", "email")},
				{"type": "phone_number", "phone_number": p.phone, "field": field("phone", "phone_number")},
				{"type": "text", "text": p.company, "field": field("company", "short_text")},
			},
		}})
}

func facebookDelivery(p *person, at time.Time) delivery {
	return jsonDelivery("facebook", p.leadgenID, map[string]any{"object": "page", "entry": []map[string]any{{
		"id": "1531253811", "time": at.Unix(),
		"changes": []map[string]any{{"field": "leadgen", "value": map[string]any{
			"leadgen_id": p.leadgenID, "page_id": "1531253811", "form_id": "5555", "ad_id": "7777", "created_time": at.Unix()}}},
	}}})
}

func emailReplyDelivery(p *person, rng *rand.Rand, at time.Time) delivery {
	id := fmt.Sprintf("em_%x", rng.Uint64())
	return jsonDelivery("email", id, map[string]any{"timestamp": at.UTC().Format(time.RFC3339Nano), "event_type": "reply_received",
		"campaign_id": "camp-q4", "campaign_name": "Q4 outbound", "lead_email": p.emailForm(rng), "email_id": id,
		"reply_text_snippet": "Sounds interesting, tell me more", "firstName": p.first, "lastName": p.last, "companyName": p.company})
}

func voiceDelivery(p *person, rng *rand.Rand, at time.Time) delivery {
	id := fmt.Sprintf("call_%x", rng.Uint64())
	start := at.Add(-90 * time.Second)
	return jsonDelivery("voice", id, map[string]any{"event": "call_analyzed", "call": map[string]any{
		"call_type": "phone_call", "from_number": "+12137771234", "to_number": p.phoneForm(rng), "direction": "outbound",
		"call_id": id, "call_status": "ended", "start_timestamp": start.UnixMilli(), "end_timestamp": at.UnixMilli(),
		"duration_ms": 90000, "disconnection_reason": "user_hangup",
		"call_analysis": map[string]any{"call_successful": true, "call_summary": "Qualified: budget approved, wants a proposal.",
			"custom_analysis_data": map[string]string{"email": p.email, "budget": "approved"}},
	}})
}

// crmEchoDelivery is the CRM's automation firing a webhook about the change
// leadgate itself just wrote: it carries the loop-breaker flag.
func crmEchoDelivery(p *person, stage string, at time.Time) delivery {
	v := url.Values{}
	v.Set("type", "contact_update")
	v.Set("date_time", at.UTC().Format(time.RFC3339))
	v.Set("initiated_by", "automation")
	v.Set("contact[id]", fmt.Sprint(len(p.email)*7919))
	v.Set("contact[email]", p.email)
	v.Set("contact[first_name]", p.first)
	v.Set("contact[fields][stage]", stage)
	v.Set("contact[fields][last_automation_source]", "leadgate")
	v.Set("contact[fields][sync_timestamp]", at.UTC().Format(time.RFC3339))
	return delivery{role: "crm", body: []byte(v.Encode()), contentType: "application/x-www-form-urlencoded"}
}

// junkDelivery is a submission without any usable identity (a bot, a test).
func junkDelivery(rng *rand.Rand, at time.Time) delivery {
	return jsonDelivery("form", fmt.Sprintf("msg_junk_%d", at.UnixNano()), map[string]any{"event_type": "form_submitted",
		"occurred_at": at.UTC().Format(time.RFC3339), "email": "not-an-email", "phone": "12", "first_name": "asdf"})
}

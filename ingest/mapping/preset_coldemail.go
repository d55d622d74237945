package mapping

import (
	"strings"

	"github.com/tidwall/gjson"
)

// instantlyKnown are the members of Instantly's documented event schema; every other top-level key
// is lead data Instantly merges in from the workspace ("additional lead data fields … as extra keys").
var instantlyKnown = map[string]bool{"timestamp": true, "event_type": true, "workspace": true, "campaign_id": true,
	"campaign_name": true, "lead_email": true, "email_account": true, "unibox_url": true, "step": true, "variant": true,
	"is_first": true, "email_id": true, "email_subject": true, "email_text": true, "email_html": true,
	"reply_text_snippet": true, "reply_subject": true, "reply_text": true, "reply_html": true,
	"email": true, "firstName": true, "first_name": true, "lastName": true, "last_name": true,
	"companyName": true, "company_name": true, "phone": true, "website": true}

// mapInstantly maps Instantly events ({"event_type","timestamp","lead_email","campaign_id",
// "campaign_name","email_account","step","variant","email_id",…, plus the lead's own fields}).
// Instantly sends no delivery id. email_id names the campaign email an event is about, which every
// open of it and every reply to it share, so the event's own timestamp is part of the key:
// event_type:email_id:timestamp, else event_type:lead_email:campaign_id:timestamp.
func mapInstantly(p payload) []Item {
	doc := p.doc
	it := newItem()
	it.EventType = text(doc.Get("event_type"))
	it.OccurredAt = parseTime(doc.Get("timestamp"))
	it.Email = firstText(doc.Get("lead_email"), doc.Get("email"))
	ts := text(doc.Get("timestamp"))
	if emailID := text(doc.Get("email_id")); emailID != "" {
		it.DeliveryID = joinID(it.EventType, emailID, ts)
	} else {
		it.DeliveryID = joinID(it.EventType, it.Email, text(doc.Get("campaign_id")), ts)
	}
	it.FirstName = firstText(doc.Get("firstName"), doc.Get("first_name"))
	it.LastName = firstText(doc.Get("lastName"), doc.Get("last_name"))
	it.Company = firstText(doc.Get("companyName"), doc.Get("company_name"))
	it.Phone = text(doc.Get("phone"))
	for _, k := range []string{"campaign_id", "campaign_name", "step", "variant", "workspace"} {
		putValue(it.Attribution, k, doc.Get(k))
	}
	for _, k := range []string{"email_account", "email_id", "is_first", "unibox_url", "reply_subject", "reply_text_snippet", "website"} {
		putValue(it.Fields, k, doc.Get(k))
	}
	doc.ForEach(func(k, v gjson.Result) bool {
		key := k.String()
		if instantlyKnown[key] || isSecretKey(key) {
			return true
		}
		if isAttributionKey(key) {
			putValue(it.Attribution, strings.ToLower(key), v)
		} else if !assignByRole(&it, key, v) {
			putValue(it.Fields, key, v)
		}
		return true
	})
	return []Item{it}
}

// mapSmartlead maps Smartlead events ({"event_type","event_timestamp","stats_id","sl_lead_email",
// "to_email","to_name","campaign_id","sent_message":{"message_id"},"reply_message":{"message_id"},
// "lead_data":{…},"secret_key",…} and the {"event","timestamp","lead_id","lead":{…}} shape of the API
// reference). The delivery id is event_type:stats_id (plus the reply's message id for replies, which
// share the thread's stats), else event_type:<message id>, else event_type:lead_id:<new category>:time —
// a lead's id is the same for every email sent to it and every category it moves through, so the event's
// own time keeps those apart — else event_type:email:time. secret_key authenticates the sender and is
// removed from Raw and Fields by Map.
func mapSmartlead(p payload) []Item {
	doc := p.doc
	lead := doc.Get("lead")
	if !lead.IsObject() {
		lead = doc.Get("lead_data")
	}
	it := newItem()
	it.EventType = firstText(doc.Get("event_type"), doc.Get("event"))
	occurred := firstPresent(doc, "event_timestamp", "timestamp", "time_replied", "time_sent", "time_opened",
		"time_clicked", "time_bounced", "created_at")
	it.OccurredAt = parseTime(occurred)
	it.Email = firstText(doc.Get("sl_lead_email"), lead.Get("email"), doc.Get("to_email"), doc.Get("lead_email"))
	replyID := firstText(doc.Get("reply_message.message_id"), doc.Get("reply.message_id"))
	messageID := firstText(doc.Get("reply_message.message_id"), doc.Get("sent_message.message_id"), doc.Get("message_id"))
	leadID := firstText(doc.Get("lead_id"), doc.Get("sl_email_lead_id"), lead.Get("id"))
	switch statsID := text(doc.Get("stats_id")); {
	case statsID != "":
		it.DeliveryID = joinID(it.EventType, statsID)
		if replyID != "" && it.DeliveryID != "" {
			it.DeliveryID += ":" + replyID
		}
	case messageID != "":
		it.DeliveryID = joinID(it.EventType, messageID)
	case leadID != "":
		category := firstText(doc.Get("lead_category.new_id"), doc.Get("lead_category_id"), doc.Get("category"))
		if category != "" {
			it.DeliveryID = joinID(it.EventType, leadID, category, text(occurred))
		} else {
			it.DeliveryID = joinID(it.EventType, leadID, text(occurred))
		}
	default:
		it.DeliveryID = joinID(it.EventType, it.Email, text(occurred))
	}
	it.FirstName = text(lead.Get("first_name"))
	it.LastName = text(lead.Get("last_name"))
	fillName(&it, firstText(doc.Get("to_name"), doc.Get("lead_name")))
	it.Company = firstText(lead.Get("company_name"), doc.Get("company_name"))
	it.Phone = firstText(lead.Get("phone_number"), lead.Get("phone"))
	for _, k := range []string{"campaign_id", "campaign_name", "sequence_number"} {
		putValue(it.Attribution, k, doc.Get(k))
	}
	putValue(it.Fields, "sl_email_lead_id", doc.Get("sl_email_lead_id"))
	putValue(it.Fields, "stats_id", doc.Get("stats_id"))
	putValue(it.Fields, "campaign_status", doc.Get("campaign_status"))
	putValue(it.Fields, "lead_category", firstPresent(doc, "lead_category.new_name", "category"))
	putValue(it.Fields, "app_url", doc.Get("app_url"))
	putValue(it.Fields, "reply_text", firstPresent(doc, "reply_message.text", "preview_text"))
	for _, k := range []string{"website", "linkedin_profile", "location", "company_url"} {
		putValue(it.Fields, k, lead.Get(k))
	}
	lead.Get("custom_fields").ForEach(func(k, v gjson.Result) bool {
		putValue(it.Fields, k.String(), v)
		return true
	})
	return []Item{it}
}

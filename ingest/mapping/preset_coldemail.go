package mapping

import "github.com/tidwall/gjson"

// mapInstantly maps Instantly events ({"event_type","timestamp","lead_email","campaign_id",
// "campaign_name","email_account","step","variant","email_id",…}). Instantly sends no delivery id;
// event_type:email_id identifies the event, else event_type:lead_email:campaign_id:timestamp.
func mapInstantly(p payload) []Item {
	doc := p.doc
	it := newItem()
	it.EventType = text(doc.Get("event_type"))
	it.OccurredAt = parseTime(doc.Get("timestamp"))
	it.Email = firstText(doc.Get("lead_email"), doc.Get("email"))
	it.DeliveryID = joinID(it.EventType, text(doc.Get("email_id")))
	if it.DeliveryID == "" {
		it.DeliveryID = joinID(it.EventType, it.Email, text(doc.Get("campaign_id")), text(doc.Get("timestamp")))
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
	return []Item{it}
}

// mapSmartlead maps Smartlead events ({"event_type","event_timestamp","stats_id","sl_lead_email",
// "to_email","to_name","campaign_id","reply_message":{"message_id"},"secret_key",…} and the newer
// {"event","timestamp","lead":{…}} shape). event_type:stats_id (plus the reply's message id for
// replies, which share the thread's stats) is the delivery id. secret_key authenticates the sender and
// is removed from Raw and Fields by Map.
func mapSmartlead(p payload) []Item {
	doc := p.doc
	lead := doc.Get("lead")
	it := newItem()
	it.EventType = firstText(doc.Get("event_type"), doc.Get("event"))
	it.OccurredAt = parseTime(firstPresent(doc, "event_timestamp", "timestamp", "time_replied", "time_sent"))
	statsID := firstText(doc.Get("stats_id"), doc.Get("lead_id"))
	it.DeliveryID = joinID(it.EventType, statsID)
	if replyID := firstText(doc.Get("reply_message.message_id"), doc.Get("reply.message_id")); replyID != "" && it.DeliveryID != "" {
		it.DeliveryID += ":" + replyID
	}
	it.Email = firstText(doc.Get("sl_lead_email"), lead.Get("email"), doc.Get("lead_email"), doc.Get("to_email"))
	it.FirstName = text(lead.Get("first_name"))
	it.LastName = text(lead.Get("last_name"))
	fillName(&it, text(doc.Get("to_name")))
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
	lead.Get("custom_fields").ForEach(func(k, v gjson.Result) bool {
		putValue(it.Fields, k.String(), v)
		return true
	})
	return []Item{it}
}

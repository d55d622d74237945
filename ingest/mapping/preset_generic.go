package mapping

import (
	"cmp"

	"github.com/tidwall/gjson"
)

// genericDeliveryHeaders are request headers that carry a sender's stable delivery id for the generic
// kinds, best first.
var genericDeliveryHeaders = []string{"Idempotency-Key", "X-GitHub-Delivery"}

// mapStandardWebhooks maps the CONTRACT payload; the delivery id is the signed webhook-id header
// (svix-id for unbranded Svix senders), which the spec keeps identical across retries.
func mapStandardWebhooks(p payload) []Item {
	it := genericItem(p.doc)
	if data := p.doc.Get("data"); data.IsObject() && it.Email == "" && it.Phone == "" {
		// The spec's envelope: {"type","timestamp","data":{…}} carries the lead in data.
		inner := genericItem(data)
		inner.EventType = cmp.Or(it.EventType, inner.EventType)
		if !it.OccurredAt.IsZero() {
			inner.OccurredAt = it.OccurredAt
		}
		for k, v := range it.Attribution {
			inner.Attribution[k] = v
		}
		it = inner
	}
	for _, h := range []string{"webhook-id", "svix-id"} {
		if id := p.header.Get(h); id != "" {
			it.DeliveryID = id
			return []Item{it}
		}
	}
	it.DeliveryID = genericDeliveryID(p)
	return []Item{it}
}

// mapGenericBody maps the CONTRACT payload for the hmac and token kinds.
func mapGenericBody(p payload) []Item {
	it := genericItem(p.doc)
	it.DeliveryID = genericDeliveryID(p)
	return []Item{it}
}

func genericDeliveryID(p payload) string {
	for _, h := range genericDeliveryHeaders {
		if id := p.header.Get(h); id != "" {
			return id
		}
	}
	return firstText(p.doc.Get("event_id"), p.doc.Get("id"))
}

// genericItem reads CONTRACT.md's default payload:
//
//	{"event_type","occurred_at","email","phone","first_name","last_name","company","target_stage",
//	 "fields":{},"attribution":{}}
//
// and the common variants senders use: name/full_name split into first/last, camelCase names,
// top-level utm_* and click ids as attribution, top-level phone_verified and consent as fields.
func genericItem(doc gjson.Result) Item {
	it := newItem()
	it.EventType = firstText(doc.Get("event_type"), doc.Get("eventType"), doc.Get("event"), doc.Get("type"))
	it.OccurredAt = parseTime(firstPresent(doc, "occurred_at", "occurredAt", "timestamp", "created_at"))
	it.Email = firstText(doc.Get("email"), doc.Get("email_address"))
	it.Phone = firstText(doc.Get("phone"), doc.Get("phone_number"), doc.Get("mobile"))
	it.FirstName = firstText(doc.Get("first_name"), doc.Get("firstName"))
	it.LastName = firstText(doc.Get("last_name"), doc.Get("lastName"))
	fillName(&it, firstText(doc.Get("full_name"), doc.Get("fullName"), doc.Get("name")))
	it.Company = firstText(doc.Get("company"), doc.Get("company_name"), doc.Get("companyName"))
	it.TargetStage = text(doc.Get("target_stage"))
	it.CurrentStage = text(doc.Get("current_stage"))
	mergeObject(it.Fields, doc.Get("fields"))
	for _, k := range []string{"phone_verified", "consent"} {
		if _, set := it.Fields[k]; !set {
			putValue(it.Fields, k, doc.Get(k))
		}
	}
	mergeObject(it.Attribution, doc.Get("attribution"))
	doc.ForEach(func(k, v gjson.Result) bool {
		if key := k.String(); isAttributionKey(key) {
			if _, set := it.Attribution[key]; !set {
				putValue(it.Attribution, key, v)
			}
		}
		return true
	})
	return it
}

// firstPresent is the first of keys that doc has with a non-null value.
func firstPresent(doc gjson.Result, keys ...string) gjson.Result {
	for _, k := range keys {
		if r := doc.Get(k); r.Exists() && r.Type != gjson.Null {
			return r
		}
	}
	return gjson.Result{}
}

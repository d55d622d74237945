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
	top := readMembers(doc)
	it := newItem()
	it.EventType = firstText(top.get("event_type"), top.get("eventType"), top.get("event"), top.get("type"))
	it.OccurredAt = parseTime(top.firstPresent("occurred_at", "occurredAt", "timestamp", "created_at"))
	it.Email = firstText(top.get("email"), top.get("email_address"))
	it.Phone = firstText(top.get("phone"), top.get("phone_number"), top.get("mobile"))
	it.FirstName = firstText(top.get("first_name"), top.get("firstName"))
	it.LastName = firstText(top.get("last_name"), top.get("lastName"))
	fillName(&it, firstText(top.get("full_name"), top.get("fullName"), top.get("name")))
	it.Company = firstText(top.get("company"), top.get("company_name"), top.get("companyName"))
	it.TargetStage = text(top.get("target_stage"))
	it.CurrentStage = text(top.get("current_stage"))
	mergeObject(it.Fields, top.get("fields"))
	for _, k := range []string{"phone_verified", "consent"} {
		if _, set := it.Fields[k]; !set {
			putValue(it.Fields, k, top.get(k))
		}
	}
	mergeObject(it.Attribution, top.get("attribution"))
	for _, m := range top {
		if isAttributionKey(m.key) {
			if _, set := it.Attribution[m.key]; !set {
				putValue(it.Attribution, m.key, m.value)
			}
		}
	}
	return it
}

// members are an object's members in document order. A payload has a dozen or so, and finding each of
// the thirty-odd names the default mapping reads among them is cheaper than a gjson Get per name, which
// scans the document from its start every time.
type members []member

type member struct {
	key   string
	value gjson.Result
}

func readMembers(doc gjson.Result) members {
	if !doc.IsObject() {
		return nil
	}
	ms := make(members, 0, 16)
	doc.ForEach(func(k, v gjson.Result) bool {
		ms = append(ms, member{k.String(), v})
		return true
	})
	return ms
}

// get is the value of the first member named key, as gjson's Get finds it.
func (ms members) get(key string) gjson.Result {
	for _, m := range ms {
		if m.key == key {
			return m.value
		}
	}
	return gjson.Result{}
}

// firstPresent is the first of keys that ms has with a non-null value.
func (ms members) firstPresent(keys ...string) gjson.Result {
	return firstPresentBy(ms.get, keys)
}

// firstPresent is the first of keys that doc has with a non-null value.
func firstPresent(doc gjson.Result, keys ...string) gjson.Result {
	return firstPresentBy(doc.Get, keys)
}

// firstPresentBy is the first of keys that get finds with a non-null value.
func firstPresentBy(get func(string) gjson.Result, keys []string) gjson.Result {
	for _, k := range keys {
		if r := get(k); r.Exists() && r.Type != gjson.Null {
			return r
		}
	}
	return gjson.Result{}
}

package mapping

import "encoding/json"

// mapCRMEvent maps the CRM's own change events:
//
//	{"crm_event":{"event_id","idempotency_key","event_type","occurred_at","contact_email","contact_phone",
//	              "target_stage","current_stage","source","fields":{}},
//	 "state_machine_rules":{…}}
//
// The idempotency key (else the event id) is the delivery id; state_machine_rules travel as
// RuleOverrides for the stage engine. A body without "crm_event" is read as the event itself.
func mapCRMEvent(p payload) []Item {
	ev := p.doc.Get("crm_event")
	if !ev.IsObject() {
		ev = p.doc
	}
	it := newItem()
	it.DeliveryID = firstText(ev.Get("idempotency_key"), ev.Get("event_id"))
	it.EventType = firstText(ev.Get("event_type"), ev.Get("type"))
	if it.EventType == "" {
		it.EventType = "crm_event"
	}
	it.OccurredAt = parseTime(firstPresent(ev, "occurred_at", "timestamp", "created_at"))
	it.Email = firstText(ev.Get("contact_email"), ev.Get("email"))
	it.Phone = firstText(ev.Get("contact_phone"), ev.Get("phone"))
	it.FirstName = firstText(ev.Get("first_name"), ev.Get("contact_first_name"))
	it.LastName = firstText(ev.Get("last_name"), ev.Get("contact_last_name"))
	fillName(&it, firstText(ev.Get("contact_name"), ev.Get("name")))
	it.Company = firstText(ev.Get("company"), ev.Get("contact_company"))
	it.TargetStage = text(ev.Get("target_stage"))
	it.CurrentStage = text(ev.Get("current_stage"))
	mergeObject(it.Fields, ev.Get("fields"))
	putValue(it.Fields, "source", ev.Get("source"))
	putValue(it.Fields, "contact_id", ev.Get("contact_id"))
	mergeObject(it.Attribution, ev.Get("attribution"))
	rules := p.doc.Get("state_machine_rules")
	if !rules.IsObject() {
		rules = ev.Get("state_machine_rules")
	}
	if rules.IsObject() {
		it.RuleOverrides = json.RawMessage(rules.Raw)
	}
	return []Item{it}
}

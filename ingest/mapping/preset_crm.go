package mapping

import (
	"encoding/json"
	"strings"

	"github.com/tidwall/gjson"
)

// mapFacebookLeads maps a Meta Lead Ads notification: one item per entry[].changes[] of field
// "leadgen". The notification carries ids only, so each item asks to be hydrated from the Graph API
// (Hydrate{meta, leadgen, leadgen_id}) and has no email yet. leadgen_id is the delivery id; Raw is the
// change object.
func mapFacebookLeads(p payload) []Item {
	var items []Item
	p.doc.Get("entry").ForEach(func(_, entry gjson.Result) bool {
		entry.Get("changes").ForEach(func(_, change gjson.Result) bool {
			if f := change.Get("field"); f.Exists() && f.String() != "leadgen" {
				return true
			}
			v := change.Get("value")
			it := newItem()
			it.EventType = "leadgen"
			it.DeliveryID = text(v.Get("leadgen_id"))
			it.OccurredAt = parseTime(v.Get("created_time"))
			if it.OccurredAt.IsZero() {
				it.OccurredAt = parseTime(entry.Get("time"))
			}
			if it.DeliveryID != "" {
				it.Hydrate = &Hydration{Provider: "meta", Object: "leadgen", ID: it.DeliveryID}
			}
			for _, k := range []string{"ad_id", "adgroup_id", "adset_id", "campaign_id", "form_id"} {
				putText(it.Attribution, k, text(v.Get(k)))
			}
			putText(it.Attribution, "page_id", firstText(v.Get("page_id"), entry.Get("id")))
			it.Raw = json.RawMessage(change.Raw)
			items = append(items, it)
			return true
		})
		return true
	})
	return items
}

// hubspotObjectTypes maps HubSpot's objectTypeId to the object name used in subscription types.
var hubspotObjectTypes = map[string]string{"0-1": "contact", "0-2": "company", "0-3": "deal", "0-5": "ticket"}

// mapHubSpot maps a HubSpot webhook batch: one item per array element (a single object is a batch of
// one). Events carry ids only, so each item is hydrated from the CRM API (Hydrate{hubspot, <object>,
// objectId}). The delivery id is portalId:subscriptionId:eventId. changeSource and sourceId are kept
// in Fields because the loop guard recognises leadgate's own writes by them; a lifecyclestage change
// is the target stage.
func mapHubSpot(p payload) []Item {
	events := []gjson.Result{p.doc}
	if p.doc.IsArray() {
		events = p.doc.Array()
	}
	items := make([]Item, 0, len(events))
	for _, e := range events {
		if !e.IsObject() {
			continue
		}
		items = append(items, hubspotItem(e))
	}
	return items
}

func hubspotItem(e gjson.Result) Item {
	it := newItem()
	it.EventType = firstText(e.Get("subscriptionType"), e.Get("eventType"))
	if eventID := text(e.Get("eventId")); eventID != "" {
		parts := []string{}
		for _, k := range []string{"portalId", "subscriptionId"} {
			if s := text(e.Get(k)); s != "" {
				parts = append(parts, s)
			}
		}
		it.DeliveryID = strings.Join(append(parts, eventID), ":")
	}
	it.OccurredAt = parseTime(e.Get("occurredAt"))
	if id := text(e.Get("objectId")); id != "" {
		it.Hydrate = &Hydration{Provider: "hubspot", Object: hubspotObject(e, it.EventType), ID: id}
	}
	prop, val := text(e.Get("propertyName")), text(e.Get("propertyValue"))
	switch strings.ToLower(prop) {
	case "lifecyclestage":
		it.TargetStage = val
	case "email":
		it.Email = val
	case "phone", "mobilephone":
		it.Phone = val
	case "firstname":
		it.FirstName = val
	case "lastname":
		it.LastName = val
	case "company":
		it.Company = val
	}
	for _, k := range []string{"changeSource", "sourceId", "propertyName", "propertyValue", "changeFlag",
		"portalId", "subscriptionId", "appId", "attemptNumber", "objectId", "sourceType"} {
		putValue(it.Fields, k, e.Get(k))
	}
	it.Raw = json.RawMessage(e.Raw)
	return it
}

func hubspotObject(e gjson.Result, subscriptionType string) string {
	if obj, ok := hubspotObjectTypes[text(e.Get("objectTypeId"))]; ok {
		return obj
	}
	if obj, _, found := strings.Cut(subscriptionType, "."); found && obj != "" {
		return obj
	}
	return "contact"
}

// mapGoHighLevel maps HighLevel marketplace webhooks ({"type","webhookId","timestamp","locationId",
// "id","email","phone","firstName","lastName","companyName",…}) and workflow "Custom Webhook" bodies
// (snake_case contact_id, first_name, full_name, customData). webhookId is the delivery id.
//
// Only contact events (Contact*) and workflow bodies describe a person at the top level: there `id`
// is the contact and `name` the contact's name. Other events name their own object there (an
// opportunity's `name` is the deal's title, its `id` the opportunity) and point at the contact by
// contactId, nested under `appointment` for appointment events. `dateAdded` is when the object was
// created, so it is the event's time only for *Create events and messages, never for an update.
func mapGoHighLevel(p payload) []Item {
	doc := p.doc
	it := newItem()
	it.DeliveryID = text(doc.Get("webhookId"))
	eventType := text(doc.Get("type"))
	it.EventType = firstText(doc.Get("type"), doc.Get("workflow.name"))
	person := eventType == "" || strings.HasPrefix(eventType, "Contact")
	created := eventType == "" || strings.HasSuffix(eventType, "Create") || strings.HasSuffix(eventType, "Message")
	it.OccurredAt = parseTime(doc.Get("timestamp"))
	if it.OccurredAt.IsZero() && created {
		it.OccurredAt = parseTime(firstPresent(doc, "dateAdded", "date_created", "appointment.dateAdded"))
	}
	it.Email = text(doc.Get("email"))
	it.Phone = text(doc.Get("phone"))
	it.FirstName = firstText(doc.Get("firstName"), doc.Get("first_name"))
	it.LastName = firstText(doc.Get("lastName"), doc.Get("last_name"))
	it.Company = firstText(doc.Get("companyName"), doc.Get("company_name"))
	contactID := firstText(doc.Get("contactId"), doc.Get("contact_id"), doc.Get("appointment.contactId"))
	if person {
		fillName(&it, firstText(doc.Get("name"), doc.Get("full_name"), doc.Get("contactName")))
		if contactID == "" {
			contactID = text(doc.Get("id"))
		}
	} else {
		fillName(&it, text(doc.Get("contactName")))
		putText(it.Fields, "ghl_object_id", firstText(doc.Get("id"), doc.Get("appointment.id")))
	}
	putText(it.Fields, "ghl_contact_id", contactID)
	putText(it.Fields, "location_id", firstText(doc.Get("locationId"), doc.Get("location.id")))
	putValue(it.Fields, "tags", doc.Get("tags"))
	putValue(it.Fields, "source", firstPresent(doc, "source", "appointment.source"))
	putValue(it.Fields, "pipeline_stage_id", doc.Get("pipelineStageId"))
	putValue(it.Fields, "dnd", doc.Get("dnd"))
	if strings.HasPrefix(eventType, "Opportunity") {
		putValue(it.Fields, "opportunity_name", doc.Get("name"))
		putValue(it.Fields, "opportunity_status", doc.Get("status"))
		putValue(it.Fields, "monetary_value", doc.Get("monetaryValue"))
		putValue(it.Fields, "pipeline_id", doc.Get("pipelineId"))
	}
	if appt := doc.Get("appointment"); appt.IsObject() {
		putValue(it.Fields, "appointment_title", appt.Get("title"))
		putValue(it.Fields, "appointment_status", appt.Get("appointmentStatus"))
		putValue(it.Fields, "appointment_start", appt.Get("startTime"))
		putValue(it.Fields, "calendar_id", appt.Get("calendarId"))
	}
	doc.Get("customFields").ForEach(func(_, cf gjson.Result) bool {
		putValue(it.Fields, text(cf.Get("id")), cf.Get("value"))
		return true
	})
	mergeObject(it.Fields, doc.Get("customData"))
	mergeObject(it.Attribution, doc.Get("attributionSource"))
	mergeObject(it.Attribution, doc.Get("contact.attributionSource"))
	return []Item{it}
}

// mapActiveCampaign maps ActiveCampaign's form-encoded webhooks (type, date_time, initiated_by,
// contact[id], contact[email], contact[phone], contact[first_name], contact[fields][…], deal[…]).
// ActiveCampaign sends no event id and never retries, so type:contact[id]:date_time identifies the
// event. initiated_by/initiated_from stay in Fields for the loop guard.
func mapActiveCampaign(p payload) []Item {
	doc := p.doc
	c := doc.Get("contact")
	it := newItem()
	it.EventType = text(doc.Get("type"))
	it.OccurredAt = parseTime(doc.Get("date_time"))
	it.DeliveryID = joinID(it.EventType, firstText(c.Get("id"), c.Get("email")), text(doc.Get("date_time")))
	it.Email = text(c.Get("email"))
	it.Phone = text(c.Get("phone"))
	it.FirstName = text(c.Get("first_name"))
	it.LastName = text(c.Get("last_name"))
	it.Company = firstText(c.Get("orgname"), c.Get("customer_acct_name"))
	mergeObject(it.Fields, c.Get("fields"))
	mergeObject(it.Fields, doc.Get("fields"))
	putValue(it.Fields, "ac_contact_id", c.Get("id"))
	putValue(it.Fields, "tags", c.Get("tags"))
	putValue(it.Fields, "initiated_by", doc.Get("initiated_by"))
	putValue(it.Fields, "initiated_from", doc.Get("initiated_from"))
	putValue(it.Fields, "list", doc.Get("list"))
	putValue(it.Fields, "tag", doc.Get("tag")) // contact_tag_added / contact_tag_removed name the tag here
	doc.Get("deal").ForEach(func(k, v gjson.Result) bool {
		putValue(it.Fields, "deal_"+k.String(), v)
		return true
	})
	return []Item{it}
}

package mapping

import (
	"strings"

	"github.com/tidwall/gjson"
)

// mapStripe maps a Stripe event: the evt_ id is the delivery id, created (unix seconds) the time, and
// the buyer is read from data.object in the places Checkout Sessions, invoices, charges, payment
// intents and customers keep them.
func mapStripe(p payload) []Item {
	doc := p.doc
	obj := doc.Get("data.object")
	cd := obj.Get("customer_details")
	bd := obj.Get("billing_details")
	isCustomer := text(obj.Get("object")) == "customer"

	it := newItem()
	it.DeliveryID = text(doc.Get("id"))
	it.EventType = text(doc.Get("type"))
	it.OccurredAt = parseTime(doc.Get("created"))
	it.Email = firstText(cd.Get("email"), obj.Get("customer_email"), obj.Get("receipt_email"), bd.Get("email"), customerField(obj, isCustomer, "email"))
	it.Phone = firstText(cd.Get("phone"), obj.Get("customer_phone"), bd.Get("phone"), customerField(obj, isCustomer, "phone"), obj.Get("shipping.phone"))
	fillName(&it, firstText(cd.Get("name"), obj.Get("customer_name"), bd.Get("name"), customerField(obj, isCustomer, "name"), obj.Get("shipping.name")))
	it.Company = firstText(cd.Get("business_name"), obj.Get("business_name"))

	putValue(it.Fields, "amount", firstPresent(obj, "amount_total", "amount_paid", "amount_received", "amount"))
	putValue(it.Fields, "currency", obj.Get("currency"))
	putValue(it.Fields, "stripe_object", obj.Get("object"))
	putValue(it.Fields, "stripe_object_id", obj.Get("id"))
	putValue(it.Fields, "payment_status", firstPresent(obj, "payment_status", "status"))
	putValue(it.Fields, "client_reference_id", obj.Get("client_reference_id"))
	if isCustomer {
		putValue(it.Fields, "stripe_customer", obj.Get("id"))
	} else if c := obj.Get("customer"); c.Type == gjson.String {
		putValue(it.Fields, "stripe_customer", c)
	}
	obj.Get("metadata").ForEach(func(k, v gjson.Result) bool {
		key := k.String()
		if isAttributionKey(key) {
			putValue(it.Attribution, strings.ToLower(key), v)
		} else if _, set := it.Fields[key]; !set {
			putValue(it.Fields, key, v)
		}
		return true
	})
	return []Item{it}
}

// customerField reads a customer object's own contact field; other objects' "name" or "email" (a
// product's name) are not the buyer's.
func customerField(obj gjson.Result, isCustomer bool, key string) gjson.Result {
	if !isCustomer {
		return gjson.Result{}
	}
	return obj.Get(key)
}

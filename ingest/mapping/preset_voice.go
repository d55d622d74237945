package mapping

import (
	"strings"

	"github.com/tidwall/gjson"
)

// retellNotConnected are Retell disconnection reasons (or their prefixes) of calls that never reached
// a person, so the number is not proven.
var retellNotConnected = []string{"dial_", "invalid_destination", "voicemail_reached", "telephony_provider_",
	"sip_routing_error", "marked_as_spam", "user_declined", "scam_detected", "no_valid_payment",
	"concurrency_limit_reached", "error_"}

// mapRetell maps Retell call events ({"event","call":{"call_id","direction","from_number","to_number",
// "call_status","duration_ms","disconnection_reason","call_analysis":{"custom_analysis_data":{…}}}}).
// call_id:event is the delivery id. The lead's number is the caller on inbound calls and the callee on
// outbound ones. Email and name come from the post-call analysis. phone_verified is set once the call
// has ended: true when it connected (ran for some time and did not fail to dial or hit voicemail).
func mapRetell(p payload) []Item {
	doc := p.doc
	call := doc.Get("call")
	it := newItem()
	it.EventType = text(doc.Get("event"))
	it.DeliveryID = joinID(text(call.Get("call_id")), it.EventType)
	direction := text(call.Get("direction"))
	if strings.HasPrefix(direction, "outbound") {
		it.Phone = text(call.Get("to_number"))
	} else {
		it.Phone = text(call.Get("from_number"))
	}
	switch it.EventType {
	case "call_ended", "call_analyzed":
		it.OccurredAt = parseTime(firstPresent(call, "end_timestamp", "start_timestamp"))
	default:
		it.OccurredAt = parseTime(firstPresent(call, "start_timestamp", "end_timestamp"))
	}
	analysis := call.Get("call_analysis")
	analysis.Get("custom_analysis_data").ForEach(func(k, v gjson.Result) bool {
		if !assignByRole(&it, k.String(), v) {
			putValue(it.Fields, k.String(), v)
		}
		return true
	})
	for _, vars := range []string{"retell_llm_dynamic_variables", "metadata"} {
		call.Get(vars).ForEach(func(k, v gjson.Result) bool {
			if isAttributionKey(k.String()) {
				putValue(it.Attribution, strings.ToLower(k.String()), v)
			} else {
				assignByRole(&it, k.String(), v)
			}
			return true
		})
	}
	durationMS := call.Get("duration_ms").Float()
	if !call.Get("duration_ms").Exists() {
		durationMS = call.Get("end_timestamp").Float() - call.Get("start_timestamp").Float()
	}
	status, reason := text(call.Get("call_status")), text(call.Get("disconnection_reason"))
	if status == "ended" && it.Phone != "" {
		it.Fields["phone_verified"] = durationMS > 0 && !hasAnyPrefix(reason, retellNotConnected)
	}
	putText(it.Fields, "call_status", status)
	putText(it.Fields, "disconnection_reason", reason)
	if durationMS > 0 {
		it.Fields["duration_ms"] = durationMS
	}
	putText(it.Fields, "direction", direction)
	putValue(it.Fields, "call_summary", analysis.Get("call_summary"))
	putValue(it.Fields, "user_sentiment", analysis.Get("user_sentiment"))
	putValue(it.Fields, "call_successful", analysis.Get("call_successful"))
	putValue(it.Fields, "in_voicemail", analysis.Get("in_voicemail"))
	putValue(it.Attribution, "agent_id", call.Get("agent_id"))
	return []Item{it}
}

// vapiNotConnected are fragments of Vapi endedReason values for calls that never reached a person.
var vapiNotConnected = []string{"did-not-answer", "busy", "failed-to-connect", "voicemail", "no-answer",
	"rejected", "invalid", "could-not-connect", "never-connected", "call.start.error", "before-call-connect",
	"misdialed", "outbound-sip-"}

// mapVapi maps Vapi server messages ({"message":{"type","timestamp","startedAt","endedAt",
// "call":{"id","type","customer"},"customer":{"number","name","email"},"endedReason",
// "analysis":{"summary","structuredData":{…}},"artifact":{"structuredOutputs":{<id>:{"name","result"}}}}}).
// call.id:type is the delivery id of an end-of-call-report; status-updates add the status and other
// messages, which come many times per call, their timestamp. The
// lead is the customer; email and name come from the structured outputs (Vapi's recommended
// extraction) or the older analysis.structuredData. On end-of-call reports phone_verified is true when
// the call connected: it lasted some time (endedAt − startedAt, as the report documents it, or a
// durationSeconds/durationMs where one is sent) and did not end for a reason that means no one answered.
func mapVapi(p payload) []Item {
	m := p.doc.Get("message")
	call := m.Get("call")
	it := newItem()
	it.EventType = text(m.Get("type"))
	it.DeliveryID = joinID(text(call.Get("id")), it.EventType)
	switch it.EventType {
	case "end-of-call-report":
	case "status-update":
		if status := text(m.Get("status")); status != "" && it.DeliveryID != "" {
			it.DeliveryID += ":" + status
		}
	default:
		// transcript, conversation-update, speech-update, tool-calls … come many times per call:
		// the message's own timestamp tells them apart.
		if ts := text(m.Get("timestamp")); ts != "" && it.DeliveryID != "" {
			it.DeliveryID += ":" + ts
		}
	}
	it.OccurredAt = parseTime(firstPresent(m, "timestamp", "endedAt", "startedAt"))
	customer := m.Get("customer")
	if !customer.IsObject() {
		customer = call.Get("customer")
	}
	it.Phone = text(customer.Get("number"))
	it.Email = text(customer.Get("email"))
	fillName(&it, text(customer.Get("name")))
	analysis := m.Get("analysis")
	analysis.Get("structuredData").ForEach(func(k, v gjson.Result) bool {
		if !assignByRole(&it, k.String(), v) {
			putValue(it.Fields, k.String(), v)
		}
		return true
	})
	outputs := m.Get("artifact.structuredOutputs")
	if !outputs.Exists() {
		outputs = call.Get("artifact.structuredOutputs")
	}
	outputs.ForEach(func(_, out gjson.Result) bool {
		vapiStructuredOutput(&it, text(out.Get("name")), out.Get("result"))
		return true
	})
	endedReason := text(m.Get("endedReason"))
	durationSeconds := m.Get("durationSeconds").Float()
	if durationSeconds <= 0 {
		durationSeconds = m.Get("durationMs").Float() / 1000
	}
	if durationSeconds <= 0 {
		started := parseTime(firstPresent(m, "startedAt", "call.startedAt"))
		ended := parseTime(firstPresent(m, "endedAt", "call.endedAt"))
		if !started.IsZero() && ended.After(started) {
			durationSeconds = ended.Sub(started).Seconds()
		}
	}
	if it.EventType == "end-of-call-report" && it.Phone != "" && endedReason != "" {
		it.Fields["phone_verified"] = durationSeconds > 0 && !containsAny(endedReason, vapiNotConnected)
	}
	putText(it.Fields, "ended_reason", endedReason)
	if durationSeconds > 0 {
		it.Fields["duration_seconds"] = durationSeconds
	}
	putValue(it.Fields, "call_summary", firstPresent(analysis, "summary"))
	putValue(it.Fields, "success_evaluation", analysis.Get("successEvaluation"))
	putValue(it.Fields, "call_status", m.Get("status"))
	putValue(it.Fields, "call_type", call.Get("type"))
	putText(it.Attribution, "assistant_id", firstText(m.Get("assistant.id"), call.Get("assistantId")))
	putText(it.Attribution, "phone_number_id", firstText(m.Get("phoneNumber.id"), call.Get("phoneNumberId")))
	return []Item{it}
}

// vapiStructuredOutput takes one structured output's result: an object's members (and those of its
// nested objects, labelled "<outer> <inner>": customer.email is an email, issue.priority a field) by
// role or as fields; a scalar result (a score, a yes/no) as the field named after the output.
func vapiStructuredOutput(it *Item, name string, result gjson.Result) {
	if !result.IsObject() {
		if key := slug(name); key != "" {
			putValue(it.Fields, key, result)
		}
		return
	}
	result.ForEach(func(k, v gjson.Result) bool {
		if v.IsObject() {
			v.ForEach(func(k2, v2 gjson.Result) bool {
				label := labelWords(k.String()) + " " + labelWords(k2.String())
				if !assignByRole(it, label, v2) {
					putValue(it.Fields, slug(label), v2)
				}
				return true
			})
			return true
		}
		if !assignByRole(it, k.String(), v) {
			putValue(it.Fields, k.String(), v)
		}
		return true
	})
}

// twilioFailed are call statuses of calls that never connected.
var twilioFailed = map[string]bool{"busy": true, "no-answer": true, "failed": true, "canceled": true}

// mapTwilio maps Twilio's form-encoded messaging and voice webhooks (From, To, Body, MessageSid /
// CallSid, MessageStatus / CallStatus, Direction). The I-Twilio-Idempotency-Token header, stable across
// Twilio's retries, is the delivery id; without it the Sid plus status (a status callback fires once
// per status). The lead is From on inbound traffic and To on outbound; the number that was called or
// texted is kept as attribution (tracking numbers identify campaigns).
func mapTwilio(p payload) []Item {
	doc := p.doc
	it := newItem()
	callSid := text(doc.Get("CallSid"))
	msgSid := firstText(doc.Get("MessageSid"), doc.Get("SmsSid"))
	status := firstText(doc.Get("CallStatus"), doc.Get("MessageStatus"), doc.Get("SmsStatus"))
	sid, kind := msgSid, "message"
	if callSid != "" {
		sid, kind = callSid, "call"
	}
	it.EventType = kind
	if status != "" {
		it.EventType += "." + status
	}
	// MessageSid/CallSid plus status names the event whether or not Twilio
	// adds I-Twilio-Idempotency-Token (a retry may carry it where the first
	// attempt did not); the token is the key only when there is no sid.
	switch {
	case sid != "" && status != "":
		it.DeliveryID = sid + ":" + status
	case sid != "":
		it.DeliveryID = sid
	default:
		it.DeliveryID = p.header.Get("I-Twilio-Idempotency-Token")
	}
	it.OccurredAt = parseTime(doc.Get("Timestamp"))
	direction := text(doc.Get("Direction"))
	from, to := text(doc.Get("From")), text(doc.Get("To"))
	if strings.HasPrefix(direction, "outbound") {
		it.Phone = to
		putText(it.Attribution, "tracking_number", from)
	} else {
		it.Phone = from
		putText(it.Attribution, "tracking_number", to)
	}
	putText(it.Fields, "message_body", text(doc.Get("Body")))
	putText(it.Fields, "status", status)
	putText(it.Fields, "direction", direction)
	putValue(it.Fields, "call_duration", doc.Get("CallDuration"))
	putValue(it.Fields, "answered_by", doc.Get("AnsweredBy"))
	putValue(it.Fields, "caller_name", doc.Get("CallerName"))
	if callSid != "" && strings.HasPrefix(direction, "outbound") && it.Phone != "" {
		switch {
		case status == "completed" && doc.Get("CallDuration").Float() > 0:
			it.Fields["phone_verified"] = true
		case twilioFailed[status]:
			it.Fields["phone_verified"] = false
		}
	}
	return []Item{it}
}

func hasAnyPrefix(s string, prefixes []string) bool {
	for _, p := range prefixes {
		if strings.HasPrefix(s, p) {
			return true
		}
	}
	return false
}

func containsAny(s string, subs []string) bool {
	for _, sub := range subs {
		if strings.Contains(s, sub) {
			return true
		}
	}
	return false
}

package mapping

import (
	"regexp"
	"strconv"
	"strings"

	"github.com/tidwall/gjson"
)

// generatedRef matches the refs form builders generate (UUIDs, hex ids); such a ref says nothing, so
// the question's title names the field instead.
var generatedRef = regexp.MustCompile(`^[0-9a-fA-F-]{16,}$`)

// mapTypeform maps a Typeform webhook. The response token is the delivery id of a completed response
// (Typeform does not promise event_id is stable across retries; the token is the submission's own id).
// Partial-response events share the token with the later full one, so they keep event_id.
// Answers are recognised by type (email, phone_number), then by ref and question title; the rest
// become fields named by ref, or by title when the ref is generated. Hidden fields are attribution.
func mapTypeform(p payload) []Item {
	doc := p.doc
	fr := doc.Get("form_response")
	it := newItem()
	it.EventType = firstText(doc.Get("event_type"))
	if it.EventType == "" {
		it.EventType = "form_response"
	}
	token := text(fr.Get("token"))
	switch {
	case token != "" && it.EventType == "form_response":
		it.DeliveryID = token
	default:
		it.DeliveryID = firstText(doc.Get("event_id"))
		if it.DeliveryID == "" && token != "" {
			it.DeliveryID = joinID(token, it.EventType)
		}
	}
	it.OccurredAt = parseTime(firstPresent(fr, "submitted_at", "landed_at"))

	// Typeform's answers name their question by id (and type); its ref and
	// title live in definition.fields.
	titles, refs := map[string]string{}, map[string]string{}
	fr.Get("definition.fields").ForEach(func(_, f gjson.Result) bool {
		titles[f.Get("id").String()] = f.Get("title").String()
		refs[f.Get("id").String()] = f.Get("ref").String()
		return true
	})
	fr.Get("answers").ForEach(func(i, a gjson.Result) bool {
		typ := a.Get("type").String()
		v := typeformAnswerValue(a, typ)
		ref := a.Get("field.ref").String()
		if ref == "" {
			ref = refs[a.Get("field.id").String()]
		}
		title := titles[a.Get("field.id").String()]
		switch {
		case typ == "email" && it.Email == "":
			it.Email = text(v)
			return true
		case typ == "phone_number" && it.Phone == "":
			it.Phone = text(v)
			return true
		case assignByRole(&it, ref, v) || assignByRole(&it, title, v):
			return true
		}
		key := fieldKey(ref, title, a.Get("field.id").String(), int(i.Int()))
		putValue(it.Fields, key, v)
		return true
	})
	if score := fr.Get("calculated.score"); score.Exists() {
		putValue(it.Fields, "score", score)
	}
	fr.Get("hidden").ForEach(func(k, v gjson.Result) bool {
		putValue(it.Attribution, k.String(), v)
		return true
	})
	putValue(it.Attribution, "form_id", fr.Get("form_id"))
	putValue(it.Attribution, "form_title", fr.Get("definition.title"))
	return []Item{it}
}

// typeformAnswerValue is an answer's value, stored under the key named by its type.
func typeformAnswerValue(a gjson.Result, typ string) gjson.Result {
	switch typ {
	case "choice":
		return firstPresent(a.Get("choice"), "label", "other")
	case "choices":
		return a.Get("choices.labels")
	case "payment":
		return a.Get("payment.amount")
	}
	return a.Get(typ)
}

// fieldKey names a custom field after the best of a human ref, a label, or an id.
func fieldKey(ref, label, id string, index int) string {
	if ref != "" && !generatedRef.MatchString(ref) {
		if s := slug(ref); s != "" {
			return s
		}
	}
	if s := slug(label); s != "" {
		return s
	}
	if s := slug(id); s != "" {
		return s
	}
	return "field_" + strconv.Itoa(index)
}

// mapTally maps a Tally FORM_RESPONSE. eventId is the delivery id (else the response id). Fields are
// recognised by type (INPUT_EMAIL, INPUT_PHONE_NUMBER), then by label; choice values (option ids) are
// resolved to option texts; hidden fields are attribution.
func mapTally(p payload) []Item {
	doc := p.doc
	data := doc.Get("data")
	it := newItem()
	it.DeliveryID = firstText(doc.Get("eventId"), data.Get("responseId"), data.Get("submissionId"))
	it.EventType = firstText(doc.Get("eventType"))
	if it.EventType == "" {
		it.EventType = "FORM_RESPONSE"
	}
	it.OccurredAt = parseTime(firstPresent(doc, "createdAt"))
	if it.OccurredAt.IsZero() {
		it.OccurredAt = parseTime(data.Get("createdAt"))
	}
	data.Get("fields").ForEach(func(i, f gjson.Result) bool {
		typ := f.Get("type").String()
		label := f.Get("label").String()
		v := f.Get("value")
		switch {
		case typ == "INPUT_EMAIL" && it.Email == "":
			it.Email = text(v)
		case typ == "INPUT_PHONE_NUMBER" && it.Phone == "":
			it.Phone = text(v)
		case typ == "HIDDEN_FIELDS":
			putValue(it.Attribution, label, v)
		case assignByRole(&it, label, v):
		default:
			key := fieldKey("", label, f.Get("key").String(), int(i.Int()))
			if typ == "MATRIX" {
				if m := tallyMatrix(f, v); len(m) > 0 {
					it.Fields[key] = m
				}
				return true
			}
			if resolved, ok := tallyOptionTexts(f, v); ok {
				if len(resolved) > 0 {
					it.Fields[key] = resolved
				}
			} else {
				putValue(it.Fields, key, v)
			}
		}
		return true
	})
	putValue(it.Attribution, "form_id", data.Get("formId"))
	putValue(it.Attribution, "form_name", data.Get("formName"))
	return []Item{it}
}

// tallyMatrix turns a MATRIX answer ({row id: [column ids]}) into
// {row text: [column texts]}, from the field's rows and columns.
func tallyMatrix(f, v gjson.Result) map[string]any {
	rows, cols := tallyTexts(f.Get("rows")), tallyTexts(f.Get("columns"))
	out := map[string]any{}
	v.ForEach(func(rowID, picked gjson.Result) bool {
		row := rows[rowID.String()]
		if row == "" {
			row = rowID.String()
		}
		var texts []any
		pick := func(_, c gjson.Result) bool {
			if t, ok := cols[c.String()]; ok {
				texts = append(texts, t)
			} else {
				texts = append(texts, c.Value())
			}
			return true
		}
		if picked.IsArray() {
			picked.ForEach(pick)
		} else {
			pick(gjson.Result{}, picked)
		}
		out[row] = texts
		return true
	})
	return out
}

// tallyTexts indexes a list of {id, text} by id.
func tallyTexts(list gjson.Result) map[string]string {
	texts := map[string]string{}
	list.ForEach(func(_, o gjson.Result) bool {
		texts[o.Get("id").String()] = o.Get("text").String()
		return true
	})
	return texts
}

// tallyOptionTexts turns a choice field's option ids into the options' texts.
func tallyOptionTexts(f, v gjson.Result) ([]any, bool) {
	options := f.Get("options")
	if !v.IsArray() || !options.IsArray() {
		return nil, false
	}
	texts := tallyTexts(options)
	var out []any
	v.ForEach(func(_, id gjson.Result) bool {
		if t, ok := texts[id.String()]; ok {
			out = append(out, t)
		} else {
			out = append(out, id.Value())
		}
		return true
	})
	return out, true
}

// mapWebflow maps a Webflow form_submission ({"triggerType","payload":{"id","name","siteId","formId",
// "data":{…},"submittedAt"}}) and the legacy v1 shape ({"_id","name","site","d","data"}). Data keys are
// matched case-insensitively by meaning ("Email", "Phone Number", "First Name", "Company"); the rest are
// fields, utm_* keys attribution. payload.id, the submission id, is the delivery id.
func mapWebflow(p payload) []Item {
	doc := p.doc
	sub := doc.Get("payload")
	if !sub.IsObject() {
		sub = doc
	}
	it := newItem()
	it.EventType = firstText(doc.Get("triggerType"))
	if it.EventType == "" {
		it.EventType = "form_submission"
	}
	it.DeliveryID = firstText(sub.Get("id"), sub.Get("_id"))
	it.OccurredAt = parseTime(firstPresent(sub, "submittedAt", "d"))
	labelledValues(&it, sub.Get("data"))
	putValue(it.Attribution, "form_id", sub.Get("formId"))
	putValue(it.Attribution, "form_name", sub.Get("name"))
	putValue(it.Attribution, "site_id", firstPresent(sub, "siteId", "site"))
	putValue(it.Attribution, "page_id", sub.Get("pageId"))
	putValue(it.Attribution, "page_path", sub.Get("publishedPath"))
	return []Item{it}
}

// labelledValues spreads a flat object of label → value over the item: identity by label meaning,
// attribution keys to Attribution, everything else to Fields under a slug of the label.
func labelledValues(it *Item, data gjson.Result) {
	data.ForEach(func(k, v gjson.Result) bool {
		key := k.String()
		switch {
		case isAttributionKey(key):
			putValue(it.Attribution, strings.ToLower(key), v)
		case assignByRole(it, key, v):
		default:
			if s := slug(key); s != "" {
				putValue(it.Fields, s, v)
			}
		}
		return true
	})
}

// mapCalendly maps invitee events: {"event","created_at","payload":{"uri","email","name","first_name",
// "last_name","text_reminder_number","questions_and_answers":[{"question","answer"}],"tracking":{…},
// "scheduled_event":{…}}}. Calendly sends no delivery id; event + invitee URI identifies the event
// (a reschedule is a cancel and a create, two distinct keys).
func mapCalendly(p payload) []Item {
	doc := p.doc
	inv := doc.Get("payload")
	it := newItem()
	it.EventType = text(doc.Get("event"))
	it.DeliveryID = joinID(it.EventType, text(inv.Get("uri")))
	it.OccurredAt = parseTime(firstPresent(doc, "created_at", "time"))
	it.Email = text(inv.Get("email"))
	it.FirstName = text(inv.Get("first_name"))
	it.LastName = text(inv.Get("last_name"))
	fillName(&it, text(inv.Get("name")))
	it.Phone = text(inv.Get("text_reminder_number"))
	inv.Get("questions_and_answers").ForEach(func(i, qa gjson.Result) bool {
		q, a := qa.Get("question").String(), qa.Get("answer")
		if !assignByRole(&it, q, a) {
			putValue(it.Fields, fieldKey("", q, "", int(i.Int())), a)
		}
		return true
	})
	inv.Get("tracking").ForEach(func(k, v gjson.Result) bool {
		putValue(it.Attribution, k.String(), v)
		return true
	})
	ev := inv.Get("scheduled_event")
	putValue(it.Fields, "meeting_name", ev.Get("name"))
	putValue(it.Fields, "meeting_start", ev.Get("start_time"))
	// v2 payloads name the scheduled event by its URI in payload.event; newer
	// ones also embed it as scheduled_event.
	putValue(it.Fields, "meeting_uri", firstPresent(ev, "uri"))
	if _, ok := it.Fields["meeting_uri"]; !ok {
		if e := inv.Get("event"); e.Type == gjson.String {
			putValue(it.Fields, "meeting_uri", e)
		}
	}
	putValue(it.Fields, "invitee_status", inv.Get("status"))
	putValue(it.Fields, "rescheduled", inv.Get("rescheduled"))
	putValue(it.Fields, "timezone", inv.Get("timezone"))
	putValue(it.Attribution, "event_type_uri", ev.Get("event_type"))
	return []Item{it}
}

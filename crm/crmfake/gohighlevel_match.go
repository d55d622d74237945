package crmfake

import (
	"net/http"
	"strings"
)

// The location's duplicate rule, as apps/contacts.json describes it:
//   - GET /contacts/search/duplicate: "If Allow Duplicate Contact is disabled under Settings, the global
//     unique identifier will be used for searching the contact. If the setting is enabled, first priority
//     for search is email and the second priority will be phone."
//   - POST /contacts/upsert: follows the setting; "the API will attempt to identify an existing contact
//     based on the priority sequence specified in the setting … If two separate contacts already exist—one
//     with the same email and another with the same phone—and an upsert request includes both … the API
//     will update the contact that matches the first field in the configured sequence, and ignore the
//     second field". So an upsert whose email matches nobody updates the contact holding its phone, and
//     replaces that contact's email with the one sent.
//
// Emails compare without case; phones compare as stored (the description promises no normalization).

// holder returns the oldest contact whose field ("email" or "phone") holds value, skipping except and,
// for searches, contacts the index does not show yet.
func (f *GoHighLevel) holder(field, value, except string, search bool) *GHLContact {
	if value == "" {
		return nil
	}
	for _, id := range f.order {
		c := f.contacts[id]
		if id == except || (search && f.hidden[id]) {
			continue
		}
		if field == "email" && strings.EqualFold(c.Email, value) || field == "phone" && c.Phone == value {
			return c
		}
	}
	return nil
}

// priority is the order the rule matches in: the location's configured sequence, or email then phone
// for the duplicate search when duplicates are allowed.
func (f *GoHighLevel) priority(search bool) []string {
	if search && f.ghlOpts.AllowDuplicates {
		return []string{"email", "phone"}
	}
	return f.ghlOpts.DuplicatePriority
}

// match finds the contact an email/phone pair names under the rule and the field that matched.
func (f *GoHighLevel) match(email, phone string, search bool) (*GHLContact, string) {
	for _, field := range f.priority(search) {
		v := email
		if field == "phone" {
			v = phone
		}
		if c := f.holder(field, v, "", search); c != nil {
			return c, field
		}
	}
	return nil, ""
}

// duplicateOf is the 400 POST /contacts/ answers when the location does not allow duplicates and another
// contact holds the email or phone. Not in the OpenAPI description; the shape is the one integrators
// report (meta.contactId names the existing contact, meta.matchingField the field).
func (f *GoHighLevel) duplicateOf(w http.ResponseWriter, email, phone, except string) bool {
	if f.ghlOpts.AllowDuplicates {
		return false
	}
	for _, field := range f.ghlOpts.DuplicatePriority {
		v := email
		if field == "phone" {
			v = phone
		}
		if c := f.holder(field, v, except, false); c != nil {
			writeJSON(w, http.StatusBadRequest, map[string]any{"statusCode": 400, "message": "This location does not allow duplicated contacts.",
				"meta": map[string]any{"contactId": c.ID, "contactName": strings.TrimSpace(c.FirstName + " " + c.LastName), "matchingField": field}})
			return true
		}
	}
	return false
}

package crm

import (
	"context"
	"slices"
)

// A lead with an email that HubSpot does not hold may still be a contact HubSpot holds by phone alone
// (created from a call or an SMS before the email was known): looked up by email only, it would become a
// second record of the same person. So an email lead not found by email is also looked up by its phone,
// among the contacts that have no email; a contact with another email is someone else and is never
// matched. The contacts without email are usually few: the first search page (200) of them, with its total,
// is read once for the whole batch and matched here, and only when reading them all would cost more than
// searching each lead's phone forms (five leads a search) are the leads searched instead.

// phoneFallback sets the id and properties of the items (email leads not found by email, with a phone)
// that an email-less contact holds by phone.
func (h *hubSpot) phoneFallback(ctx context.Context, items []*hsItem, props []string) error {
	if len(items) == 0 {
		return nil
	}
	noEmail := map[string]any{"propertyName": "email", "operator": "NOT_HAS_PROPERTY"}
	match := func(o hsObject) {
		v := o.values()
		if v["email"] != "" {
			return
		}
		for _, it := range items {
			if samePhone(v["phone"], it.c.Phone) && (it.id == "" || lessID(string(o.ID), it.id)) {
				it.id, it.remote = string(o.ID), v
			}
		}
	}
	roster := []any{map[string]any{"filters": []any{noEmail, map[string]any{"propertyName": "phone", "operator": "HAS_PROPERTY"}}}}
	total, err := h.search(ctx, items, roster, props, 1, match)
	if err != nil || total <= hsSearchLimit {
		oneLeadEach(items)
		return err
	}
	rosterPages := (total+hsSearchLimit-1)/hsSearchLimit - 1
	perLead := (len(items) + hsSearchGroups - 1) / hsSearchGroups
	if rosterPages <= perLead && total <= hsSearchMaxTotal {
		_, err := h.search(ctx, items, roster, props, 0, match)
		oneLeadEach(items)
		return err
	}
	for _, it := range items {
		it.id, it.remote = "", nil
	}
	for chunk := range slices.Chunk(items, hsSearchGroups) {
		groups := make([]any, len(chunk))
		for i, it := range chunk {
			groups[i] = map[string]any{"filters": []any{phoneIn(it.c.Phone), noEmail}}
		}
		if _, err := h.search(ctx, chunk, groups, props, 0, match); err != nil {
			return err
		}
	}
	oneLeadEach(items)
	return nil
}

// oneLeadEach keeps a contact matched by phone for the first lead that matched it: two leads with different
// emails and one phone are two people, and the second is not written over the first.
func oneLeadEach(items []*hsItem) {
	taken := map[string]bool{}
	for _, it := range items {
		if it.id == "" {
			continue
		}
		if taken[it.id] {
			it.id, it.remote = "", nil
			continue
		}
		taken[it.id] = true
	}
}

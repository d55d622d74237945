package crmfake

import (
	"net/http"
	"slices"
	"strings"
)

// Tags (reference/list-all-tags, reference/create-a-new-tag, reference/create-contact-tag). Tag names are
// the account's and match without regard to letter case: "Webinar" and "webinar" are one tag.

// listTags serves GET /tags: `search` is a "contains" match and `filters[search][eq]` an exact one (both
// case-insensitive), paged by limit (default 20, at most 100) and offset.
func (f *ActiveCampaign) listTags(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	search := strings.ToLower(q.Get("search"))
	eq, exact := q["filters[search][eq]"]
	f.mu.Lock()
	var out []map[string]any
	for _, id := range sortedKeys(f.tags) {
		name := strings.ToLower(f.tags[id])
		if exact && name != strings.ToLower(eq[0]) || !strings.Contains(name, search) {
			continue
		}
		out = append(out, map[string]any{"id": id, "tag": f.tags[id], "tagType": "contact"})
	}
	f.mu.Unlock()
	acList(w, r, "tags", out)
}

// AddTag creates a tag in the account (as a person would in the UI) and returns its id.
func (f *ActiveCampaign) AddTag(name string) string {
	f.mu.Lock()
	defer f.mu.Unlock()
	id := f.newID()
	f.tags[id] = name
	return id
}

// POST /api/3/tags {"tag":{"tag","tagType","description"}}: a name the account has already (in any letter
// case) is refused as a duplicate rather than creating a second tag of that name.
func (f *ActiveCampaign) createTag(w http.ResponseWriter, r *http.Request) {
	var in struct {
		Tag struct {
			Tag string `json:"tag"`
		} `json:"tag"`
	}
	if !decode(w, r, &in, acBad) {
		return
	}
	if strings.TrimSpace(in.Tag.Tag) == "" {
		acError(w, http.StatusUnprocessableEntity, "Missing attribute", "field_missing", "/data/attributes/tag")
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.tagIDOf(in.Tag.Tag) != "" {
		acError(w, http.StatusUnprocessableEntity, "Tag already exists", "duplicate", "/data/attributes/tag")
		return
	}
	id := f.newID()
	f.tags[id] = in.Tag.Tag
	writeJSON(w, http.StatusCreated, map[string]any{"tag": map[string]any{"id": id, "tag": in.Tag.Tag, "tagType": "contact"}})
}

// tagIDOf finds a tag by name, case-insensitively (caller holds the lock).
func (f *ActiveCampaign) tagIDOf(name string) string {
	for _, id := range sortedKeys(f.tags) {
		if strings.EqualFold(f.tags[id], name) {
			return id
		}
	}
	return ""
}

// hasTag reports whether c carries the tag, case-insensitively.
func hasTag(c *ACContact, name string) bool {
	return slices.ContainsFunc(c.Tags, func(t string) bool { return strings.EqualFold(t, name) })
}

// POST /api/3/contactTags {"contactTag":{"contact","tag"}}: a missing contact attribute is a 422, an
// unknown contact or tag the 404 {"errors":[{"status":404,"title":"Not Found","detail":"Contact not found"}]}.
func (f *ActiveCampaign) addContactTag(w http.ResponseWriter, r *http.Request) {
	var in struct {
		ContactTag struct {
			Contact any `json:"contact"`
			Tag     any `json:"tag"`
		} `json:"contactTag"`
	}
	if !decode(w, r, &in, acBad) {
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	cid, tid := anyString(in.ContactTag.Contact), anyString(in.ContactTag.Tag)
	if cid == "" {
		writeJSON(w, http.StatusUnprocessableEntity, map[string]any{"errors": []any{map[string]any{
			"status": 422, "title": "Missing attribute", "source": map[string]string{"pointer": "/data/attributes/contact"}}}})
		return
	}
	c := f.contacts[cid]
	name, ok := f.tags[tid]
	if c == nil || !ok {
		writeJSON(w, http.StatusNotFound, map[string]any{"errors": []any{map[string]any{"status": 404, "title": "Not Found", "detail": "Contact not found"}}})
		return
	}
	if !hasTag(c, name) {
		c.Tags = append(c.Tags, name)
	}
	writeJSON(w, http.StatusCreated, map[string]any{"contactTag": map[string]any{"contact": cid, "tag": tid, "id": cid + "-" + tid}})
}

package crmfake

import (
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
)

// POST /contacts/search (v2 advanced search). The description's SearchBodyV2DTO declares nothing and
// points to GHL's search document, which gives: "locationId" and "pageLimit" (both required, answered 422
// without them), "page" (1-based) or "searchAfter" (the sort values of the last contact of the previous
// page), "query" (contains) and "filters": [{"field","operator","value"}] or groups
// {"group":"AND"|"OR","filters":[...]}, values at most 75 characters. The fake knows the fields email
// (without case), phone (as stored), firstNameLowerCase, lastNameLowerCase and id, and the operators eq,
// not_eq, contains, exists and not_exists. Contacts come sorted by dateAdded, then id, each carrying its
// "searchAfter" values: {"contacts": [...], "total": N}. Page numbers stop at 10,000 records.
func (f *GoHighLevel) searchContacts(w http.ResponseWriter, r *http.Request) {
	var in struct {
		LocationID  string            `json:"locationId"`
		Page        int               `json:"page"`
		PageLimit   int               `json:"pageLimit"`
		SearchAfter []any             `json:"searchAfter"`
		Query       string            `json:"query"`
		Filters     []json.RawMessage `json:"filters"`
	}
	if !decode(w, r, &in, ghlBad) {
		return
	}
	if !f.checkLocation(w, in.LocationID) {
		return
	}
	if in.PageLimit <= 0 {
		ghl422(w, "pageLimit should not be empty")
		return
	}
	if in.PageLimit > 500 {
		ghl422(w, "pageLimit must not be greater than 500")
		return
	}
	limit := in.PageLimit
	if in.Page == 0 && in.SearchAfter == nil {
		in.Page = 1
	}
	if in.Page > 0 && in.Page*limit > 10000 {
		ghl422(w, "page x pageLimit must not exceed 10000: use searchAfter")
		return
	}
	match, msg := ghlFilterAll("AND", in.Filters)
	if msg != "" {
		ghl422(w, msg)
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	var hits []*GHLContact
	for _, id := range f.order {
		c := f.contacts[id]
		if f.hidden[id] || !match(c) {
			continue
		}
		if in.Query != "" && !strings.Contains(strings.ToLower(c.Email+" "+c.Phone+" "+c.FirstName+" "+c.LastName), strings.ToLower(in.Query)) {
			continue
		}
		hits = append(hits, c)
	}
	start := 0
	if in.SearchAfter != nil {
		if len(in.SearchAfter) != 2 {
			ghl422(w, "searchAfter must be the [dateAdded, id] values of a contact")
			return
		}
		ms, _ := strconv.ParseInt(anyString(in.SearchAfter[0]), 10, 64)
		id := anyString(in.SearchAfter[1])
		// Resume after the contact the values name (hits are in dateAdded order); when it is gone, after
		// its time.
		start = len(hits)
		for i, c := range hits {
			if c.ID == id {
				start = i + 1
				break
			}
			if c.DateAdded.UnixMilli() > ms {
				start = i
				break
			}
		}
	} else {
		start = min((in.Page-1)*limit, len(hits))
	}
	out := []any{}
	for _, c := range hits[start:min(start+limit, len(hits))] {
		j := f.contactJSON(c)
		j["searchAfter"] = []any{c.DateAdded.UnixMilli(), c.ID}
		out = append(out, j)
	}
	writeJSON(w, http.StatusOK, map[string]any{"contacts": out, "total": len(hits)})
}

type ghlMatch func(*GHLContact) bool

// ghlFilterAll combines filters (or groups of them) with AND or OR.
func ghlFilterAll(op string, filters []json.RawMessage) (ghlMatch, string) {
	var parts []ghlMatch
	for i, raw := range filters {
		var fl struct {
			Group    string            `json:"group"`
			Filters  []json.RawMessage `json:"filters"`
			Field    string            `json:"field"`
			Operator string            `json:"operator"`
			Value    any               `json:"value"`
		}
		if err := json.Unmarshal(raw, &fl); err != nil {
			return nil, "filters." + strconv.Itoa(i) + " must be an object"
		}
		if fl.Group != "" {
			if fl.Group != "AND" && fl.Group != "OR" {
				return nil, "filters." + strconv.Itoa(i) + ".group must be one of the following values: AND, OR"
			}
			m, msg := ghlFilterAll(fl.Group, fl.Filters)
			if msg != "" {
				return nil, msg
			}
			parts = append(parts, m)
			continue
		}
		m, msg := ghlFilter(fl.Field, fl.Operator, fl.Value)
		if msg != "" {
			return nil, "filters." + strconv.Itoa(i) + ": " + msg
		}
		parts = append(parts, m)
	}
	return func(c *GHLContact) bool {
		if len(parts) == 0 {
			return true
		}
		for _, p := range parts {
			if p(c) == (op == "OR") {
				return op == "OR"
			}
		}
		return op != "OR"
	}, ""
}

func ghlFilter(field, operator string, value any) (ghlMatch, string) {
	get := map[string]func(*GHLContact) string{
		"email":              func(c *GHLContact) string { return strings.ToLower(c.Email) },
		"phone":              func(c *GHLContact) string { return c.Phone },
		"firstNameLowerCase": func(c *GHLContact) string { return strings.ToLower(c.FirstName) },
		"lastNameLowerCase":  func(c *GHLContact) string { return strings.ToLower(c.LastName) },
		"id":                 func(c *GHLContact) string { return c.ID },
	}[field]
	if get == nil {
		return nil, "field " + strconv.Quote(field) + " is not supported"
	}
	v := anyString(value)
	if field == "email" {
		v = strings.ToLower(v)
	}
	if len(v) > 75 {
		return nil, "value must be at most 75 characters"
	}
	switch operator {
	case "eq":
		return func(c *GHLContact) bool { return get(c) == v }, ""
	case "not_eq":
		return func(c *GHLContact) bool { return get(c) != v }, ""
	case "contains":
		return func(c *GHLContact) bool { return strings.Contains(strings.ToLower(get(c)), strings.ToLower(v)) }, ""
	case "exists":
		return func(c *GHLContact) bool { return get(c) != "" }, ""
	case "not_exists":
		return func(c *GHLContact) bool { return get(c) == "" }, ""
	}
	return nil, "operator " + strconv.Quote(operator) + " is not supported"
}

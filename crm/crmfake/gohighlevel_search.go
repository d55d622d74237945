package crmfake

import (
	"net/http"
	"strconv"
	"strings"
)

// POST /contacts/search (v2 advanced search): {"locationId", "pageLimit" (default 20, max 100), "page"
// (1-based) or "searchAfter" (the sort values of the last contact of the previous page), "query"
// (optional, contains)}. Contacts come sorted by dateAdded, then id; each carries its "searchAfter"
// values. Answer: {"contacts": [...], "total": N}. Page numbers stop at 10,000 records, as GHL documents.
func (f *GoHighLevel) searchContacts(w http.ResponseWriter, r *http.Request) {
	var in struct {
		LocationID  string `json:"locationId"`
		Page        int    `json:"page"`
		PageLimit   int    `json:"pageLimit"`
		SearchAfter []any  `json:"searchAfter"`
		Query       string `json:"query"`
	}
	if !decode(w, r, &in, ghlBad) {
		return
	}
	if in.LocationID == "" {
		ghl422(w, "locationId should not be empty")
		return
	}
	if !f.checkLocation(w, in.LocationID) {
		return
	}
	limit := in.PageLimit
	if limit <= 0 {
		limit = 20
	}
	if limit > 100 {
		ghl422(w, "pageLimit must not be greater than 100")
		return
	}
	if in.Page == 0 && in.SearchAfter == nil {
		in.Page = 1
	}
	if in.Page > 0 && in.Page*limit > 10000 {
		ghl422(w, "page x pageLimit must not exceed 10000: use searchAfter")
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	var hits []*GHLContact
	for _, id := range f.order {
		c := f.contacts[id]
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

// AddOpportunity stores an opportunity directly (pre-existing data); it returns its id.
func (f *GoHighLevel) AddOpportunity(o GHLOpportunity) string {
	f.mu.Lock()
	defer f.mu.Unlock()
	o.ID = "op" + f.newID()
	if o.Status == "" {
		o.Status = "open"
	}
	f.opps[o.ID] = &o
	return o.ID
}

// pageOf applies GET /opportunities/search's limit (default 20, max 100) and 1-based page, and the meta
// GHL answers with.
func pageOf(items []any, limitQ, pageQ string) ([]any, map[string]any) {
	limit, _ := strconv.Atoi(limitQ)
	if limit <= 0 {
		limit = 20
	}
	limit = min(limit, 100)
	page, _ := strconv.Atoi(pageQ)
	page = max(page, 1)
	start := min((page-1)*limit, len(items))
	end := min(start+limit, len(items))
	meta := map[string]any{"total": len(items), "currentPage": page, "nextPage": nil, "prevPage": nil}
	if end < len(items) {
		meta["nextPage"] = page + 1
	}
	if page > 1 {
		meta["prevPage"] = page - 1
	}
	return items[start:end], meta
}

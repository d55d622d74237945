package crm

import (
	"context"
	"net/http"
	"slices"
	"time"
)

// HubSpot keeps a phone as it was typed, and search's EQ compares that stored string: "+14155550134" does
// not find "(415) 555-0134". A phone-only contact is therefore searched in every form it may be stored in
// (PhoneForms, one IN filter), and a hit is ours only when it reads as the same number (samePhone). Several
// contacts share one search, a filter group each (OR): HubSpot allows 5 groups per search (its changelog;
// the description says up to 6) and about 4 searches per second per token, so searches are spaced.
const (
	hsSearchGroups   = 5
	hsSearchLimit    = 200                    // PublicObjectSearchRequest.limit: at most 200
	hsSearchMaxTotal = 10_000                 // a search pages through at most 10,000 results
	hsSearchInterval = 250 * time.Millisecond // about 4 requests/s per token
)

// searchPhones finds each phone-only item's contact (the oldest when several hold the number).
func (h *hubSpot) searchPhones(ctx context.Context, items []*hsItem, props []string) error {
	for chunk := range slices.Chunk(items, hsSearchGroups) {
		groups := make([]any, len(chunk))
		for i, it := range chunk {
			groups[i] = map[string]any{"filters": []any{phoneIn(it.c.Phone)}}
		}
		_, err := h.search(ctx, chunk, groups, props, 0, func(o hsObject) {
			v := o.values()
			for _, it := range chunk {
				if samePhone(v["phone"], it.c.Phone) && (it.id == "" || lessID(string(o.ID), it.id)) {
					it.id, it.remote = string(o.ID), v
				}
			}
		})
		if err != nil {
			return err
		}
	}
	return nil
}

// phoneIn is the filter matching every form an E.164 phone may be stored in.
func phoneIn(e164 string) map[string]any {
	forms := PhoneForms(e164)
	if len(forms) == 0 {
		forms = []string{e164}
	}
	return map[string]any{"propertyName": "phone", "operator": "IN", "values": forms}
}

// search runs one contacts search through its pages (PublicObjectSearchRequest: after, filterGroups,
// limit, properties and sorts are required), at most maxPages of them (0: all, up to 10,000 results), and
// hands each result to found. It returns the search's total. The request count is attributed to items.
func (h *hubSpot) search(ctx context.Context, items []*hsItem, groups []any, props []string, maxPages int, found func(hsObject)) (int, error) {
	after, seen, total := "0", 0, 0
	for page := 1; ; page++ {
		if err := h.searchTurn(ctx); err != nil {
			return total, err
		}
		var out struct {
			Total   int        `json:"total"`
			Results []hsObject `json:"results"`
			Paging  *struct {
				Next *struct {
					After string `json:"after"`
				} `json:"next"`
			} `json:"paging"`
		}
		in := map[string]any{"filterGroups": groups, "properties": props, "limit": hsSearchLimit, "after": after, "sorts": []string{}}
		calls := 0
		_, err := h.do(ctx, call{method: http.MethodPost, path: "/crm/v3/objects/contacts/search", in: in, out: &out}, &calls)
		addCalls(items, calls)
		if err != nil {
			return total, err
		}
		total = out.Total
		for _, o := range out.Results {
			found(o)
		}
		seen += len(out.Results)
		if out.Paging == nil || out.Paging.Next == nil || out.Paging.Next.After == "" || len(out.Results) == 0 ||
			seen >= hsSearchMaxTotal || (maxPages > 0 && page >= maxPages) {
			return total, nil
		}
		after = out.Paging.Next.After
	}
}

// searchTurn spaces this adapter's searches hsSearchInterval apart.
func (h *hubSpot) searchTurn(ctx context.Context) error {
	now := time.Now()
	h.mu.Lock()
	start := now
	if h.nextSearch.After(now) {
		start = h.nextSearch
	}
	h.nextSearch = start.Add(hsSearchInterval)
	h.mu.Unlock()
	if wait := start.Sub(now); wait > 0 {
		t := time.NewTimer(wait)
		defer t.Stop()
		select {
		case <-ctx.Done():
			return transportError(ctx, "hubspot: wait for a search turn", ctx.Err())
		case <-t.C:
		}
	}
	return nil
}

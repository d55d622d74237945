package crm

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"net/url"
	"strconv"
)

// acPage is the page size of the v3 list reads (reference/pagination: `limit` defaults to 20 and is at
// most 100; `offset` is zero-based; meta.total is the collection's size).
const acPage = 100

// acMaxPages bounds one paged read (100,000 items): a collection that never ends is an API fault.
const acMaxPages = 1000

// acListAll reads every page of the collection under key at path, and returns its items.
func acListAll[T any](ctx context.Context, api *apiClient, path string, query url.Values, key string, calls *int) ([]T, error) {
	var all []T
	for pageNo, offset := 0, 0; pageNo < acMaxPages; pageNo++ {
		q := maps.Clone(query)
		if q == nil {
			q = url.Values{}
		}
		q.Set("limit", strconv.Itoa(acPage))
		q.Set("offset", strconv.Itoa(offset))
		var raw map[string]json.RawMessage
		if _, err := api.do(ctx, call{method: http.MethodGet, path: path, query: q, out: &raw}, calls); err != nil {
			return nil, err
		}
		var items []T
		if b, ok := raw[key]; ok {
			if err := json.Unmarshal(b, &items); err != nil {
				return nil, &Error{Class: Transient, Message: fmt.Sprintf("GET %s: decode %s: %v", path, key, err)}
			}
		}
		var meta struct {
			Total flexString `json:"total"`
		}
		_ = json.Unmarshal(raw["meta"], &meta)
		all = append(all, items...)
		offset += len(items)
		total, err := strconv.Atoi(string(meta.Total))
		// A short page is the last one; so is reaching meta.total when the answer carries it.
		if len(items) < acPage || (err == nil && offset >= total) {
			return all, nil
		}
	}
	return nil, &Error{Class: Transient, Message: fmt.Sprintf("GET %s: more than %d pages", path, acMaxPages)}
}

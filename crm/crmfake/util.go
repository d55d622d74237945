package crmfake

import (
	"fmt"
	"io"
	"maps"
	"net/http"
	"slices"
	"strconv"
	"time"
)

func sortedKeys[V any](m map[string]V) []string {
	return slices.SortedFunc(maps.Keys(m), cmpID)
}

// cmpID orders numeric ids numerically, others lexically.
func cmpID(a, b string) int {
	x, e1 := strconv.Atoi(a)
	y, e2 := strconv.Atoi(b)
	if e1 == nil && e2 == nil {
		return x - y
	}
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

func cloneMap(m map[string]string) map[string]string {
	out := maps.Clone(m)
	if out == nil {
		out = map[string]string{}
	}
	return out
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// anyString renders a JSON id that may be a string or a number.
func anyString(v any) string {
	switch x := v.(type) {
	case nil:
		return ""
	case string:
		return x
	case float64:
		return strconv.FormatFloat(x, 'f', -1, 64)
	default:
		return fmt.Sprint(x)
	}
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

// page applies limit (default 20, max 100) and offset like the CRMs' list endpoints.
func page[T any](items []T, limit, offset string) []T {
	l, err := strconv.Atoi(limit)
	if err != nil || l <= 0 {
		l = 20
	}
	l = min(l, 100)
	o, _ := strconv.Atoi(offset)
	if o < 0 || o >= len(items) {
		return nil
	}
	return items[o:min(o+l, len(items))]
}

// duplicates counts keys shared by more than one item (empty keys ignored).
func duplicates[T any](items []T, key func(T) string) int {
	seen := map[string]int{}
	for _, it := range items {
		if k := key(it); k != "" {
			seen[k]++
		}
	}
	n := 0
	for _, c := range seen {
		if c > 1 {
			n++
		}
	}
	return n
}

func readAll(r *http.Request) ([]byte, error) { return io.ReadAll(io.LimitReader(r.Body, 16<<20)) }

func timeNow() time.Time { return time.Now() }

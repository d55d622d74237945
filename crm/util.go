package crm

import (
	"maps"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"
)

func sortedKeys(m map[string]string) []string { return slices.Sorted(maps.Keys(m)) }

// pathID escapes a remote id for use as one path segment.
func pathID(id string) string { return url.PathEscape(id) }

// syncStamp is the value of the sync-timestamp field: the time of the write, RFC 3339 UTC.
func syncStamp(cfg Config) string { return cfg.Now().UTC().Format(time.RFC3339) }

func atoiOr(s string, def int) int {
	if n, err := strconv.Atoi(strings.TrimSpace(s)); err == nil {
		return n
	}
	return def
}

package mapping

import (
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/tidwall/gjson"
)

// text is r as a string when r is a scalar (numbers and booleans in their JSON spelling), "" for
// null, a missing value, an object or an array: identity fields never take a JSON fragment.
func text(r gjson.Result) string {
	switch r.Type {
	case gjson.String, gjson.Number, gjson.True, gjson.False:
		return r.String()
	}
	return ""
}

// firstText is the first non-blank scalar among rs.
func firstText(rs ...gjson.Result) string {
	for _, r := range rs {
		if s := text(r); strings.TrimSpace(s) != "" {
			return s
		}
	}
	return ""
}

// putValue stores r under key in m when r is present and not null or blank.
func putValue(m map[string]any, key string, r gjson.Result) {
	if key == "" || !r.Exists() || r.Type == gjson.Null || (r.Type == gjson.String && strings.TrimSpace(r.Str) == "") {
		return
	}
	m[key] = r.Value()
}

// putText stores s under key in m when s is not blank.
func putText(m map[string]any, key, s string) {
	if key != "" && strings.TrimSpace(s) != "" {
		m[key] = s
	}
}

// mergeObject copies every member of the object r into m, keeping entries m already has.
func mergeObject(m map[string]any, r gjson.Result) {
	if !r.IsObject() {
		return
	}
	r.ForEach(func(k, v gjson.Result) bool {
		if _, taken := m[k.String()]; !taken {
			putValue(m, k.String(), v)
		}
		return true
	})
}

// joinID joins the parts of a composite delivery id, or returns "" when any part is blank, because a
// partial composite would make distinct events collide.
func joinID(parts ...string) string {
	for _, p := range parts {
		if strings.TrimSpace(p) == "" {
			return ""
		}
	}
	return strings.Join(parts, ":")
}

// splitName splits a full name at its first space: "Jane van der Berg" → "Jane", "van der Berg".
func splitName(full string) (first, last string) {
	fields := strings.Fields(full)
	if len(fields) == 0 {
		return "", ""
	}
	rest := strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(full), fields[0]))
	return fields[0], rest
}

// fillName sets first/last from full when neither is known yet.
func fillName(it *Item, full string) {
	if it.FirstName != "" || it.LastName != "" {
		return
	}
	it.FirstName, it.LastName = splitName(full)
}

// timeLayouts are the textual time formats seen in webhook payloads; zone-less ones are read as UTC.
var timeLayouts = []string{
	time.RFC3339Nano,
	"2006-01-02T15:04:05Z0700",
	"2006-01-02T15:04:05.999999999",
	"2006-01-02 15:04:05Z07:00",
	"2006-01-02 15:04:05 -0700",
	"2006-01-02 15:04:05 -07:00",
	"2006-01-02 15:04:05 MST",
	"2006-01-02 15:04:05.999999999",
	time.RFC1123Z,
	time.RFC1123,
	"2006-01-02",
}

// parseTime reads r as a time: a unix timestamp (seconds, or milliseconds when it is too large to be
// seconds), as a number or numeric string, or one of timeLayouts. Zero when r is none of these.
func parseTime(r gjson.Result) time.Time {
	switch r.Type {
	case gjson.Number:
		return unixTime(r.Float())
	case gjson.String:
		s := strings.TrimSpace(r.Str)
		if s == "" {
			return time.Time{}
		}
		if f, err := strconv.ParseFloat(s, 64); err == nil {
			return unixTime(f)
		}
		for _, layout := range timeLayouts {
			if t, err := time.Parse(layout, s); err == nil {
				return t.UTC()
			}
		}
	}
	return time.Time{}
}

// Timestamps above this are milliseconds (as seconds it would be the year 5138).
const maxUnixSeconds = 1e11

func unixTime(f float64) time.Time {
	switch {
	case f <= 0 || f != f || f > 1e15:
		return time.Time{}
	case f > maxUnixSeconds:
		return time.UnixMilli(int64(f)).UTC()
	default:
		sec := int64(f)
		return time.Unix(sec, int64((f-float64(sec))*1e9)).UTC().Truncate(time.Millisecond)
	}
}

// slug turns a label into a field key: lower-case letters and digits joined by "_", at most 64 bytes.
func slug(label string) string {
	var b strings.Builder
	pendingSep := false
	for _, r := range label {
		if unicode.IsLetter(r) || unicode.IsDigit(r) {
			if pendingSep && b.Len() > 0 {
				b.WriteByte('_')
			}
			pendingSep = false
			b.WriteRune(unicode.ToLower(r))
			continue
		}
		if r != '\'' && r != '’' {
			pendingSep = true
		}
	}
	s := b.String()
	for len(s) > 64 {
		_, size := utf8.DecodeLastRuneInString(s)
		s = s[:len(s)-size]
	}
	return strings.TrimRight(s, "_")
}

package handlers

import (
	"encoding/json"
	"net/http"
	"regexp"
	"strings"

	"github.com/leadgate/leadgate/internal/principal"
	"github.com/leadgate/leadgate/models"
)

// personalKey matches JSON keys that name personal data in lead payloads
// (email, phone, names, addresses, birth dates, IPs...).
var personalKey = regexp.MustCompile(`(?i)(e-?mail|phone|mobile|tel$|fax|name$|^name|first|last|surname|address|street|city|zip|postal|birth|dob|ssn|passport|ip$|ip_address|^ip|customer_number|from_number|to_number|number$|answer)`)

// emailLike and phoneLike catch personal values under innocent keys
// (Typeform answers, Tally fields, free text).
var (
	emailLike = regexp.MustCompile(`[^\s@"]+@[^\s@"]+\.[^\s@"]+`)
	phoneLike = regexp.MustCompile(`\+?\d[\d\s().-]{6,}\d`)
)

// MaskFor returns payload masked when the caller is a viewer: viewers read
// dashboards, not personal data (issue 8 §4).
func MaskFor(r *http.Request, payload json.RawMessage) json.RawMessage {
	p, _ := principal.From(r.Context())
	if p.Role != models.RoleViewer || len(payload) == 0 {
		return payload
	}
	return maskPersonal(payload)
}

// maskPersonal replaces personal values in a JSON document with "•••".
// Unparseable input is withheld entirely rather than shown unmasked.
func maskPersonal(doc json.RawMessage) json.RawMessage {
	var v any
	if err := json.Unmarshal(doc, &v); err != nil {
		return json.RawMessage(`"••• (masked)"`)
	}
	out, err := json.Marshal(maskValue("", v))
	if err != nil {
		return json.RawMessage(`"••• (masked)"`)
	}
	return out
}

func maskValue(key string, v any) any {
	switch t := v.(type) {
	case map[string]any:
		for k, child := range t {
			t[k] = maskValue(k, child)
		}
		return t
	case []any:
		for i, child := range t {
			t[i] = maskValue(key, child)
		}
		return t
	case string:
		if t == "" {
			return t
		}
		if key != "" && personalKey.MatchString(key) {
			return "•••"
		}
		t = emailLike.ReplaceAllString(t, "•••@•••")
		return phoneLike.ReplaceAllString(t, "•••")
	case float64:
		if key != "" && personalKey.MatchString(key) && !strings.EqualFold(key, "number") {
			return "•••"
		}
		return t
	}
	return v
}

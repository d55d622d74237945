package mapping

import (
	"bytes"
	"encoding/json"
	"mime"
	"unicode/utf8"

	"github.com/tidwall/gjson"
)

// MaxDepth is the deepest nesting of objects and arrays a body may have. Real webhook payloads stay
// well under ten levels; a deeper one is an attack or garbage.
const MaxDepth = 32

const mediaForm = "application/x-www-form-urlencoded"

// decode reads body as JSON or, per contentType, as a form, and returns the JSON document to map.
// A form body is rendered as a JSON object (see formDocument) so every preset and override path
// works on JSON alone.
func decode(kind, contentType string, body []byte) (gjson.Result, error) {
	if isForm(kind, contentType, body) {
		doc, err := formDocument(body)
		if err != nil {
			return gjson.Result{}, err
		}
		return gjson.ParseBytes(doc), nil
	}
	if !utf8.Valid(body) {
		return gjson.Result{}, malformed("invalid UTF-8")
	}
	if len(bytes.TrimSpace(body)) == 0 {
		return gjson.Result{}, malformed("empty body")
	}
	if depthExceeds(body, MaxDepth) {
		return gjson.Result{}, malformed("nesting deeper than 32 levels")
	}
	if !json.Valid(body) {
		return gjson.Result{}, malformed("invalid JSON")
	}
	return gjson.ParseBytes(body), nil
}

// isForm decides how to read the body: the declared content type wins; without one, the kinds whose
// senders post forms (Twilio, ActiveCampaign) are read as forms unless the body is plainly JSON.
func isForm(kind, contentType string, body []byte) bool {
	mediaType, _, err := mime.ParseMediaType(contentType)
	if err == nil && mediaType != "" {
		return mediaType == mediaForm
	}
	if kind != kindTwilio && kind != kindActiveCampaign {
		return false
	}
	trimmed := bytes.TrimSpace(body)
	return len(trimmed) == 0 || (trimmed[0] != '{' && trimmed[0] != '[')
}

// depthExceeds reports whether the JSON-ish text b nests objects or arrays more than max levels deep.
// It only tracks strings and brackets, so it runs before (and protects) full parsing.
func depthExceeds(b []byte, max int) bool {
	depth := 0
	inString, escaped := false, false
	for _, c := range b {
		if inString {
			switch {
			case escaped:
				escaped = false
			case c == '\\':
				escaped = true
			case c == '"':
				inString = false
			}
			continue
		}
		switch c {
		case '"':
			inString = true
		case '{', '[':
			depth++
			if depth > max {
				return true
			}
		case '}', ']':
			depth--
		}
	}
	return false
}

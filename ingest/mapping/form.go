package mapping

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/url"
	"sort"
	"strings"
	"unicode/utf8"
)

// formDocument renders an application/x-www-form-urlencoded body as a JSON object. PHP-style bracketed
// keys nest ("contact[email]=a" → {"contact":{"email":"a"}}, "tags[]=a&tags[]=b" → {"tags":["a","b"]});
// a key given several times keeps its first value; a key that collides with a nested one stays flat.
func formDocument(body []byte) ([]byte, error) {
	if !utf8.Valid(body) {
		return nil, malformed("invalid UTF-8")
	}
	values, err := url.ParseQuery(string(body))
	if err != nil {
		return nil, malformed(fmt.Sprintf("form body does not parse: %v", err))
	}
	keys := make([]string, 0, len(values))
	for k := range values {
		if !utf8.ValidString(k) {
			return nil, malformed("invalid UTF-8 in form key")
		}
		for _, v := range values[k] {
			if !utf8.ValidString(v) {
				return nil, malformed("invalid UTF-8 in form value")
			}
		}
		keys = append(keys, k)
	}
	sort.Strings(keys)
	root := map[string]any{}
	for _, k := range keys {
		path := formKeyPath(k)
		if len(path) >= MaxDepth {
			return nil, malformed("nesting deeper than 32 levels")
		}
		if !setFormValue(root, path, values[k]) {
			root[k] = values[k][0]
		}
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(root); err != nil {
		return nil, fmt.Errorf("mapping: render form as JSON: %w", err)
	}
	return bytes.TrimSpace(buf.Bytes()), nil
}

// formKeyPath splits "a[b][c]" into ["a","b","c"]; a key that is not well-formed bracket syntax is one
// literal segment.
func formKeyPath(key string) []string {
	name, rest, found := strings.Cut(key, "[")
	if !found || name == "" {
		return []string{key}
	}
	path := []string{name}
	rest = "[" + rest
	for rest != "" {
		if rest[0] != '[' {
			return []string{key}
		}
		end := strings.IndexByte(rest, ']')
		if end < 0 {
			return []string{key}
		}
		path = append(path, rest[1:end])
		rest = rest[end+1:]
	}
	return path
}

// setFormValue stores vs at path in root and reports whether it could (false on a collision between
// a value and an object at the same place). A final empty segment ("tags[]") stores all values as a list.
func setFormValue(root map[string]any, path []string, vs []string) bool {
	node := root
	for i, seg := range path {
		last := i == len(path)-1
		if last || (i == len(path)-2 && path[i+1] == "") {
			if _, taken := node[seg]; taken {
				return false
			}
			if last {
				node[seg] = vs[0]
			} else {
				list := make([]any, len(vs))
				for j, v := range vs {
					list[j] = v
				}
				node[seg] = list
			}
			return true
		}
		if seg == "" {
			return false
		}
		next, ok := node[seg]
		if !ok {
			child := map[string]any{}
			node[seg] = child
			node = child
			continue
		}
		child, isMap := next.(map[string]any)
		if !isMap {
			return false
		}
		node = child
	}
	return false
}

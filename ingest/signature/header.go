package signature

import (
	"net/http"
	"strings"
)

// headerValue returns the first value of header name, matching the name
// case-insensitively even when h was built without canonical keys. ok is false
// when the header is absent or empty.
func headerValue(h http.Header, name string) (string, bool) {
	if v := h.Get(name); v != "" {
		return v, true
	}
	for k, vs := range h {
		if strings.EqualFold(k, name) && len(vs) > 0 && vs[0] != "" {
			return vs[0], true
		}
	}
	return "", false
}

// requireHeader returns the trimmed value of header name, rejecting a missing,
// empty or oversized one.
func requireHeader(h http.Header, name string) (string, error) {
	v, ok := headerValue(h, name)
	if !ok {
		return "", reject("missing header %s", name)
	}
	if len(v) > maxHeaderLen {
		return "", reject("header %s too long", name)
	}
	v = strings.TrimSpace(v)
	if v == "" {
		return "", reject("missing header %s", name)
	}
	return v, nil
}

// setHeader sets a header on req, allocating the map when needed.
func setHeader(req *Request, name, value string) {
	if req.Header == nil {
		req.Header = http.Header{}
	}
	req.Header.Set(name, value)
}

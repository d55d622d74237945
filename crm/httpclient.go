package crm

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
)

// maxResponseBytes bounds how much of a CRM response is read.
const maxResponseBytes = 8 << 20

// apiClient sends JSON requests to one CRM account with its auth headers.
type apiClient struct {
	http   *http.Client
	base   string // without a trailing slash
	header http.Header
	// classify, when set, refines the class of a non-2xx answer with the CRM's own signals (HubSpot: a 429
	// naming its daily policy, a property the account lacks).
	classify func(e *Error, header http.Header, body []byte)
}

// call is one request: path is joined to base; in is JSON-encoded when non-nil; a 2xx body is decoded into
// out when non-nil; the response headers are stored in header when non-nil (rate-limit budgets).
type call struct {
	method string
	path   string
	query  url.Values
	in     any
	out    any
	header *http.Header
}

// do sends c and returns the HTTP status. Any non-2xx answer or transport failure is a classified *Error.
// calls (may be nil) is incremented once per request sent.
func (a *apiClient) do(ctx context.Context, c call, calls *int) (int, error) {
	op := c.method + " " + c.path
	var body io.Reader
	if c.in != nil {
		b, err := json.Marshal(c.in)
		if err != nil {
			return 0, invalidf("%s: encode body: %v", op, err)
		}
		body = bytes.NewReader(b)
	}
	u := a.base + c.path
	if len(c.query) > 0 {
		u += "?" + c.query.Encode()
	}
	req, err := http.NewRequestWithContext(ctx, c.method, u, body)
	if err != nil {
		return 0, invalidf("%s: build request: %v", op, err)
	}
	for k, v := range a.header {
		req.Header[k] = v
	}
	req.Header.Set("Accept", "application/json")
	if c.in != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if calls != nil {
		*calls++
	}
	resp, err := a.http.Do(req)
	if err != nil {
		return 0, transportError(ctx, op, err)
	}
	defer resp.Body.Close()
	if c.header != nil {
		*c.header = resp.Header
	}
	raw, err := io.ReadAll(io.LimitReader(resp.Body, maxResponseBytes))
	if err != nil {
		return resp.StatusCode, transportError(ctx, op+": read body", err)
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		e := classifyStatus(resp.StatusCode, resp.Header, raw)
		if a.classify != nil {
			a.classify(e, resp.Header, raw)
		}
		e.Message = op + ": " + e.Message
		return resp.StatusCode, e
	}
	if c.out != nil && len(bytes.TrimSpace(raw)) > 0 {
		if err := json.Unmarshal(raw, c.out); err != nil {
			// A 2xx we cannot read leaves us not knowing what happened: retry rather than dead-letter.
			return resp.StatusCode, &Error{Class: Transient, Status: resp.StatusCode,
				Message: fmt.Sprintf("%s: decode response: %v", op, err)}
		}
	}
	return resp.StatusCode, nil
}

func jsonUnmarshal(b []byte, v any) error { return json.Unmarshal(b, v) }

// flexString decodes a JSON string, number or null into a string: the CRMs disagree on whether ids are
// strings or numbers (ActiveCampaign returns both).
type flexString string

func (f *flexString) UnmarshalJSON(b []byte) error {
	s := strings.TrimSpace(string(b))
	switch {
	case s == "null":
		*f = ""
	case strings.HasPrefix(s, `"`):
		var v string
		if err := json.Unmarshal(b, &v); err != nil {
			return err
		}
		*f = flexString(v)
	default:
		if _, err := strconv.ParseFloat(s, 64); err != nil && s != "true" && s != "false" {
			return fmt.Errorf("flexString: unexpected JSON %s", s)
		}
		*f = flexString(s)
	}
	return nil
}

// trimBase removes trailing slashes from a configured base URL and checks it is absolute http(s).
func trimBase(raw, def string) (string, error) {
	s := strings.TrimRight(strings.TrimSpace(raw), "/")
	if s == "" {
		s = def
	}
	u, err := url.Parse(s)
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
		return "", fmt.Errorf("base url %q is not an absolute http(s) URL", raw)
	}
	return s, nil
}

func jsonMarshal(v any) ([]byte, error) { return json.Marshal(v) }

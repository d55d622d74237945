package hydrate

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// client sends authenticated GETs to one provider. Lead providers are not CRM destinations, so this is
// not crm's client: its *Error (Retry, RetryAfter) is what apply's hydration retries and dead letters read.
type client struct {
	http     *http.Client
	base     string
	token    string
	provider string
	header   string // "" = Authorization: Bearer; "Api-Token" for ActiveCampaign; "query" = access_token parameter
	version  string // GoHighLevel's required Version header ("" = none)
}

const maxBody = 4 << 20

// get fetches base+path into out, classifying failures as *Error.
func (c *client) get(ctx context.Context, path string, q url.Values, out any) error {
	return c.send(ctx, http.MethodGet, path, q, nil, out)
}

// send sends a request (in JSON-encoded when non-nil) and decodes the answer into out.
func (c *client) send(ctx context.Context, method, path string, q url.Values, in, out any) error {
	var reqBody io.Reader
	if in != nil {
		b, err := json.Marshal(in)
		if err != nil {
			return &Error{Provider: c.provider, Message: "encode request: " + err.Error()}
		}
		reqBody = bytes.NewReader(b)
	}
	if q == nil {
		q = url.Values{}
	}
	switch c.header {
	case "query":
		q.Set("access_token", c.token)
	}
	u := c.base + path
	if len(q) > 0 {
		u += "?" + q.Encode()
	}
	req, err := http.NewRequestWithContext(ctx, method, u, reqBody)
	if err != nil {
		return &Error{Provider: c.provider, Message: "build request: " + err.Error()}
	}
	switch c.header {
	case "":
		req.Header.Set("Authorization", "Bearer "+c.token)
	case "Api-Token":
		req.Header.Set("Api-Token", c.token)
	}
	req.Header.Set("Accept", "application/json")
	if in != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if c.version != "" {
		req.Header.Set("Version", c.version)
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return &Error{Provider: c.provider, Retry: true, Message: redact(err.Error(), c.token)}
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxBody))
	if err != nil {
		return &Error{Provider: c.provider, Status: resp.StatusCode, Retry: true, Message: "read body: " + err.Error()}
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return c.classify(resp, body)
	}
	if err := json.Unmarshal(body, out); err != nil {
		return &Error{Provider: c.provider, Status: resp.StatusCode, Retry: true, Message: "decode response: " + err.Error()}
	}
	return nil
}

// classify reads the provider's error body: Graph API {"error":{"message","code"}}, HubSpot/AC {"message"}.
func (c *client) classify(resp *http.Response, body []byte) *Error {
	e := &Error{Provider: c.provider, Status: resp.StatusCode, Message: http.StatusText(resp.StatusCode)}
	var b struct {
		Message string `json:"message"`
		Error   struct {
			Message string `json:"message"`
			Code    int    `json:"code"`
		} `json:"error"`
	}
	if json.Unmarshal(body, &b) == nil {
		if b.Error.Message != "" {
			e.Message = b.Error.Message
		} else if b.Message != "" {
			e.Message = b.Message
		}
	}
	if secs, err := strconv.Atoi(strings.TrimSpace(resp.Header.Get("Retry-After"))); err == nil && secs > 0 {
		e.RetryAfter = time.Duration(secs) * time.Second
	}
	switch {
	case resp.StatusCode == http.StatusTooManyRequests || resp.StatusCode >= 500 || resp.StatusCode == http.StatusRequestTimeout:
		e.Retry = true
	case metaThrottled[b.Error.Code]:
		// Graph API throttling answers 400/403 with these codes: a rate limit, not a bad request.
		e.Retry, e.RetryAfter = true, max(e.RetryAfter, time.Minute)
	}
	e.Message = redact(e.Message, c.token)
	return e
}

// metaThrottled are the Graph API's rate-limit error codes.
var metaThrottled = map[int]bool{4: true, 17: true, 32: true, 613: true, 80001: true, 80004: true}

func redact(s, token string) string {
	if token == "" {
		return s
	}
	return strings.ReplaceAll(s, token, "[token]")
}

// metaLead reads a lead by leadgen id: field_data holds the form's answers.
func (c *client) metaLead(ctx context.Context, leadgenID string) (Lead, error) {
	c.header = "query"
	var out struct {
		ID          string `json:"id"`
		CreatedTime string `json:"created_time"`
		AdID        string `json:"ad_id"`
		FormID      string `json:"form_id"`
		CampaignID  string `json:"campaign_id"`
		FieldData   []struct {
			Name   string   `json:"name"`
			Values []string `json:"values"`
		} `json:"field_data"`
	}
	q := url.Values{"fields": {"id,created_time,ad_id,form_id,campaign_id,field_data"}}
	if err := c.get(ctx, "/"+url.PathEscape(leadgenID), q, &out); err != nil {
		return Lead{}, err
	}
	lead := Lead{Fields: map[string]string{}}
	for _, f := range out.FieldData {
		v := strings.TrimSpace(strings.Join(f.Values, ", "))
		if v == "" {
			continue
		}
		switch strings.ToLower(f.Name) {
		case "email", "work_email":
			if lead.Email == "" {
				lead.Email = v
			}
		case "phone_number", "phone", "work_phone_number":
			if lead.Phone == "" {
				lead.Phone = v
			}
		case "first_name":
			lead.FirstName = v
		case "last_name":
			lead.LastName = v
		case "full_name":
			if lead.FirstName == "" && lead.LastName == "" {
				lead.FirstName, lead.LastName = splitName(v)
			}
		default:
			lead.Fields[f.Name] = v
		}
	}
	for k, v := range map[string]string{"ad_id": out.AdID, "form_id": out.FormID, "campaign_id": out.CampaignID} {
		if v != "" {
			lead.Fields[k] = v
		}
	}
	// A lead without email or phone is still the provider's answer, not a
	// failed fetch: the applier rejects it as having no identity, where an
	// error here would dead-letter it as hydration_failed and invite replays.
	return lead, nil
}

// hubspotProperties are read when hydrating a HubSpot contact.
var hubspotProperties = []string{"email", "phone", "mobilephone", "firstname", "lastname", "company", "lifecyclestage"}

// hubspotContact reads a contact by its object id.
func (c *client) hubspotContact(ctx context.Context, id string) (Lead, error) {
	var out hsObject
	q := url.Values{"properties": hubspotProperties} // an exploded array parameter (properties=a&properties=b)
	if err := c.get(ctx, "/crm/v3/objects/contacts/"+url.PathEscape(id), q, &out); err != nil {
		return Lead{}, err
	}
	p := out.Properties
	lead := Lead{Email: p["email"], Phone: firstNonEmpty(p["phone"], p["mobilephone"]), FirstName: p["firstname"], LastName: p["lastname"],
		Fields: map[string]string{"hubspot_id": out.ID}}
	if v := p["company"]; v != "" {
		lead.Fields["company"] = v
	}
	if v := p["lifecyclestage"]; v != "" {
		lead.Fields["lifecyclestage"] = v
	}
	return lead, nil
}

type hsObject struct {
	ID         string            `json:"id"`
	Properties map[string]string `json:"properties"`
	CreatedAt  time.Time         `json:"createdAt"`
}

func splitName(full string) (first, last string) {
	parts := strings.Fields(full)
	if len(parts) == 0 {
		return "", ""
	}
	return parts[0], strings.Join(parts[1:], " ")
}

func firstNonEmpty(vs ...string) string {
	for _, v := range vs {
		if v != "" {
			return v
		}
	}
	return ""
}

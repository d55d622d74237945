package filter

import (
	"encoding/json"
	"strings"

	"github.com/leadgate/leadgate/models"
)

// Env is what an expression sees. Identity values are normalized (lower-case
// email, E.164 phone) when they were valid, and raw otherwise. Fields,
// Attribution and Payload are JSON values (maps, slices, strings, float64,
// bool, nil); read a value that may be absent with ?. (payload?.data?.test).
//
//	email endsWith "@acme.com"
//	fields.consent != true
//	lower(first_name) in ["test", "asdf"] || payload?.test == true
type Env struct {
	Source      string         `expr:"source" json:"source,omitempty"`             // the source's name
	SourceKind  string         `expr:"source_kind" json:"source_kind,omitempty"`   // the source's kind ("standard-webhooks", "hubspot", …)
	Channel     string         `expr:"channel" json:"channel,omitempty"`           // the source's channel ("web_form", …)
	EventType   string         `expr:"event_type" json:"event_type,omitempty"`     // "form_submitted", …
	Email       string         `expr:"email" json:"email,omitempty"`               // normalized, or raw when invalid
	EmailDomain string         `expr:"email_domain" json:"email_domain,omitempty"` // the part after @, lower-case
	Phone       string         `expr:"phone" json:"phone,omitempty"`               // E.164, or raw when invalid
	FirstName   string         `expr:"first_name" json:"first_name,omitempty"`
	LastName    string         `expr:"last_name" json:"last_name,omitempty"`
	Company     string         `expr:"company" json:"company,omitempty"`
	TargetStage string         `expr:"target_stage" json:"target_stage,omitempty"`
	Fields      map[string]any `expr:"fields" json:"fields,omitempty"`
	Attribution map[string]any `expr:"attribution" json:"attribution,omitempty"`
	Payload     any            `expr:"payload" json:"payload,omitempty"` // the event's raw payload as JSON
}

// EnvFromEvent builds the environment of an inbox event (before or after it
// is stored) from the source it arrived on.
func EnvFromEvent(ev models.Event, src models.Source) Env {
	env := Env{
		Source:      src.Name,
		SourceKind:  src.Kind,
		Channel:     ev.Channel,
		EventType:   ev.EventType,
		Email:       firstOf(ev.Email, ev.EmailRaw),
		Phone:       firstOf(ev.Phone, ev.PhoneRaw),
		FirstName:   firstOf(ev.FirstName),
		LastName:    firstOf(ev.LastName),
		Company:     firstOf(ev.Company),
		TargetStage: firstOf(ev.TargetStage),
		Fields:      jsonObject(ev.Fields),
		Attribution: jsonObject(ev.Attribution),
	}
	if env.Channel == "" {
		env.Channel = src.Channel
	}
	if at := strings.LastIndexByte(env.Email, '@'); at >= 0 {
		env.EmailDomain = strings.ToLower(strings.TrimSpace(env.Email[at+1:]))
	}
	if len(ev.Payload) > 0 {
		var p any
		if json.Unmarshal(ev.Payload, &p) == nil {
			env.Payload = p
		}
	}
	return env
}

func firstOf(vals ...*string) string {
	for _, v := range vals {
		if v != nil && *v != "" {
			return *v
		}
	}
	return ""
}

// jsonObject decodes a JSON object; anything else yields an empty map so that
// fields.x is nil rather than an error.
func jsonObject(raw json.RawMessage) map[string]any {
	m := map[string]any{}
	if len(raw) > 0 {
		_ = json.Unmarshal(raw, &m)
	}
	if m == nil {
		m = map[string]any{}
	}
	return m
}

package alert

import (
	"context"
	"encoding/json"
	"time"
)

// sendPagerDuty sends a PagerDuty Events API v2 event: a trigger with
// payload{summary,source,severity,timestamp,…}, or a resolve, both under the
// message's dedup key so the resolve closes the incident the trigger opened.
// PagerDuty answers 202 {"status":"success","dedup_key":…}; 400 invalid
// event; 429 too many events.
func (s *Sender) sendPagerDuty(ctx context.Context, ch Channel, m Message) error {
	url := ch.Config.EventsURL
	if url == "" {
		url = DefaultPagerDutyURL
	}
	ev := map[string]any{"routing_key": ch.Secrets.RoutingKey, "dedup_key": truncate(m.DedupKey, 255), "event_action": "trigger"}
	if m.Resolved() {
		ev["event_action"] = "resolve"
	} else {
		sev := m.Severity
		if sev != SeverityCritical && sev != SeverityWarning {
			sev = SeverityInfo
		}
		ev["payload"] = map[string]any{
			"summary":        truncate(m.Summary(), 1024),
			"source":         s.hostname(),
			"severity":       sev,
			"timestamp":      m.At.UTC().Format(time.RFC3339),
			"component":      "leadgate",
			"group":          m.Workspace,
			"class":          m.Type,
			"custom_details": map[string]any{"text": m.Text, "details": m.Details},
		}
	}
	r, err := s.postJSON(ctx, KindPagerDuty, url, ev, nil, func(e string) string { return e })
	if err != nil {
		return err
	}
	if r.Status == 202 || r.Status == 200 {
		return nil
	}
	var ans struct {
		Status  string   `json:"status"`
		Message string   `json:"message"`
		Errors  []string `json:"errors"`
	}
	_ = json.Unmarshal(r.Body, &ans)
	msg := ans.Message
	if len(ans.Errors) > 0 {
		msg += ": " + ans.Errors[0]
	}
	return statusError(KindPagerDuty, r, truncate(msg, 200))
}

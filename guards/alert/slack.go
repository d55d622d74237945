package alert

import (
	"context"
	"strings"
)

// sendSlack posts to a Slack incoming webhook: a JSON body with "text"
// (mrkdwn). Slack answers 200 "ok", or 400 invalid_payload, 403
// action_prohibited, 404 channel_not_found / no_service, 410
// channel_is_archived, 429 with Retry-After.
func (s *Sender) sendSlack(ctx context.Context, ch Channel, m Message) error {
	icon := map[string]string{SeverityCritical: ":rotating_light:", SeverityWarning: ":warning:", SeverityInfo: ":information_source:"}[m.Severity]
	if m.Resolved() {
		icon = ":white_check_mark:"
	}
	text := icon + " *" + slackEscape(m.Summary()) + "*\n" + slackEscape(truncate(m.Plain(), 3500))
	r, err := s.postJSON(ctx, KindSlack, ch.Secrets.WebhookURL, map[string]any{"text": text}, nil, func(e string) string {
		return strings.ReplaceAll(e, ch.Secrets.WebhookURL, "<slack webhook url>")
	})
	if err != nil {
		return err
	}
	if r.Status == 200 {
		return nil
	}
	return statusError(KindSlack, r, truncate(strings.TrimSpace(string(r.Body)), 200))
}

// slackEscape escapes the three characters Slack's mrkdwn reserves.
func slackEscape(s string) string {
	return strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;").Replace(s)
}

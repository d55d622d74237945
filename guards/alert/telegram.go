package alert

import (
	"context"
	"encoding/json"
	"strings"
	"time"
)

// sendTelegram calls the Bot API's sendMessage: POST
// {api}/bot<token>/sendMessage with {"chat_id","text"}. Telegram answers
// {"ok":true,"result":…} or {"ok":false,"error_code":N,"description":…,
// "parameters":{"retry_after":S}}. The token never appears in errors.
func (s *Sender) sendTelegram(ctx context.Context, ch Channel, m Message) error {
	base := strings.TrimRight(ch.Config.APIBase, "/")
	if base == "" {
		base = DefaultTelegramAPI
	}
	url := base + "/bot" + ch.Secrets.BotToken + "/sendMessage"
	text := truncate(m.Summary()+"\n\n"+m.Plain(), 4000) // Telegram's limit is 4096 characters
	body := map[string]any{"chat_id": ch.Config.ChatID, "text": text, "disable_web_page_preview": true}
	r, err := s.postJSON(ctx, KindTelegram, url, body, nil, func(e string) string {
		return strings.ReplaceAll(e, ch.Secrets.BotToken, "<bot token>")
	})
	if err != nil {
		return err
	}
	var ans struct {
		OK          bool   `json:"ok"`
		ErrorCode   int    `json:"error_code"`
		Description string `json:"description"`
		Parameters  struct {
			RetryAfter int `json:"retry_after"`
		} `json:"parameters"`
	}
	_ = json.Unmarshal(r.Body, &ans)
	if r.Status == 200 && ans.OK {
		return nil
	}
	e := statusError(KindTelegram, r, truncate(ans.Description, 200))
	if ans.Parameters.RetryAfter > 0 {
		e.RetryAfter = time.Duration(ans.Parameters.RetryAfter) * time.Second
	}
	return e
}

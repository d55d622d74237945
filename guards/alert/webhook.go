package alert

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"strconv"
	"time"
)

// WebhookBody is what a generic webhook channel receives.
type WebhookBody struct {
	ID        string         `json:"id"`
	DedupKey  string         `json:"dedup_key"`
	Workspace string         `json:"workspace"`
	Type      string         `json:"type"`
	Action    string         `json:"action"`
	Severity  string         `json:"severity"`
	Title     string         `json:"title"`
	Text      string         `json:"text"`
	Details   map[string]any `json:"details"`
	CreatedAt time.Time      `json:"created_at"`
}

// sendWebhook POSTs the alert as JSON with Idempotency-Key = the notice's
// id; with a signing secret it adds X-Leadgate-Timestamp and
// X-Leadgate-Signature: sha256=hex(HMAC-SHA256(secret, timestamp + "." + body)).
func (s *Sender) sendWebhook(ctx context.Context, ch Channel, m Message) error {
	b, err := json.Marshal(WebhookBody{ID: m.ID, DedupKey: m.DedupKey, Workspace: m.Workspace, Type: m.Type, Action: m.Action,
		Severity: m.Severity, Title: m.Title, Text: m.Text, Details: m.Details, CreatedAt: m.At.UTC()})
	if err != nil {
		return &SendError{Channel: KindWebhook, Permanent: true, Msg: "encode body: " + err.Error()}
	}
	h := http.Header{}
	h.Set("Idempotency-Key", m.ID)
	if ch.Secrets.SigningSecret != "" {
		ts := strconv.FormatInt(time.Now().Unix(), 10)
		mac := hmac.New(sha256.New, []byte(ch.Secrets.SigningSecret))
		mac.Write([]byte(ts + "."))
		mac.Write(b)
		h.Set("X-Leadgate-Timestamp", ts)
		h.Set("X-Leadgate-Signature", "sha256="+hex.EncodeToString(mac.Sum(nil)))
	}
	r, err := s.post(ctx, KindWebhook, ch.Config.URL, b, h, func(e string) string { return e })
	if err != nil {
		return err
	}
	if r.Status >= 200 && r.Status < 300 {
		return nil
	}
	e := statusError(KindWebhook, r, truncate(string(r.Body), 200))
	e.Permanent = r.Status >= 400 && r.Status < 500 && r.Status != http.StatusRequestTimeout && r.Status != http.StatusTooManyRequests
	return e
}

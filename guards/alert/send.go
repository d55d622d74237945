package alert

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"time"
)

// SendError is a failed delivery. Permanent errors (the channel is
// misconfigured: 400/401/403/404/410) are not worth retrying.
type SendError struct {
	Channel    string
	Status     int
	Permanent  bool
	RetryAfter time.Duration
	Msg        string
}

func (e *SendError) Error() string {
	if e.Status != 0 {
		return fmt.Sprintf("%s: HTTP %d: %s", e.Channel, e.Status, e.Msg)
	}
	return e.Channel + ": " + e.Msg
}

// IsPermanent reports whether err says retrying cannot help.
func IsPermanent(err error) bool {
	var se *SendError
	if errors.As(err, &se) {
		return se.Permanent
	}
	var be *BlockedError
	return errors.As(err, &be)
}

// Sender delivers messages to channels.
type Sender struct {
	Guard *Guard
	// Hostname names this instance in e-mail Message-IDs and as the
	// PagerDuty event source (default "leadgate").
	Hostname string
}

// Send delivers m to ch once.
func (s *Sender) Send(ctx context.Context, ch Channel, m Message) error {
	switch ch.Kind {
	case KindSlack:
		return s.sendSlack(ctx, ch, m)
	case KindTelegram:
		return s.sendTelegram(ctx, ch, m)
	case KindPagerDuty:
		return s.sendPagerDuty(ctx, ch, m)
	case KindWebhook:
		return s.sendWebhook(ctx, ch, m)
	case KindEmail:
		return s.sendEmail(ctx, ch, m)
	}
	return &SendError{Channel: ch.Kind, Permanent: true, Msg: "unknown channel kind"}
}

func (s *Sender) hostname() string {
	if s.Hostname != "" {
		return s.Hostname
	}
	return "leadgate"
}

// postJSON posts body to url through the guard and classifies the answer.
// redact hides secrets (a bot token in the path) from error text.
func (s *Sender) postJSON(ctx context.Context, channel, url string, body any, header http.Header, redact func(string) string) (reply, error) {
	b, err := json.Marshal(body)
	if err != nil {
		return reply{}, &SendError{Channel: channel, Permanent: true, Msg: "encode body: " + err.Error()}
	}
	return s.post(ctx, channel, url, b, header, redact)
}

// reply is an HTTP answer, its body capped at 64 KiB.
type reply struct {
	Status int
	Header http.Header
	Body   []byte
}

func (s *Sender) post(ctx context.Context, channel, url string, b []byte, header http.Header, redact func(string) string) (reply, error) {
	if _, err := s.Guard.CheckURL(url); err != nil {
		return reply{}, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(b))
	if err != nil {
		return reply{}, &SendError{Channel: channel, Permanent: true, Msg: redact(err.Error())}
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", "leadgate-alerts/1")
	for k, v := range header {
		req.Header[k] = v
	}
	resp, err := s.Guard.Client().Do(req)
	if err != nil {
		var be *BlockedError
		if errors.As(err, &be) {
			return reply{}, be
		}
		return reply{}, &SendError{Channel: channel, Msg: redact(err.Error())}
	}
	defer resp.Body.Close()
	respBody, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	return reply{Status: resp.StatusCode, Header: resp.Header, Body: respBody}, nil
}

// statusError classifies a non-success HTTP answer.
func statusError(channel string, r reply, msg string) *SendError {
	e := &SendError{Channel: channel, Status: r.Status, Msg: msg}
	switch r.Status {
	case http.StatusBadRequest, http.StatusUnauthorized, http.StatusForbidden, http.StatusNotFound, http.StatusGone:
		e.Permanent = true
	}
	if secs, err := strconv.Atoi(r.Header.Get("Retry-After")); err == nil && secs > 0 {
		e.RetryAfter = time.Duration(secs) * time.Second
	}
	return e
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && (s[n]&0xC0) == 0x80 { // do not cut a UTF-8 sequence
		n--
	}
	return s[:n] + "…"
}

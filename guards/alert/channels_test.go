package alert_test

import (
	"bufio"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/leadgate/leadgate/guards/alert"
)

const botToken = "123456789:AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsaw"

func TestSlack(t *testing.T) {
	var got map[string]any
	status, answer := 200, "ok"
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost || r.Header.Get("Content-Type") != "application/json" {
			w.WriteHeader(400)
			io.WriteString(w, "invalid_payload")
			return
		}
		_ = json.NewDecoder(r.Body).Decode(&got)
		w.WriteHeader(status)
		io.WriteString(w, answer)
	}))
	defer srv.Close()
	s := &alert.Sender{Guard: localGuard(srv)}
	ch := alert.Channel{Kind: alert.KindSlack, Secrets: alert.Secrets{WebhookURL: srv.URL + "/services/T0/B0/secret"}}
	if err := s.Send(context.Background(), ch, message(alert.ActionTrigger)); err != nil {
		t.Fatalf("send: %v", err)
	}
	text, _ := got["text"].(string)
	if !strings.Contains(text, "Health: outbox_oldest_seconds is 4000") || !strings.Contains(text, ":warning:") {
		t.Fatalf("slack text %q", text)
	}
	status, answer = 404, "channel_not_found"
	err := s.Send(context.Background(), ch, message(alert.ActionTrigger))
	if !alert.IsPermanent(err) || !strings.Contains(err.Error(), "channel_not_found") || strings.Contains(err.Error(), "secret") {
		t.Fatalf("err %v: want a permanent error naming Slack's reason without the URL", err)
	}
	status, answer = 429, "rate_limited"
	if err := s.Send(context.Background(), ch, message(alert.ActionTrigger)); err == nil || alert.IsPermanent(err) {
		t.Fatalf("429 must be a retryable error, got %v", err)
	}
}

func TestTelegram(t *testing.T) {
	var got map[string]any
	rateLimited := false
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/bot"+botToken+"/sendMessage" {
			w.WriteHeader(404)
			io.WriteString(w, `{"ok":false,"error_code":404,"description":"Not Found"}`)
			return
		}
		_ = json.NewDecoder(r.Body).Decode(&got)
		if rateLimited {
			w.WriteHeader(429)
			io.WriteString(w, `{"ok":false,"error_code":429,"description":"Too Many Requests: retry after 7","parameters":{"retry_after":7}}`)
			return
		}
		if got["chat_id"] != "-100123" {
			w.WriteHeader(400)
			io.WriteString(w, `{"ok":false,"error_code":400,"description":"Bad Request: chat not found"}`)
			return
		}
		io.WriteString(w, `{"ok":true,"result":{"message_id":1}}`)
	}))
	defer srv.Close()
	s := &alert.Sender{Guard: localGuard(srv)}
	ch := alert.Channel{Kind: alert.KindTelegram, Config: alert.Config{ChatID: "-100123", APIBase: srv.URL}, Secrets: alert.Secrets{BotToken: botToken}}
	if err := s.Send(context.Background(), ch, message(alert.ActionResolve)); err != nil {
		t.Fatalf("send: %v", err)
	}
	if text, _ := got["text"].(string); !strings.HasPrefix(text, "[resolved] [default] ") {
		t.Fatalf("telegram text %q", text)
	}
	ch.Config.ChatID = "-999"
	err := s.Send(context.Background(), ch, message(alert.ActionTrigger))
	if !alert.IsPermanent(err) || !strings.Contains(err.Error(), "chat not found") {
		t.Fatalf("err %v, want permanent 'chat not found'", err)
	}
	rateLimited = true
	err = s.Send(context.Background(), ch, message(alert.ActionTrigger))
	var se *alert.SendError
	if !errors.As(err, &se) || se.Permanent || se.RetryAfter != 7*time.Second {
		t.Fatalf("err %#v, want retryable with retry_after 7s", err)
	}
	if strings.Contains(err.Error(), botToken) {
		t.Fatal("the bot token leaked into an error")
	}
}

func TestPagerDuty(t *testing.T) {
	var events []map[string]any
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var ev map[string]any
		if r.URL.Path != "/v2/enqueue" || json.NewDecoder(r.Body).Decode(&ev) != nil || ev["routing_key"] != "R0UTINGKEY0123456789abcdef012345" {
			w.WriteHeader(400)
			io.WriteString(w, `{"status":"invalid event","message":"Event object is invalid","errors":["Invalid routing key"]}`)
			return
		}
		if ev["event_action"] == "trigger" {
			p, _ := ev["payload"].(map[string]any)
			if p["summary"] == nil || p["source"] == nil || p["severity"] == nil {
				w.WriteHeader(400)
				io.WriteString(w, `{"status":"invalid event","message":"Event object is invalid","errors":["'payload' is missing"]}`)
				return
			}
		}
		events = append(events, ev)
		w.WriteHeader(202)
		io.WriteString(w, `{"status":"success","message":"Event processed","dedup_key":"`+ev["dedup_key"].(string)+`"}`)
	}))
	defer srv.Close()
	s := &alert.Sender{Guard: localGuard(srv), Hostname: "lg-test"}
	ch := alert.Channel{Kind: alert.KindPagerDuty, Config: alert.Config{EventsURL: srv.URL + "/v2/enqueue"}, Secrets: alert.Secrets{RoutingKey: "R0UTINGKEY0123456789abcdef012345"}}
	for _, action := range []string{alert.ActionTrigger, alert.ActionResolve} {
		if err := s.Send(context.Background(), ch, message(action)); err != nil {
			t.Fatalf("%s: %v", action, err)
		}
	}
	if len(events) != 2 || events[0]["event_action"] != "trigger" || events[1]["event_action"] != "resolve" ||
		events[0]["dedup_key"] != events[1]["dedup_key"] || events[0]["dedup_key"] != message("").DedupKey {
		t.Fatalf("events %v: want trigger then resolve under one dedup key", events)
	}
	if p := events[0]["payload"].(map[string]any); p["severity"] != "warning" || p["source"] != "lg-test" {
		t.Fatalf("payload %v", p)
	}
	ch.Secrets.RoutingKey = "WRONGKEY0123456789abcdef01234567"
	if err := s.Send(context.Background(), ch, message(alert.ActionTrigger)); !alert.IsPermanent(err) || !strings.Contains(err.Error(), "Invalid routing key") {
		t.Fatalf("err %v, want permanent invalid routing key", err)
	}
}

func TestWebhookSignedWithIdempotencyKey(t *testing.T) {
	var body []byte
	var header http.Header
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ = io.ReadAll(r.Body)
		header = r.Header
		w.WriteHeader(204)
	}))
	defer srv.Close()
	s := &alert.Sender{Guard: localGuard(srv)}
	ch := alert.Channel{Kind: alert.KindWebhook, Config: alert.Config{URL: srv.URL + "/alerts"}, Secrets: alert.Secrets{SigningSecret: "s3cret"}}
	m := message(alert.ActionTrigger)
	if err := s.Send(context.Background(), ch, m); err != nil {
		t.Fatal(err)
	}
	var wb alert.WebhookBody
	if err := json.Unmarshal(body, &wb); err != nil || wb.DedupKey != m.DedupKey || wb.ID != m.ID || wb.Action != "trigger" {
		t.Fatalf("body %s (%v)", body, err)
	}
	if header.Get("Idempotency-Key") != m.ID {
		t.Fatalf("Idempotency-Key %q, want %q", header.Get("Idempotency-Key"), m.ID)
	}
	mac := hmac.New(sha256.New, []byte("s3cret"))
	mac.Write([]byte(header.Get("X-Leadgate-Timestamp") + "."))
	mac.Write(body)
	if header.Get("X-Leadgate-Signature") != "sha256="+hex.EncodeToString(mac.Sum(nil)) {
		t.Fatalf("signature %q does not verify", header.Get("X-Leadgate-Signature"))
	}
}

// smtpServer is a minimal in-test SMTP server (RFC 5321 subset: EHLO,
// MAIL, RCPT, DATA, QUIT) that records the messages it accepts.
type smtpServer struct {
	ln       net.Listener
	mu       sync.Mutex
	messages []smtpMessage
}

type smtpMessage struct {
	From string
	To   []string
	Data string
}

func newSMTPServer(t *testing.T) *smtpServer {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := &smtpServer{ln: ln}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go s.serve(c)
		}
	}()
	return s
}

func (s *smtpServer) port() int { return s.ln.Addr().(*net.TCPAddr).Port }

func (s *smtpServer) serve(c net.Conn) {
	defer c.Close()
	r := bufio.NewReader(c)
	say := func(line string) { io.WriteString(c, line+"\r\n") }
	say("220 test.local ESMTP")
	var m smtpMessage
	for {
		line, err := r.ReadString('\n')
		if err != nil {
			return
		}
		cmd := strings.ToUpper(strings.TrimSpace(line))
		switch {
		case strings.HasPrefix(cmd, "EHLO"), strings.HasPrefix(cmd, "HELO"):
			say("250-test.local")
			say("250 8BITMIME")
		case strings.HasPrefix(cmd, "MAIL FROM:"):
			from, _, _ := strings.Cut(strings.TrimSpace(line)[10:], " ") // drop parameters like BODY=8BITMIME
			m = smtpMessage{From: strings.Trim(from, "<>")}
			say("250 OK")
		case strings.HasPrefix(cmd, "RCPT TO:"):
			to := strings.Trim(strings.TrimSpace(line)[8:], "<>")
			if strings.HasPrefix(to, "nobody@") {
				say("550 5.1.1 No such user")
				continue
			}
			m.To = append(m.To, to)
			say("250 OK")
		case cmd == "DATA":
			say("354 End data with <CR><LF>.<CR><LF>")
			var data strings.Builder
			for {
				l, err := r.ReadString('\n')
				if err != nil {
					return
				}
				if l == ".\r\n" {
					break
				}
				data.WriteString(l)
			}
			m.Data = data.String()
			s.mu.Lock()
			s.messages = append(s.messages, m)
			s.mu.Unlock()
			say("250 OK queued")
		case cmd == "QUIT":
			say("221 Bye")
			return
		default:
			say("502 Command not implemented")
		}
	}
}

func TestEmail(t *testing.T) {
	srv := newSMTPServer(t)
	g := &alert.Guard{AllowedHosts: []string{"127.0.0.1"}}
	s := &alert.Sender{Guard: g, Hostname: "lg-test"}
	ch := alert.Channel{Kind: alert.KindEmail, Config: alert.Config{SMTPHost: "127.0.0.1", SMTPPort: srv.port(), SMTPTLS: "none",
		From: "leadgate <alerts@example.com>", To: []string{"ops@example.com", "Oncall <oncall@example.com>"}}}
	if err := ch.Validate(g); err != nil {
		t.Fatalf("validate: %v", err)
	}
	m := message(alert.ActionTrigger)
	m.Title = "Health: Größe überschritten"
	if err := s.Send(context.Background(), ch, m); err != nil {
		t.Fatalf("send: %v", err)
	}
	srv.mu.Lock()
	msgs := srv.messages
	srv.mu.Unlock()
	if len(msgs) != 1 {
		t.Fatalf("%d messages, want 1", len(msgs))
	}
	got := msgs[0]
	if got.From != "alerts@example.com" || strings.Join(got.To, ",") != "ops@example.com,oncall@example.com" {
		t.Fatalf("envelope %+v", got)
	}
	for _, want := range []string{"Subject: =?utf-8?q?", "X-Leadgate-Dedup-Key: " + m.DedupKey, "Message-ID: <", "@lg-test>",
		"Content-Transfer-Encoding: quoted-printable", "Age of the oldest outbox row"} {
		if !strings.Contains(got.Data, want) {
			t.Errorf("message lacks %q:\n%s", want, got.Data)
		}
	}

	// The default (STARTTLS required) refuses a server that does not offer it.
	ch.Config.SMTPTLS = ""
	if err := s.Send(context.Background(), ch, m); !alert.IsPermanent(err) || !strings.Contains(err.Error(), "STARTTLS") {
		t.Fatalf("err %v, want a permanent STARTTLS error", err)
	}
	// A 5xx reply is permanent.
	ch.Config.SMTPTLS, ch.Config.To = "none", []string{"nobody@example.com"}
	if err := s.Send(context.Background(), ch, m); !alert.IsPermanent(err) {
		t.Fatalf("err %v, want permanent for 550", err)
	}
	// Plain SMTP to a host that is not allowed is refused at validation and at dial time.
	open := &alert.Guard{}
	ch.Config.To = []string{"ops@example.com"}
	if err := ch.Validate(open); err == nil {
		t.Fatal("validation accepted an SMTP server on loopback without an allowlist entry")
	}
	if err := (&alert.Sender{Guard: open}).Send(context.Background(), ch, m); !alert.IsPermanent(err) {
		t.Fatalf("err %v, want blocked", err)
	}
}

func TestValidate(t *testing.T) {
	g := &alert.Guard{}
	cases := []struct {
		ch    alert.Channel
		field string
	}{
		{alert.Channel{Kind: "fax"}, "kind"},
		{alert.Channel{Kind: alert.KindSlack, Secrets: alert.Secrets{WebhookURL: "http://hooks.slack.com/x"}}, "secrets.webhook_url"},
		{alert.Channel{Kind: alert.KindSlack}, "secrets.webhook_url"},
		{alert.Channel{Kind: alert.KindWebhook, Config: alert.Config{URL: "https://192.168.0.10/hook"}}, "config.url"},
		{alert.Channel{Kind: alert.KindTelegram, Config: alert.Config{ChatID: "1"}, Secrets: alert.Secrets{BotToken: "nope"}}, "secrets.bot_token"},
		{alert.Channel{Kind: alert.KindTelegram, Config: alert.Config{ChatID: "x y"}, Secrets: alert.Secrets{BotToken: botToken}}, "config.chat_id"},
		{alert.Channel{Kind: alert.KindPagerDuty, Secrets: alert.Secrets{RoutingKey: "short"}}, "secrets.routing_key"},
		{alert.Channel{Kind: alert.KindEmail, Config: alert.Config{SMTPHost: "smtp.example.com", From: "a@example.com", To: []string{"x\r\nBcc: evil@example.com"}}}, "config.to[0]"},
		{alert.Channel{Kind: alert.KindEmail, Config: alert.Config{SMTPHost: "smtp.example.com", SMTPTLS: "none", From: "a@example.com", To: []string{"b@example.com"}}}, "config.smtp_tls"},
		{alert.Channel{Kind: alert.KindWebhook, MinSeverity: "urgent", Config: alert.Config{URL: "https://example.com"}}, "min_severity"},
	}
	for _, tc := range cases {
		err := tc.ch.Validate(g)
		var fe *alert.FieldError
		if !errors.As(err, &fe) || fe.Field != tc.field {
			t.Errorf("%+v: err %v, want a FieldError on %s", tc.ch, err, tc.field)
		}
	}
	ok := alert.Channel{Kind: alert.KindTelegram, Config: alert.Config{ChatID: "@leadgate_ops"}, Secrets: alert.Secrets{BotToken: botToken}}
	if err := ok.Validate(g); err != nil {
		t.Errorf("valid telegram channel refused: %v", err)
	}
}

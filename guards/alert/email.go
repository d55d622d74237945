package alert

import (
	"bytes"
	"context"
	"crypto/sha256"
	"crypto/tls"
	"encoding/hex"
	"errors"
	"fmt"
	"mime"
	"mime/quotedprintable"
	"net"
	"net/mail"
	"net/smtp"
	"net/textproto"
	"strconv"
	"strings"
	"time"
)

// sendEmail delivers m over SMTP (net/smtp): STARTTLS by default (refused
// when the server does not offer it), implicit TLS for "tls", plain only for
// allowlisted hosts with "none". The connection goes through the guard.
func (s *Sender) sendEmail(ctx context.Context, ch Channel, m Message) error {
	cfg := ch.Config
	port := cfg.SMTPPort
	if port == 0 {
		port = 587
		if cfg.SMTPTLS == "tls" {
			port = 465
		}
	}
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	conn, err := s.Guard.DialContext(ctx, "tcp", net.JoinHostPort(cfg.SMTPHost, strconv.Itoa(port)))
	if err != nil {
		if be, ok := asBlocked(err); ok {
			return be
		}
		return &SendError{Channel: KindEmail, Msg: "connect: " + err.Error()}
	}
	if dl, ok := ctx.Deadline(); ok {
		_ = conn.SetDeadline(dl)
	}
	tlsCfg := &tls.Config{ServerName: cfg.SMTPHost, MinVersion: tls.VersionTLS12}
	if s.Guard.TLS != nil {
		tlsCfg = s.Guard.TLS.Clone()
		tlsCfg.ServerName = cfg.SMTPHost
	}
	if cfg.SMTPTLS == "tls" {
		conn = tls.Client(conn, tlsCfg)
	}
	c, err := smtp.NewClient(conn, cfg.SMTPHost)
	if err != nil {
		conn.Close()
		return &SendError{Channel: KindEmail, Msg: "greeting: " + err.Error()}
	}
	defer c.Close()
	if err := s.smtpSession(c, ch, m, tlsCfg); err != nil {
		return err
	}
	return nil
}

func (s *Sender) smtpSession(c *smtp.Client, ch Channel, m Message, tlsCfg *tls.Config) error {
	cfg := ch.Config
	fail := func(step string, err error) error {
		var reply *textproto.Error
		// 5yz replies are permanent (bad recipient, auth refused); 4yz and I/O errors are worth a retry.
		permanent := errors.As(err, &reply) && reply.Code >= 500
		return &SendError{Channel: KindEmail, Permanent: permanent, Msg: step + ": " + err.Error()}
	}
	if err := c.Hello(s.hostname()); err != nil {
		return fail("HELO", err)
	}
	if cfg.SMTPTLS == "" || cfg.SMTPTLS == "starttls" {
		if ok, _ := c.Extension("STARTTLS"); !ok {
			return &SendError{Channel: KindEmail, Permanent: true, Msg: "the server does not offer STARTTLS; set smtp_tls to tls, or none for an allowed internal relay"}
		}
		if err := c.StartTLS(tlsCfg); err != nil {
			return fail("STARTTLS", err)
		}
	}
	if cfg.Username != "" {
		if err := c.Auth(smtp.PlainAuth("", cfg.Username, ch.Secrets.Password, cfg.SMTPHost)); err != nil {
			return fail("AUTH", err)
		}
	}
	from, _ := mail.ParseAddress(cfg.From)
	if err := c.Mail(from.Address); err != nil {
		return fail("MAIL FROM", err)
	}
	var to []string
	for _, raw := range cfg.To {
		a, err := mail.ParseAddress(raw)
		if err != nil {
			return &SendError{Channel: KindEmail, Permanent: true, Msg: fmt.Sprintf("recipient %q: %v", raw, err)}
		}
		if err := c.Rcpt(a.Address); err != nil {
			return fail("RCPT TO "+a.Address, err)
		}
		to = append(to, a.String())
	}
	w, err := c.Data()
	if err != nil {
		return fail("DATA", err)
	}
	if _, err := w.Write(s.emailBytes(from.String(), to, m)); err != nil {
		return fail("DATA", err)
	}
	if err := w.Close(); err != nil {
		return fail("DATA", err)
	}
	return c.Quit()
}

// emailBytes renders an RFC 5322 message: encoded subject, a Message-ID
// derived from the notice id (a resend is recognisably the same mail) and a
// quoted-printable UTF-8 body.
func (s *Sender) emailBytes(from string, to []string, m Message) []byte {
	var b bytes.Buffer
	sum := sha256.Sum256([]byte(m.ID))
	header := func(k, v string) { fmt.Fprintf(&b, "%s: %s\r\n", k, oneLine(v)) }
	header("From", from)
	header("To", strings.Join(to, ", "))
	header("Subject", mime.QEncoding.Encode("utf-8", truncate(m.Summary(), 200)))
	header("Date", m.At.UTC().Format(time.RFC1123Z))
	header("Message-ID", "<"+hex.EncodeToString(sum[:16])+"@"+s.hostname()+">")
	header("X-Leadgate-Dedup-Key", m.DedupKey)
	header("MIME-Version", "1.0")
	header("Content-Type", "text/plain; charset=utf-8")
	header("Content-Transfer-Encoding", "quoted-printable")
	b.WriteString("\r\n")
	qp := quotedprintable.NewWriter(&b)
	_, _ = qp.Write([]byte(strings.ReplaceAll(m.Plain(), "\n", "\r\n")))
	_ = qp.Close()
	return b.Bytes()
}

// oneLine keeps header values from injecting headers.
func oneLine(v string) string { return strings.NewReplacer("\r", " ", "\n", " ").Replace(v) }

func asBlocked(err error) (*BlockedError, bool) {
	var be *BlockedError
	ok := errors.As(err, &be)
	return be, ok
}

package alert

import (
	"fmt"
	"net/mail"
	"regexp"
	"strings"
)

// Channel kinds.
const (
	KindEmail     = "email"
	KindWebhook   = "webhook"
	KindSlack     = "slack"
	KindTelegram  = "telegram"
	KindPagerDuty = "pagerduty"
)

// Public endpoints used when a channel does not override them.
const (
	DefaultTelegramAPI  = "https://api.telegram.org"
	DefaultPagerDutyURL = "https://events.pagerduty.com/v2/enqueue"
)

// Config is a channel's non-secret configuration, stored as JSON and
// returned by the API.
type Config struct {
	// webhook
	URL string `json:"url,omitempty"`
	// telegram
	ChatID  string `json:"chat_id,omitempty"`
	APIBase string `json:"api_base,omitempty"` // default https://api.telegram.org
	// pagerduty
	EventsURL string `json:"events_url,omitempty"` // default https://events.pagerduty.com/v2/enqueue
	// email
	SMTPHost string   `json:"smtp_host,omitempty"`
	SMTPPort int      `json:"smtp_port,omitempty"` // default 587
	SMTPTLS  string   `json:"smtp_tls,omitempty"`  // starttls (default) | tls | none (allowed hosts only)
	Username string   `json:"username,omitempty"`
	From     string   `json:"from,omitempty"`
	To       []string `json:"to,omitempty"`
}

// Secrets are sealed with secretbox and never returned.
type Secrets struct {
	WebhookURL    string `json:"webhook_url,omitempty"`    // slack: the incoming-webhook URL
	SigningSecret string `json:"signing_secret,omitempty"` // webhook: HMAC key for X-Leadgate-Signature (optional)
	BotToken      string `json:"bot_token,omitempty"`      // telegram
	RoutingKey    string `json:"routing_key,omitempty"`    // pagerduty: the integration's routing key
	Password      string `json:"password,omitempty"`       // email: SMTP password
}

// Names lists which secrets are set, for the API (never their values).
func (s Secrets) Names() []string {
	out := []string{}
	for _, p := range []struct{ name, v string }{{"webhook_url", s.WebhookURL}, {"signing_secret", s.SigningSecret},
		{"bot_token", s.BotToken}, {"routing_key", s.RoutingKey}, {"password", s.Password}} {
		if p.v != "" {
			out = append(out, p.name)
		}
	}
	return out
}

// Merge keeps the current secrets for every field the update leaves empty,
// so an edit need not resend them.
func (s Secrets) Merge(update Secrets) Secrets {
	pick := func(cur, upd string) string {
		if upd != "" {
			return upd
		}
		return cur
	}
	return Secrets{WebhookURL: pick(s.WebhookURL, update.WebhookURL), SigningSecret: pick(s.SigningSecret, update.SigningSecret),
		BotToken: pick(s.BotToken, update.BotToken), RoutingKey: pick(s.RoutingKey, update.RoutingKey), Password: pick(s.Password, update.Password)}
}

// Channel is one configured destination for alerts.
type Channel struct {
	ID          int64
	Kind        string
	Name        string
	MinSeverity string
	Config      Config
	Secrets     Secrets
}

// FieldError names the field at fault in a channel configuration.
type FieldError struct {
	Field   string
	Message string
}

func (e *FieldError) Error() string { return e.Field + ": " + e.Message }

var (
	telegramToken = regexp.MustCompile(`^[0-9]{3,15}:[A-Za-z0-9_-]{20,100}$`)
	telegramChat  = regexp.MustCompile(`^(-?[0-9]{1,20}|@[A-Za-z][A-Za-z0-9_]{4,31})$`)
	routingKey    = regexp.MustCompile(`^[A-Za-z0-9]{20,64}$`)
)

// Validate checks a channel's configuration and secrets, including the SSRF
// rules for every URL and host it will reach.
func (c Channel) Validate(g *Guard) error {
	switch c.MinSeverity {
	case "", SeverityInfo, SeverityWarning, SeverityCritical:
	default:
		return &FieldError{"min_severity", "min_severity must be info, warning or critical"}
	}
	checkURL := func(field, raw string, required bool) error {
		if raw == "" {
			if required {
				return &FieldError{field, field + " is required"}
			}
			return nil
		}
		if _, err := g.CheckURL(raw); err != nil {
			return &FieldError{field, err.Error()}
		}
		return nil
	}
	switch c.Kind {
	case KindSlack:
		if err := checkURL("secrets.webhook_url", c.Secrets.WebhookURL, true); err != nil {
			return err
		}
	case KindWebhook:
		if err := checkURL("config.url", c.Config.URL, true); err != nil {
			return err
		}
	case KindTelegram:
		if !telegramToken.MatchString(c.Secrets.BotToken) {
			return &FieldError{"secrets.bot_token", "bot_token must look like 123456789:AA… as BotFather gives it"}
		}
		if !telegramChat.MatchString(c.Config.ChatID) {
			return &FieldError{"config.chat_id", "chat_id must be a numeric chat id (negative for groups) or @channelname"}
		}
		if err := checkURL("config.api_base", c.Config.APIBase, false); err != nil {
			return err
		}
	case KindPagerDuty:
		if !routingKey.MatchString(c.Secrets.RoutingKey) {
			return &FieldError{"secrets.routing_key", "routing_key must be the 32-character integration key of a PagerDuty Events API v2 integration"}
		}
		if err := checkURL("config.events_url", c.Config.EventsURL, false); err != nil {
			return err
		}
	case KindEmail:
		return c.validateEmail(g)
	default:
		return &FieldError{"kind", "kind must be one of email, webhook, slack, telegram, pagerduty"}
	}
	return nil
}

func (c Channel) validateEmail(g *Guard) error {
	cfg := c.Config
	if cfg.SMTPHost == "" || strings.ContainsAny(cfg.SMTPHost, "/:@ \r\n") {
		return &FieldError{"config.smtp_host", "smtp_host must be a host name or IP address"}
	}
	if err := g.CheckHost(cfg.SMTPHost); err != nil {
		return &FieldError{"config.smtp_host", err.Error()}
	}
	if cfg.SMTPPort < 0 || cfg.SMTPPort > 65535 {
		return &FieldError{"config.smtp_port", "smtp_port must be a TCP port"}
	}
	switch cfg.SMTPTLS {
	case "", "starttls", "tls":
	case "none":
		if !g.Allows(cfg.SMTPHost) {
			return &FieldError{"config.smtp_tls", `smtp_tls "none" sends mail unencrypted and is allowed only for hosts an admin allowed`}
		}
	default:
		return &FieldError{"config.smtp_tls", "smtp_tls must be starttls, tls or none"}
	}
	if _, err := mail.ParseAddress(cfg.From); err != nil || strings.ContainsAny(cfg.From, "\r\n") {
		return &FieldError{"config.from", "from must be an e-mail address"}
	}
	if len(cfg.To) == 0 || len(cfg.To) > 20 {
		return &FieldError{"config.to", "to must list 1-20 e-mail addresses"}
	}
	for i, to := range cfg.To {
		if _, err := mail.ParseAddress(to); err != nil || strings.ContainsAny(to, "\r\n") {
			return &FieldError{fmt.Sprintf("config.to[%d]", i), fmt.Sprintf("%q is not an e-mail address", to)}
		}
	}
	if strings.ContainsAny(cfg.Username, "\r\n") {
		return &FieldError{"config.username", "username must be on one line"}
	}
	return nil
}

// severityRank orders severities for a channel's minimum.
func severityRank(s string) int {
	switch s {
	case SeverityCritical:
		return 3
	case SeverityWarning:
		return 2
	default:
		return 1
	}
}

// Wants reports whether the channel takes an alert of severity sev.
func (c Channel) Wants(sev string) bool { return severityRank(sev) >= severityRank(c.MinSeverity) }

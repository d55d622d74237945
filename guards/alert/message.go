package alert

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/leadgate/leadgate/models"
)

// Message is one alert ready to send: the payload completed with where it
// comes from. ID is unique per notice (the outbox stable id); DedupKey is
// the incident key shared by a trigger and its resolve.
type Message struct {
	ID        string
	DedupKey  string
	Workspace string
	Type      string
	Action    string
	Severity  string
	Title     string
	Text      string
	Details   map[string]any
	At        time.Time
}

// Resolved reports whether the message closes an incident.
func (m Message) Resolved() bool { return m.Action == ActionResolve }

// FromOutbox reads an alert outbox row, whoever wrote it. The dedup key is
// namespaced by workspace so that two workspaces never share an incident.
func FromOutbox(row models.OutboxRow, workspace string) Message {
	var p Payload
	_ = json.Unmarshal(row.Payload, &p)
	var raw map[string]any
	_ = json.Unmarshal(row.Payload, &raw)
	m := Message{ID: row.StableID, Workspace: workspace, Type: p.Type, Action: p.Action, Severity: p.Severity,
		Title: p.Title, Text: p.Text, Details: p.Details, At: row.CreatedAt}
	if m.Type == "" {
		m.Type = "alert"
	}
	if m.Action != ActionResolve {
		m.Action = ActionTrigger
	}
	switch m.Severity {
	case SeverityInfo, SeverityWarning, SeverityCritical:
	default:
		m.Severity = SeverityWarning
	}
	key := p.DedupKey
	if key == "" {
		key = row.StableID
	}
	m.DedupKey = "leadgate:" + workspace + ":" + key
	if m.Details == nil {
		// Other engines' payloads (dead_letter alerts) are their details.
		m.Details = map[string]any{}
		for k, v := range raw {
			if k != "title" && k != "text" && k != "severity" && k != "action" && k != "dedup_key" {
				m.Details[k] = v
			}
		}
	}
	if m.Title == "" {
		m.Title = defaultTitle(m.Type, raw)
	}
	if m.Text == "" {
		if r, _ := raw["reason"].(string); r != "" {
			m.Text = r
		}
	}
	return m
}

func defaultTitle(typ string, raw map[string]any) string {
	switch typ {
	case "dead_letter":
		kind, _ := raw["kind"].(string)
		return "Dead letter: " + strings.ReplaceAll(kind, "_", " ")
	default:
		return "leadgate alert: " + strings.ReplaceAll(typ, "_", " ")
	}
}

// Plain renders the message as text for e-mail, Slack and Telegram.
func (m Message) Plain() string {
	var b strings.Builder
	if m.Text != "" {
		b.WriteString(m.Text)
		b.WriteString("\n\n")
	}
	fmt.Fprintf(&b, "Workspace: %s\nSeverity: %s\nKey: %s\nAt: %s\n", m.Workspace, m.Severity, m.DedupKey, m.At.UTC().Format(time.RFC3339))
	return b.String()
}

// Summary is the one-line form (title with workspace and status).
func (m Message) Summary() string {
	prefix := ""
	if m.Resolved() {
		prefix = "[resolved] "
	}
	return fmt.Sprintf("%s[%s] %s", prefix, m.Workspace, m.Title)
}

// TestMessage is what "test send" delivers.
func TestMessage(workspace string, now time.Time) Message {
	return Message{ID: fmt.Sprintf("test:%d", now.UnixNano()), DedupKey: fmt.Sprintf("leadgate:%s:test:%d", workspace, now.UnixNano()),
		Workspace: workspace, Type: "test", Action: ActionTrigger, Severity: SeverityInfo,
		Title: "Test alert from leadgate", Text: "If you can read this, alerts from leadgate reach this channel.", Details: map[string]any{}, At: now}
}

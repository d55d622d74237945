package ingest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/leadgate/leadgate/ingest/mapping"
	"github.com/leadgate/leadgate/ingest/normalize"
	"github.com/leadgate/leadgate/models"
)

// lead is one mapped item after normalization.
type lead struct {
	item          mapping.Item
	eventType     string
	occurredAt    time.Time
	occurredGiven bool
	email, phone  normalize.Value
	firstName     string
	lastName      string
	company       string
	targetStage   string
	fields        map[string]any
}

// normalizeItem applies identity normalization. Invalid values are kept raw
// and flagged (never silently dropped).
func normalizeItem(it mapping.Item, cfg models.SourceConfig, now time.Time, phones *normalize.PhoneCache) *lead {
	l := &lead{
		item:        it,
		eventType:   cleanText(it.EventType),
		occurredAt:  it.OccurredAt,
		email:       normalize.Email(cleanText(it.Email)),
		phone:       phones.Phone(cleanText(it.Phone), cfg.DefaultRegion),
		firstName:   normalize.Name(cleanText(it.FirstName)),
		lastName:    normalize.Name(cleanText(it.LastName)),
		company:     strings.TrimSpace(cleanText(it.Company)),
		targetStage: strings.TrimSpace(cleanText(it.TargetStage)),
		fields:      it.Fields,
	}
	if l.eventType == "" {
		l.eventType = cfg.DefaultEventType
	}
	l.occurredGiven = !l.occurredAt.IsZero()
	if !l.occurredGiven || l.occurredAt.After(now.Add(24*time.Hour)) {
		l.occurredAt = now // a missing or absurd future time is replaced by arrival time
	}
	if cfg.VerifiesPhone && l.phone.Valid {
		if l.fields == nil {
			l.fields = map[string]any{}
		}
		if _, set := l.fields["phone_verified"]; !set {
			l.fields["phone_verified"] = true
		}
	}
	return l
}

// identifiable reports whether the lead can become a contact, or will once it
// is hydrated from the provider.
func (l *lead) identifiable() bool {
	return l.email.Valid || l.phone.Valid || l.item.Hydrate != nil
}

// rejectReason explains why an item cannot become a lead.
func (l *lead) rejectReason() string {
	var parts []string
	if l.email.Raw != "" {
		parts = append(parts, fmt.Sprintf("email %q: %s", l.email.Raw, l.email.Problem))
	}
	if l.phone.Raw != "" {
		parts = append(parts, fmt.Sprintf("phone %q: %s", l.phone.Raw, l.phone.Problem))
	}
	if len(parts) == 0 {
		return "no email or phone in the payload"
	}
	return "no usable email or phone (" + strings.Join(parts, "; ") + ")"
}

// event builds the inbox row for the lead.
func (l *lead) event(id string, src models.Source, contentType string, now time.Time) (models.Event, error) {
	ev := models.Event{
		ID:           id,
		WorkspaceID:  src.WorkspaceID,
		SourceID:     src.ID,
		EventType:    l.eventType,
		Channel:      src.Channel,
		OccurredAt:   l.occurredAt.UTC(),
		ReceivedAt:   now.UTC(),
		Email:        opt(l.email.Value),
		EmailRaw:     opt(l.email.Raw),
		EmailProblem: optIf(!l.email.Valid && l.email.Raw != "", l.email.Problem),
		Phone:        opt(l.phone.Value),
		PhoneRaw:     opt(l.phone.Raw),
		PhoneProblem: optIf(!l.phone.Valid && l.phone.Raw != "", l.phone.Problem),
		FirstName:    opt(l.firstName),
		LastName:     opt(l.lastName),
		Company:      opt(l.company),
		TargetStage:  opt(l.targetStage),
		CurrentStage: opt(cleanText(l.item.CurrentStage)),
		ContentType:  contentType,
		Status:       models.EventPending,
	}
	var err error
	if ev.Fields, err = jsonb(l.fields); err != nil {
		return ev, err
	}
	if ev.Attribution, err = jsonb(l.item.Attribution); err != nil {
		return ev, err
	}
	if l.item.Hydrate != nil {
		if ev.Hydration, err = json.Marshal(l.item.Hydrate); err != nil {
			return ev, err
		}
	}
	if len(l.item.RuleOverrides) > 0 {
		ev.RuleOverrides = pgSafeJSON(l.item.RuleOverrides)
	}
	ev.Payload = pgSafeJSON(l.item.Raw)
	if !l.identifiable() {
		ev.Status, ev.Reason = models.EventRejected, l.rejectReason()
		ev.ProcessedAt = &now
	}
	return ev, nil
}

func jsonb(m map[string]any) (json.RawMessage, error) {
	if len(m) == 0 {
		return json.RawMessage(`{}`), nil
	}
	b, err := json.Marshal(m)
	if err != nil {
		return nil, fmt.Errorf("ingest: encode fields: %w", err)
	}
	return pgSafeJSON(b), nil
}

// pgSafeJSON replaces \u0000, which Postgres jsonb refuses, with U+FFFD.
func pgSafeJSON(b json.RawMessage) json.RawMessage {
	if len(b) == 0 {
		return nil
	}
	if bytes.Contains(b, []byte(`\u0000`)) {
		b = bytes.ReplaceAll(b, []byte(`\u0000`), []byte(`\ufffd`))
	}
	return b
}

// cleanText removes NUL bytes, which Postgres text columns refuse.
func cleanText(s string) string { return strings.ReplaceAll(s, "\x00", "") }

func opt(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

func optIf(cond bool, s string) *string {
	if !cond {
		return nil
	}
	return &s
}

func stringify(v any) string {
	switch t := v.(type) {
	case string:
		return t
	case nil:
		return ""
	default:
		b, _ := json.Marshal(t)
		return string(b)
	}
}

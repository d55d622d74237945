// Package loop keeps leadgate and a CRM from feeding each other forever: it
// recognises the CRM's echo of leadgate's own writes (IsEcho) and holds a
// contact whose events keep coming anyway (Breaker).
package loop

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/leadgate/leadgate/models"
)

// Source kinds whose events are the CRM's own change notifications.
var crmKinds = map[string]bool{"hubspot": true, "activecampaign": true, "gohighlevel": true, "crm-event": true}

// IsCRMSource reports whether events of this source kind can be echoes of
// leadgate's writes (and, when they are not, are human corrections).
func IsCRMSource(kind string) bool { return crmKinds[kind] }

// Change is a CRM-originated event as the loop guard sees it.
type Change struct {
	SourceKind string
	// Fields are the event's fields: the loop-breaker flag and sync
	// timestamp, HubSpot's changeSource/sourceId, custom fields.
	Fields map[string]any
	// Values are what the event proposes, in leadgate's names ("stage",
	// "first_name", custom field names), compared with what leadgate last
	// wrote for the contact.
	Values map[string]string
}

// Verdict is the loop guard's answer for one change.
type Verdict struct {
	Echo   bool
	Reason string // why it is an echo, for the event's reason ("loop_suppressed: …")
}

// EventReason is what an echo's event records as its reason; its outcome is
// "dropped" (CONTRACT.md: a filter or the loop guard).
func (v Verdict) EventReason() string {
	if !v.Echo {
		return ""
	}
	return "loop_suppressed: " + v.Reason
}

// IsEcho decides whether a CRM change is the echo of leadgate's own write:
//
//   - it carries the loop-breaker flag (LoopField = LoopValue) with a
//     SyncField timestamp no older than the echo window (a stale flag is just
//     what the record still holds from an earlier sync, so a rep's later
//     edit is not an echo) — unless a value leadgate wrote now differs: a
//     full-record webhook of a rep's edit made minutes after our sync still
//     carries our flag, and that edit must be applied;
//   - HubSpot marks it as made by leadgate's app (sourceId in OwnSourceIDs);
//   - or every value it proposes equals what leadgate last wrote for the
//     contact (lastWritten, nil when unknown) within the echo window.
//
// Anything else from a CRM is a genuine change (a human correction).
func IsEcho(c Change, s models.LoopSettings, lastWritten map[string]string, now time.Time) Verdict {
	s = s.WithDefaults()
	if s.EchoDisabled || !IsCRMSource(c.SourceKind) {
		return Verdict{}
	}
	if v, ok := flagged(c.Fields, s, now); ok {
		if _, differs := changedSinceWritten(c.Values, lastWritten); differs {
			return Verdict{}
		}
		return v
	}
	if strings.EqualFold(c.SourceKind, "hubspot") {
		if id := text(lookup(c.Fields, "sourceId")); id != "" {
			for _, own := range s.OwnSourceIDs {
				if strings.EqualFold(id, own) {
					return Verdict{Echo: true, Reason: fmt.Sprintf("HubSpot reports the change as made by leadgate (changeSource %s, sourceId %s)", text(lookup(c.Fields, "changeSource")), id)}
				}
			}
		}
	}
	if sameAsWritten(c.Values, lastWritten) {
		return Verdict{Echo: true, Reason: "every value equals what leadgate itself just wrote"}
	}
	return Verdict{}
}

// flagged checks the loop-breaker flag and its timestamp.
func flagged(fields map[string]any, s models.LoopSettings, now time.Time) (Verdict, bool) {
	if !strings.EqualFold(strings.TrimSpace(text(lookup(fields, s.LoopField))), s.LoopValue) {
		return Verdict{}, false
	}
	raw := strings.TrimSpace(text(lookup(fields, s.SyncField)))
	at, ok := parseTimestamp(raw)
	if !ok {
		return Verdict{}, false
	}
	age := now.Sub(at)
	if age > s.EchoWindow() || age < -s.EchoWindow() {
		return Verdict{}, false
	}
	return Verdict{Echo: true, Reason: fmt.Sprintf("%s=%s with %s %s (%s ago, window %s)", s.LoopField, s.LoopValue, s.SyncField, raw,
		age.Round(time.Second), s.EchoWindow())}, true
}

// changedSinceWritten reports a value leadgate wrote that the change
// carries with a different value.
func changedSinceWritten(proposed, written map[string]string) (field string, differs bool) {
	for k, v := range proposed {
		if w, ok := written[k]; ok && !strings.EqualFold(strings.TrimSpace(w), strings.TrimSpace(v)) {
			return k, true
		}
	}
	return "", false
}

func sameAsWritten(proposed, written map[string]string) bool {
	if len(proposed) == 0 || len(written) == 0 {
		return false
	}
	for k, v := range proposed {
		w, ok := written[k]
		if !ok || !strings.EqualFold(strings.TrimSpace(w), strings.TrimSpace(v)) {
			return false
		}
	}
	return true
}

// lookup finds key in fields case-insensitively, also as the last segment of
// a dotted key ("contact.last_automation_source") and one level down in
// nested objects ("properties", "customData").
func lookup(fields map[string]any, key string) any {
	if key == "" {
		return nil
	}
	if v, ok := fields[key]; ok {
		return v
	}
	for k, v := range fields {
		if strings.EqualFold(k, key) || strings.HasSuffix(strings.ToLower(k), "."+strings.ToLower(key)) {
			return v
		}
	}
	for _, v := range fields {
		if m, ok := v.(map[string]any); ok {
			if found := lookup(m, key); found != nil {
				return found
			}
		}
	}
	return nil
}

func text(v any) string {
	switch t := v.(type) {
	case nil:
		return ""
	case string:
		return t
	case float64:
		return strconv.FormatFloat(t, 'f', -1, 64)
	case map[string]any:
		// HubSpot's property objects: {"value": …}
		return text(t["value"])
	default:
		return fmt.Sprint(t)
	}
}

// parseTimestamp reads RFC 3339 (what leadgate writes), a date-time without
// zone (some CRMs drop it; read as UTC) or Unix seconds / milliseconds.
func parseTimestamp(s string) (time.Time, bool) {
	if s == "" {
		return time.Time{}, false
	}
	for _, layout := range []string{time.RFC3339Nano, "2006-01-02T15:04:05", "2006-01-02 15:04:05"} {
		if t, err := time.Parse(layout, s); err == nil {
			return t, true
		}
	}
	if n, err := strconv.ParseInt(s, 10, 64); err == nil && n > 0 {
		if n > 1e12 {
			return time.UnixMilli(n), true
		}
		return time.Unix(n, 0), true
	}
	return time.Time{}, false
}

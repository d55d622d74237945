package ingest

import (
	"crypto/sha256"
	"encoding/hex"
	"strconv"
	"strings"
	"time"
)

// DefaultDedupeFields are hashed when a sender has no stable delivery id.
var defaultDedupeFields = []string{"email", "event_type", "occurred_at"}

// idempotencyKey returns the item's key and whether it is a windowed content
// hash. A provider's delivery id is scoped by source kind, so the same event
// reaching two sources of the same provider counts once per workspace.
func idempotencyKey(kind, deliveryID string, workspaceID, sourceID int64, fields []string, l *lead) (string, bool) {
	if deliveryID != "" {
		return kind + ":" + deliveryID, false
	}
	if len(fields) == 0 {
		fields = defaultDedupeFields
	}
	h := sha256.New()
	h.Write([]byte(strconv.FormatInt(workspaceID, 10)))
	h.Write([]byte{0})
	h.Write([]byte(strconv.FormatInt(sourceID, 10)))
	for _, f := range fields {
		h.Write([]byte{0})
		h.Write([]byte(f))
		h.Write([]byte{'='})
		h.Write([]byte(l.dedupeValue(f)))
	}
	return hex.EncodeToString(h.Sum(nil)), true
}

// dedupeValue is the normalized value of one dedupe field.
func (l *lead) dedupeValue(field string) string {
	switch field {
	case "email":
		if l.email.Value == "" {
			return "phone:" + l.phone.Value // a phone-only lead still dedupes on identity
		}
		return l.email.Value
	case "phone":
		return l.phone.Value
	case "event_type":
		return l.eventType
	case "occurred_at":
		if !l.occurredGiven {
			return ""
		}
		return l.occurredAt.UTC().Format(time.RFC3339Nano)
	case "target_stage":
		return l.targetStage
	}
	if v, ok := l.fields[strings.TrimPrefix(field, "fields.")]; ok {
		return stringify(v)
	}
	return ""
}

package models

import (
	"bytes"
	"encoding/json"
	"time"
)

// eventPayloadJSON is an event as a dead letter keeps it: the canonical
// lowercase names leadgate maps every provider to, and under "payload" the
// delivery exactly as the provider sent it (its own field names).
type eventPayloadJSON struct {
	EventID      string          `json:"event_id"`
	SourceID     int64           `json:"source_id"`
	EventType    string          `json:"event_type"`
	Channel      string          `json:"channel,omitempty"`
	OccurredAt   time.Time       `json:"occurred_at"`
	ReceivedAt   time.Time       `json:"received_at"`
	Email        *string         `json:"email,omitempty"`
	Phone        *string         `json:"phone,omitempty"`
	FirstName    *string         `json:"first_name,omitempty"`
	LastName     *string         `json:"last_name,omitempty"`
	Company      *string         `json:"company,omitempty"`
	TargetStage  *string         `json:"target_stage,omitempty"`
	CurrentStage *string         `json:"current_stage,omitempty"`
	Fields       json.RawMessage `json:"fields,omitempty"`
	Attribution  json.RawMessage `json:"attribution,omitempty"`
	Payload      json.RawMessage `json:"payload,omitempty"`
}

// DeadLetterEventPayload is the payload a dead letter keeps for an event.
func DeadLetterEventPayload(ev Event) json.RawMessage {
	b, err := json.Marshal(eventPayloadJSON{EventID: ev.ID, SourceID: ev.SourceID, EventType: ev.EventType, Channel: ev.Channel,
		OccurredAt: ev.OccurredAt, ReceivedAt: ev.ReceivedAt, Email: ev.Email, Phone: ev.Phone, FirstName: ev.FirstName,
		LastName: ev.LastName, Company: ev.Company, TargetStage: ev.TargetStage, CurrentStage: ev.CurrentStage,
		Fields: nullIfEmpty(ev.Fields), Attribution: nullIfEmpty(ev.Attribution), Payload: nullIfEmpty(ev.Payload)})
	if err != nil {
		return nil
	}
	return b
}

// DeadLetterPayloadForDisplay shows a dead letter's payload under the
// provider's and leadgate's field names. Older dead letters kept the event
// under Go's field names ("EmailRaw", "WorkspaceID"); they are shown as a
// new one would be. Anything else is returned as stored.
func DeadLetterPayloadForDisplay(raw json.RawMessage) json.RawMessage {
	if len(raw) == 0 || !bytes.Contains(raw, []byte(`"WorkspaceID"`)) || !bytes.Contains(raw, []byte(`"IdempotencyKey"`)) {
		return raw
	}
	var ev Event
	if err := json.Unmarshal(raw, &ev); err != nil {
		return raw
	}
	return DeadLetterEventPayload(ev)
}

func nullIfEmpty(b json.RawMessage) json.RawMessage {
	if len(b) == 0 || string(b) == "null" {
		return nil
	}
	return b
}

package mapping

import (
	"encoding/json"
	"time"
)

// Item is one lead event found in a webhook body.
type Item struct {
	// DeliveryID is the provider's stable id for this event, identical across the provider's retries, or
	// "" when the payload carries none; it is used as the idempotency key.
	DeliveryID string
	// EventType is the provider's name for what happened ("form_submitted", "invitee.created", …).
	EventType string
	// OccurredAt is when the event happened per the payload, in UTC; zero when the payload has no time.
	OccurredAt time.Time
	// Identity and profile values exactly as found; normalization happens later.
	Email, Phone, FirstName, LastName, Company string
	// TargetStage is the stage the payload explicitly asks for, if any.
	TargetStage string
	// CurrentStage is the stage a crm-event payload says the contact is in now.
	CurrentStage string
	// Fields holds custom fields (budget, phone_verified, consent, provider ids …). Never nil.
	Fields map[string]any
	// Attribution holds utm_* values, campaign, ad and form ids. Never nil.
	Attribution map[string]any
	// Hydrate is non-nil for id-only payloads whose lead data must be fetched from the provider's API.
	Hydrate *Hydration
	// RuleOverrides is a crm-event payload's "state_machine_rules" object; nil otherwise.
	RuleOverrides json.RawMessage
	// Raw is this item's own part of a multi-event payload, or the whole document (form bodies as their
	// JSON rendering), without secrets. Override paths are evaluated against it.
	Raw json.RawMessage
}

// Hydration names the provider object that holds an id-only event's lead data.
type Hydration struct {
	Provider string // "meta", "hubspot"
	Object   string // "leadgen", "contact", …
	ID       string
}

func newItem() Item {
	return Item{Fields: map[string]any{}, Attribution: map[string]any{}}
}

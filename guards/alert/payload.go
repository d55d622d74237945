package alert

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/leadgate/leadgate/models"
)

// Severities, lowest first.
const (
	SeverityInfo     = "info"
	SeverityWarning  = "warning"
	SeverityCritical = "critical"
)

// Actions: an alert opens (trigger) or closes (resolve) an incident; both
// carry the same DedupKey, so PagerDuty resolves what it opened.
const (
	ActionTrigger = "trigger"
	ActionResolve = "resolve"
)

// Payload is the JSON body of an outbox row of kind "alert" written by the
// guards. Rows written by other engines may carry only some of these fields
// (the lifecycle engine's dead-letter alerts carry type, kind and reason);
// FromOutbox fills in the rest.
type Payload struct {
	Type     string         `json:"type"`                // "silence", "health", "loop_suspected", "deadman", "dead_letter", "test", …
	Action   string         `json:"action,omitempty"`    // trigger (default) | resolve
	Severity string         `json:"severity,omitempty"`  // info | warning | critical
	DedupKey string         `json:"dedup_key,omitempty"` // incident key shared by trigger and resolve
	Title    string         `json:"title,omitempty"`
	Text     string         `json:"text,omitempty"`
	Details  map[string]any `json:"details,omitempty"`
}

// OutboxRow wraps p as an alert outbox row with a stable id: writing the
// same stableID twice is a no-op (models.Store.OutboxAdd).
func OutboxRow(workspaceID int64, contactID *string, stableID string, p Payload) (models.OutboxRow, error) {
	b, err := json.Marshal(p)
	if err != nil {
		return models.OutboxRow{}, fmt.Errorf("alert: encode payload: %w", err)
	}
	return models.OutboxRow{WorkspaceID: workspaceID, ContactID: contactID, Kind: models.OutboxAlert,
		StableID: stableID, Action: "alert", Payload: b}, nil
}

// Enqueue writes p to the outbox through st (a transaction, so the alert
// commits with the state change that caused it); it reports whether the row
// is new.
func Enqueue(ctx context.Context, st *models.Store, workspaceID int64, contactID *string, stableID string, p Payload) (bool, error) {
	row, err := OutboxRow(workspaceID, contactID, stableID, p)
	if err != nil {
		return false, err
	}
	return st.OutboxAdd(ctx, row)
}

package spool

import (
	"encoding/json"
	"errors"
	"time"
)

// Record is one ingested event waiting in the spool for Postgres to return.
type Record struct {
	// ID is the event id already answered to the sender.
	ID          string `json:"id"`
	WorkspaceID int64  `json:"workspace_id"`
	SourceID    int64  `json:"source_id"`
	// IdempotencyKey is indexed per workspace for Lookup; empty means "none".
	IdempotencyKey string `json:"idempotency_key,omitempty"`
	// Data is the full event row the ingest layer inserts on replay.
	Data json.RawMessage `json:"data"`
	// SpooledAt is set by Append when zero.
	SpooledAt time.Time `json:"spooled_at"`
}

// indexKey identifies an idempotency key; keys are unique per workspace.
type indexKey struct {
	workspaceID int64
	key         string
}

func (r Record) indexKey() (indexKey, bool) {
	if r.IdempotencyKey == "" {
		return indexKey{}, false
	}
	return indexKey{workspaceID: r.WorkspaceID, key: r.IdempotencyKey}, true
}

func (r Record) validate() error {
	if r.ID == "" {
		return errors.New("record has no id")
	}
	return nil
}

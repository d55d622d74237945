package sandbox

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"time"

	"gorm.io/gorm"
)

// Contacts lists the sandbox's records newest first; after is a record id cursor (0: from the newest).
func (s *Sandbox) Contacts(ctx context.Context, after int64, limit int) ([]Record, error) {
	return List(ctx, s.db, s.destID, after, limit)
}

// List lists the records of a sandbox destination newest first without building a Sandbox (browsing).
func List(ctx context.Context, db *gorm.DB, destinationID, after int64, limit int) ([]Record, error) {
	var out []Record
	q := db.WithContext(ctx).Where("destination_id = ?", destinationID).Order("id DESC").Limit(limit)
	if after > 0 {
		q = q.Where("id < ?", after)
	}
	if err := q.Find(&out).Error; err != nil {
		return nil, fmt.Errorf("sandbox: list contacts: %w", err)
	}
	return out, nil
}

// Contact returns one record by remote id.
func (s *Sandbox) Contact(ctx context.Context, remoteID string) (Record, error) {
	var r Record
	id, err := strconv.ParseInt(remoteID, 10, 64)
	if err != nil {
		return r, fmt.Errorf("sandbox: remote id %q is not a sandbox id", remoteID)
	}
	if err := s.db.WithContext(ctx).Where("destination_id = ? AND id = ?", s.destID, id).Take(&r).Error; err != nil {
		return r, fmt.Errorf("sandbox: contact %s: %w", remoteID, err)
	}
	return r, nil
}

// HumanEdit changes one field of a record as a person in the CRM's UI would (no loop-breaker flag).
func (s *Sandbox) HumanEdit(ctx context.Context, remoteID, field, value string) error {
	return s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		r, err := (&Sandbox{db: tx, destID: s.destID}).Contact(ctx, remoteID)
		if err != nil {
			return err
		}
		v := r.Values()
		v[field] = value
		r.apply(v)
		r.UpdatedAt = time.Now().UTC()
		return tx.Save(&r).Error
	})
}

// AddRecord inserts a record directly (a CRM's pre-existing contact, for imports and tests).
func (s *Sandbox) AddRecord(ctx context.Context, r Record) (Record, error) {
	r.DestinationID = s.destID
	if r.Fields == nil {
		r.Fields = map[string]string{}
	}
	if r.Tags == nil {
		r.Tags = []string{}
	}
	if r.Notes == nil {
		r.Notes = []string{}
	}
	now := time.Now().UTC()
	r.CreatedAt, r.UpdatedAt = now, now
	if err := s.db.WithContext(ctx).Create(&r).Error; err != nil {
		return r, fmt.Errorf("sandbox: add record: %w", err)
	}
	return r, nil
}

// Action is a native action the sandbox ran (tag, automation, task) under its stable id.
type Action struct {
	StableID  string            `json:"stable_id"`
	ContactID *string           `json:"contact_id"`
	Action    string            `json:"action"`
	Params    map[string]string `json:"params" gorm:"serializer:json;type:jsonb"`
	At        time.Time         `json:"at"`
}

// RunAction records a side effect once per stable id: a repeat is a no-op. It passes through the same
// rate limit and injected faults as any request.
func (s *Sandbox) RunAction(ctx context.Context, stableID, contactID, action string, params map[string]string) error {
	if err := s.admit(ctx); err != nil {
		return err
	}
	var cid *string
	if contactID != "" {
		cid = &contactID
	}
	if params == nil {
		params = map[string]string{}
	}
	p, _ := jsonMarshal(params)
	err := s.db.WithContext(ctx).Exec(`INSERT INTO sandbox_actions (destination_id, stable_id, contact_id, action, params) VALUES (?, ?, ?, ?, ?)
		ON CONFLICT (destination_id, stable_id) DO NOTHING`, s.destID, stableID, cid, action, p).Error
	if err != nil {
		return fmt.Errorf("sandbox: run action %s: %w", stableID, err)
	}
	return nil
}

// Actions lists the actions run, oldest first.
func (s *Sandbox) Actions(ctx context.Context) ([]Action, error) {
	var out []Action
	if err := s.db.WithContext(ctx).Table("sandbox_actions").Where("destination_id = ?", s.destID).Order("id").Find(&out).Error; err != nil {
		return nil, fmt.Errorf("sandbox: actions: %w", err)
	}
	return out, nil
}

func jsonMarshal(v any) ([]byte, error) { return json.Marshal(v) }

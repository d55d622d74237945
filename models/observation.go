package models

import (
	"context"
	"fmt"
	"time"
)

// Observation is one proposed value of one contact field, with provenance.
type Observation struct {
	ID             int64
	WorkspaceID    int64
	ContactID      string `gorm:"type:uuid"`
	Field          string
	Value          string
	Source         string
	ObservedAt     time.Time
	Basis          string
	Human          bool
	ExplicitDelete bool
	EventID        *string `gorm:"type:uuid"`
	Actor          string
	CreatedAt      time.Time
}

// ObservationsAdd stores observations; an event's observation of a field is
// stored once, so a repeated delivery or a replay adds nothing.
func (s *Store) ObservationsAdd(ctx context.Context, obs []Observation) error {
	for _, o := range obs {
		err := s.db.WithContext(ctx).Exec(`INSERT INTO observations
			(workspace_id, contact_id, field, value, source, observed_at, basis, human, explicit_delete, event_id, actor)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
			ON CONFLICT (contact_id, field, event_id) WHERE event_id IS NOT NULL DO NOTHING`,
			o.WorkspaceID, o.ContactID, o.Field, o.Value, o.Source, o.ObservedAt, o.Basis, o.Human, o.ExplicitDelete, o.EventID, o.Actor).Error
		if err != nil {
			return fmt.Errorf("models: add observation: %w", err)
		}
	}
	return nil
}

// ObservationsForContact returns all observations of a contact, oldest first.
func (s *Store) ObservationsForContact(ctx context.Context, contactID string) ([]Observation, error) {
	var out []Observation
	if err := s.db.WithContext(ctx).Where("contact_id = ?", contactID).Order("id").Find(&out).Error; err != nil {
		return nil, fmt.Errorf("models: observations: %w", err)
	}
	return out, nil
}

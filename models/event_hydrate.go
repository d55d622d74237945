package models

import (
	"context"
	"encoding/json"
	"fmt"
	"time"
)

// EventHydration is what a provider returned for an id-only event.
type EventHydration struct {
	Email, EmailRaw, Phone, PhoneRaw, FirstName, LastName string
	Fields                                                json.RawMessage
	// Status is set (rejected) when the lead still has no identity.
	Status, Reason string
}

// EventHydrate stores a hydrated identity on a still-unresolved event and
// returns the event as it now is.
func (s *Store) EventHydrate(ctx context.Context, id string, h EventHydration) (Event, error) {
	updates := map[string]any{"email": nilIfEmpty(h.Email), "email_raw": nilIfEmpty(h.EmailRaw), "phone": nilIfEmpty(h.Phone),
		"phone_raw": nilIfEmpty(h.PhoneRaw), "first_name": nilIfEmpty(h.FirstName), "last_name": nilIfEmpty(h.LastName)}
	if len(h.Fields) > 0 {
		updates["fields"] = h.Fields
	}
	if h.Status != "" {
		updates["status"], updates["reason"], updates["processed_at"] = h.Status, h.Reason, time.Now().UTC()
	}
	res := s.db.WithContext(ctx).Model(&Event{}).Where("id = ? AND status IN ?", id, []string{EventPending, EventWaiting, EventRetrying}).Updates(updates)
	if res.Error != nil {
		return Event{}, fmt.Errorf("models: hydrate event %s: %w", id, res.Error)
	}
	return s.EventByID(ctx, id)
}

func nilIfEmpty(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

// EventRehydrate stores a hydrated identity on a quarantined id-only event
// that has none yet (a hydration dead letter about to be replayed).
func (s *Store) EventRehydrate(ctx context.Context, id string, h EventHydration) error {
	updates := map[string]any{"email": nilIfEmpty(h.Email), "email_raw": nilIfEmpty(h.EmailRaw), "phone": nilIfEmpty(h.Phone),
		"phone_raw": nilIfEmpty(h.PhoneRaw), "first_name": nilIfEmpty(h.FirstName), "last_name": nilIfEmpty(h.LastName)}
	if len(h.Fields) > 0 {
		updates["fields"] = h.Fields
	}
	err := s.db.WithContext(ctx).Model(&Event{}).Where("id = ? AND status = ? AND email IS NULL AND phone IS NULL", id, EventQuarantined).
		Updates(updates).Error
	if err != nil {
		return fmt.Errorf("models: rehydrate event %s: %w", id, err)
	}
	return nil
}

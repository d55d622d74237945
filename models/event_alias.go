package models

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
)

// EventAliasAdd records that an acknowledged event id stands for another,
// stored event (see migration 00006).
func (s *Store) EventAliasAdd(ctx context.Context, workspaceID int64, alias, eventID string) error {
	err := s.db.WithContext(ctx).Exec(`INSERT INTO event_aliases (alias_id, event_id, workspace_id) VALUES (?, ?, ?) ON CONFLICT DO NOTHING`,
		alias, eventID, workspaceID).Error
	if err != nil {
		return fmt.Errorf("models: event alias: %w", err)
	}
	return nil
}

// EventResolveAlias returns the stored event an acknowledged id stands for, or ErrNotFound.
func (s *Store) EventResolveAlias(ctx context.Context, workspaceID int64, alias string) (string, error) {
	var id string
	err := s.db.WithContext(ctx).Raw(`SELECT event_id FROM event_aliases WHERE workspace_id = ? AND alias_id = ?`, workspaceID, alias).Row().Scan(&id)
	if errors.Is(err, sql.ErrNoRows) {
		return "", ErrNotFound
	}
	if err != nil {
		return "", fmt.Errorf("models: resolve event alias: %w", err)
	}
	return id, nil
}

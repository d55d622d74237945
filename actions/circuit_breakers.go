package actions

import (
	"context"
	"errors"
	"fmt"

	"github.com/google/uuid"

	"github.com/leadgate/leadgate/models"
)

// ResetBreaker closes a contact's tripped circuit breaker: its events flow again (its held dead letters
// stay for an operator to replay or discard).
func (g *Guards) ResetBreaker(ctx context.Context, ws models.Workspace, actor, contactID string) (models.CircuitBreaker, error) {
	if _, err := uuid.Parse(contactID); err != nil {
		return models.CircuitBreaker{}, Invalid("contact", "contact must be a contact id")
	}
	var after models.CircuitBreaker
	err := g.Store.Tx(ctx, func(tx *models.Store) error {
		var err error
		if after, err = tx.BreakerResetRow(ctx, ws.ID, contactID, actor); err != nil {
			return err
		}
		return tx.AuditRecord(ctx, models.Audit{WorkspaceID: ws.ID, Actor: actor, Action: "guards.breaker.reset",
			SubjectType: "contact", SubjectID: contactID, Before: map[string]string{"status": models.BreakerTripped}, After: after})
	})
	if errors.Is(err, models.ErrNotFound) {
		return models.CircuitBreaker{}, NotFound("contact", "this contact's circuit breaker is not tripped")
	}
	if err != nil {
		return models.CircuitBreaker{}, fmt.Errorf("reset circuit breaker of contact %s: %w", contactID, err)
	}
	if g.Breaker != nil {
		if err := g.Breaker.Clear(ctx, ws.ID, contactID); err != nil {
			return models.CircuitBreaker{}, errors.Join(errors.New("reset recorded, but its Redis count could not be cleared; retry"), err)
		}
	}
	return after, nil
}

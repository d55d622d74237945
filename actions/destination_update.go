package actions

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/leadgate/leadgate/crm"
	"github.com/leadgate/leadgate/models"
)

// UpdateDestination edits d (as loaded from its workspace) with the fields in gives; in.Paused true
// pauses it (work is held), false resumes it (work drains at once). The edit, the pause or resume and the
// audit entry share one transaction, and the cached adapter is dropped so the next call sees the edit. It
// answers the destination as stored afterwards.
func (s *Destinations) UpdateDestination(ctx context.Context, d models.Destination, actor string, in DestinationInput) (models.Destination, error) {
	if in.Kind != nil && strings.ToLower(strings.TrimSpace(*in.Kind)) != d.Kind {
		return models.Destination{}, Invalid("kind", "the kind of a destination cannot change; create another one")
	}
	before := ViewDestination(d)
	token := in.apply(&d)
	if err := validateDestination(d, token != "" || len(d.APITokenEnc) > 0); err != nil {
		return models.Destination{}, err
	}
	// Only a base_url given in this edit is checked, so a stored one the guard has since come to refuse
	// does not block other edits, such as a pause.
	if msg := EgressRefusal(s.Egress, d.BaseURL); msg != "" && d.Kind != crm.KindSandbox && in.BaseURL != nil {
		return models.Destination{}, Invalid("base_url", msg)
	}
	if token != "" {
		sealed, err := s.Box.Seal(token)
		if err != nil {
			return models.Destination{}, fmt.Errorf("update destination %d: seal its api token: %w", d.ID, err)
		}
		d.APITokenEnc = sealed
	}
	err := s.Store.Tx(ctx, func(tx *models.Store) error {
		if err := tx.DestinationUpdate(ctx, &d); err != nil {
			return err
		}
		if in.Paused != nil && *in.Paused && (!d.Paused || d.PauseCause != models.PauseOperator) {
			// An operator's pause, even over one the system started: the probe never resumes it.
			if err := tx.DestinationPauseByOperator(ctx, d.ID, "paused by "+actor); err != nil {
				return err
			}
			d.Paused = true
		} else if in.Paused != nil && !*in.Paused && d.Paused {
			if err := tx.DestinationResume(ctx, d.ID); err != nil {
				return err
			}
			d.Paused, d.PausedReason = false, ""
		}
		after := map[string]any{"destination": ViewDestination(d)}
		if token != "" {
			after["api_token"] = "changed"
		}
		return tx.AuditRecord(ctx, models.Audit{WorkspaceID: d.WorkspaceID, Actor: actor, Action: "destination.update",
			SubjectType: "destination", SubjectID: strconv.FormatInt(d.ID, 10), Before: before, After: after})
	})
	if err != nil {
		return models.Destination{}, fmt.Errorf("update destination %d: %w", d.ID, err)
	}
	s.Connector.Forget(d.ID)
	if in.Paused != nil && !*in.Paused {
		s.kick(ctx)
	}
	fresh, err := s.Store.DestinationByID(ctx, d.ID)
	if err != nil {
		return models.Destination{}, fmt.Errorf("update destination %d: read it back: %w", d.ID, err)
	}
	return fresh, nil
}

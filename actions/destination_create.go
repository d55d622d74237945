package actions

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/leadgate/leadgate/crm"
	"github.com/leadgate/leadgate/models"
)

// CreateDestination adds a destination to workspace wsID: it checks in as the destination would be saved,
// seals its token and stores it with its audit entry in one transaction. It answers the new id.
func (s *Destinations) CreateDestination(ctx context.Context, wsID int64, actor string, in DestinationInput) (int64, error) {
	if in.Paused != nil {
		return 0, Invalid("paused", "a new destination is not paused; PATCH it to pause")
	}
	d := models.Destination{WorkspaceID: wsID, BatchSize: 20, Enabled: true}
	if in.Kind != nil {
		d.Kind = strings.ToLower(strings.TrimSpace(*in.Kind))
	}
	token := in.apply(&d)
	if err := validateDestination(d, token != ""); err != nil {
		return 0, err
	}
	// The sandbox never dials out, so its base_url is not the guard's business.
	if msg := EgressRefusal(s.Egress, d.BaseURL); msg != "" && d.Kind != crm.KindSandbox {
		return 0, Invalid("base_url", msg)
	}
	sealed, err := s.Box.Seal(token)
	if err != nil {
		return 0, fmt.Errorf("create destination: seal its api token: %w", err)
	}
	d.APITokenEnc = sealed
	err = s.Store.Tx(ctx, func(tx *models.Store) error {
		if err := tx.DestinationCreate(ctx, &d); err != nil {
			return err
		}
		return tx.AuditRecord(ctx, models.Audit{WorkspaceID: wsID, Actor: actor, Action: "destination.create",
			SubjectType: "destination", SubjectID: strconv.FormatInt(d.ID, 10), After: ViewDestination(d)})
	})
	if err != nil {
		return 0, fmt.Errorf("create destination %q: %w", d.Name, err)
	}
	return d.ID, nil
}

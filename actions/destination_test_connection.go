package actions

import (
	"context"

	"github.com/leadgate/leadgate/crm/syncer"
	"github.com/leadgate/leadgate/models"
)

// TestConnection makes one authenticated read with d's stored credentials and lists every piece of the
// setup the account lacks. A refused read is a *DestinationCRMError.
func (s *Destinations) TestConnection(ctx context.Context, d models.Destination) (syncer.SetupReport, error) {
	a, ctx, cancel, err := s.adapter(ctx, d)
	if err != nil {
		return syncer.SetupReport{}, err
	}
	defer cancel()
	rep, err := syncer.CheckDestinationSetup(ctx, a)
	if err != nil {
		return syncer.SetupReport{}, &DestinationCRMError{Err: err}
	}
	return rep, nil
}

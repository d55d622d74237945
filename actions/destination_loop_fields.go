package actions

import (
	"context"
	"errors"

	"github.com/leadgate/leadgate/crm"
	"github.com/leadgate/leadgate/crm/syncer"
	"github.com/leadgate/leadgate/models"
)

// LoopFieldsResult is what checking (and creating) a destination's setup fields found and did.
type LoopFieldsResult struct {
	Loop    crm.LoopCheck      // the loop-field check, after any creation
	Created []string           // the fields created
	Missing []crm.MissingPiece // what the setup still lacks
	Resumed bool               // a destination the system paused for its setup resumed
}

// LoopFields checks d's loop-breaker fields; with create it creates the missing loop-breaker and stage
// fields where the CRM's API allows (audited by syncer.FixDestinationSetup). A destination the system
// paused for its setup resumes at once when nothing is missing any more. A CRM whose API cannot create
// what is missing is refused with a *DestinationFieldsError; a failing CRM is a *DestinationCRMError.
func (s *Destinations) LoopFields(ctx context.Context, d models.Destination, actor string, create bool) (LoopFieldsResult, error) {
	a, cctx, cancel, err := s.adapter(ctx, d)
	if err != nil {
		return LoopFieldsResult{}, err
	}
	defer cancel()
	disc, err := a.Discover(cctx)
	if err != nil {
		return LoopFieldsResult{}, &DestinationCRMError{Err: err}
	}
	loop := disc.Loop
	loopMissing := !loop.LoopFieldFound || !loop.SyncFieldFound
	_, setupCreator := a.(crm.SetupFieldCreator)
	// Only a CRM that creates the stage field too has anything to create once the loop fields exist.
	create = create && (loopMissing || setupCreator)
	if create && !setupCreator && !loop.CanCreate {
		return LoopFieldsResult{}, &DestinationFieldsError{Message: syncer.ErrCannotCreateFields.Error(), Loop: loop}
	}
	fix, err := syncer.FixDestinationSetup(cctx, s.Store, d, a, actor, create)
	switch {
	case errors.Is(err, syncer.ErrCannotCreateFields):
		return LoopFieldsResult{}, &DestinationFieldsError{Message: err.Error(), Loop: loop}
	case err != nil:
		// Whatever failed on the way (the CRM, or recording what it created) answers as the CRM's failure,
		// as the API always has.
		return LoopFieldsResult{}, &DestinationCRMError{Err: err}
	}
	if len(fix.Created) > 0 {
		s.Connector.Forget(d.ID) // field ids are cached by the adapter
		if disc, err = a.Discover(cctx); err != nil {
			return LoopFieldsResult{}, &DestinationCRMError{Err: err}
		}
		loop = disc.Loop
	}
	if fix.Resumed {
		s.kick(ctx) // held work drains now
	}
	return LoopFieldsResult{Loop: loop, Created: fix.Created, Missing: fix.Report.Missing, Resumed: fix.Resumed}, nil
}

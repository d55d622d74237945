package actions

import (
	"context"
	"time"

	"github.com/leadgate/leadgate/crm"
	"github.com/leadgate/leadgate/internal/egress"
	"github.com/leadgate/leadgate/internal/secretbox"
	"github.com/leadgate/leadgate/models"
)

// DestinationConnector builds a destination's adapter (credentials opened, requests rate-limited).
type DestinationConnector interface {
	Adapter(ctx context.Context, d models.Destination) (crm.Destination, error)
	// Forget drops the cached adapter, so the next call sees the saved settings.
	Forget(id int64)
}

// SyncControl starts sync work.
type SyncControl interface {
	Kick(ctx context.Context) error
	StartImport(ctx context.Context, destinationID, importID int64, actor string) error
}

// OnboardingTimeout bounds the CRM calls of test connection, discovery and loop fields.
const OnboardingTimeout = 25 * time.Second

// Destinations runs the actions on a workspace's CRM destinations. Credentials are sealed with Box and
// never answered.
type Destinations struct {
	Store     *models.Store
	Box       *secretbox.Box
	Connector DestinationConnector
	// Sync drains work at once after a resume (nil: the periodic tick does).
	Sync SyncControl
	// Egress refuses, at save time, URLs the SSRF guard would refuse when dialing (nil: public only).
	Egress *egress.Guard
}

// adapter opens d's CRM adapter with a context bounded by OnboardingTimeout; a destination that cannot
// be opened (no token, a bad setting) is refused as the request's input.
func (s *Destinations) adapter(ctx context.Context, d models.Destination) (crm.Destination, context.Context, context.CancelFunc, error) {
	ctx, cancel := context.WithTimeout(ctx, OnboardingTimeout)
	a, err := s.Connector.Adapter(ctx, d)
	if err != nil {
		cancel()
		return nil, nil, nil, Invalid("", "destination cannot be used: "+err.Error())
	}
	return a, ctx, cancel, nil
}

// kick drains due work now rather than at the next tick; a failed kick only delays it, so it is not an
// error of the action.
func (s *Destinations) kick(ctx context.Context) {
	if s.Sync != nil {
		_ = s.Sync.Kick(ctx)
	}
}

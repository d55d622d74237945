package actions

import (
	"errors"

	"github.com/leadgate/leadgate/crm"
	"github.com/leadgate/leadgate/internal/egress"
)

// DestinationCRMError: an onboarding call to the destination's CRM failed or was refused, or the outbound
// guard refused its address before any request left. Err is the failure as it came, so a surface can
// show the CRM's classification (crm.Error's class and status) besides the message.
type DestinationCRMError struct{ Err error }

// Error is the CRM's own classified message when there is one, without what leadgate was doing around it.
func (e *DestinationCRMError) Error() string {
	var ce *crm.Error
	if !egress.IsBlocked(e.Err) && errors.As(e.Err, &ce) {
		return ce.Error()
	}
	return e.Err.Error()
}

func (e *DestinationCRMError) Unwrap() error { return e.Err }

// As lets a surface that only knows the generic kinds answer it as a failing remote.
func (e *DestinationCRMError) As(target any) bool {
	if t, ok := target.(**UpstreamError); ok {
		*t = &UpstreamError{Message: e.Error()}
		return true
	}
	return false
}

package actions

import (
	"github.com/leadgate/leadgate/crm"
	"github.com/leadgate/leadgate/crm/syncer"
)

// DestinationFieldsError refuses creating a destination's missing fields because its CRM's API cannot
// create them; Loop is the loop-field check, which says what to add by hand.
type DestinationFieldsError struct {
	Message string
	Loop    crm.LoopCheck
}

func (e *DestinationFieldsError) Error() string { return e.Message }

// Unwrap makes errors.Is(err, syncer.ErrCannotCreateFields) hold.
func (e *DestinationFieldsError) Unwrap() error { return syncer.ErrCannotCreateFields }

// As lets a surface that only knows the generic kinds answer it as a conflict.
func (e *DestinationFieldsError) As(target any) bool {
	if t, ok := target.(**ConflictError); ok {
		*t = &ConflictError{Message: e.Message}
		return true
	}
	return false
}

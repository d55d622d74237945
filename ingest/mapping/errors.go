package mapping

import "errors"

// MalformedError reports a body that cannot be read as the source kind's payload at all; the webhook
// answers 400 for it, since a retry of the same bytes cannot succeed.
type MalformedError struct {
	Reason string
}

func (e *MalformedError) Error() string {
	return "mapping: malformed body: " + e.Reason
}

func malformed(reason string) error {
	return &MalformedError{Reason: reason}
}

// ErrUnknownKind is returned (wrapped) by Map for a source kind that has no preset.
var ErrUnknownKind = errors.New("mapping: unknown source kind")

package signature

import (
	"errors"
	"fmt"
)

// Error is a verification failure. Reason is short, human and safe to show the
// sender ("missing header webhook-signature", "signature mismatch",
// "timestamp outside the 5m0s tolerance"); it never contains a secret.
// Callers answer 401 {"error": Reason}.
type Error struct{ Reason string }

// Error implements error.
func (e *Error) Error() string { return "signature: " + e.Reason }

// ErrUnknownKind is returned (wrapped) for a kind this package does not know.
var ErrUnknownKind = errors.New("signature: unknown source kind")

// reject builds a verification failure.
func reject(format string, args ...any) error {
	return &Error{Reason: fmt.Sprintf(format, args...)}
}

// errMismatch is the reason when no signature matched any secret or key.
func errMismatch() error { return &Error{Reason: "signature mismatch"} }

// configError reports a Config unusable for its kind.
func configError(kind, format string, args ...any) error {
	return fmt.Errorf("signature: %s config: %s", kind, fmt.Sprintf(format, args...))
}

// errMissingURL is returned by Sign for kinds that sign the URL.
var errMissingURL = errors.New("request URL is required")

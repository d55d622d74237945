package actions

import "errors"

// FieldError refuses one input. Field is the input's name in the JSON API ("threshold_seconds",
// "rules[2].stage"; empty for the request as a whole), so the API answers it as CONTRACT.md's 400 body and
// a form maps it onto its own inputs.
type FieldError struct {
	Field   string
	Message string
}

func (e *FieldError) Error() string {
	if e.Field == "" {
		return e.Message
	}
	return e.Field + ": " + e.Message
}

// Invalid refuses the input field with msg.
func Invalid(field, msg string) error { return &FieldError{Field: field, Message: msg} }

// ErrNotFound matches every NotFoundError.
var ErrNotFound = errors.New("not found")

// NotFoundError: the thing acted on does not exist in the workspace. Field names the input that named it
// ("id"), Message says what is missing ("unknown alert channel").
type NotFoundError struct {
	Field   string
	Message string
}

func (e *NotFoundError) Error() string { return e.Message }

// Is makes errors.Is(err, ErrNotFound) hold.
func (e *NotFoundError) Is(target error) bool { return target == ErrNotFound }

// NotFound reports that the subject named by field is missing.
func NotFound(field, msg string) error { return &NotFoundError{Field: field, Message: msg} }

// ConflictError refuses an action that collides with the current state (another save won the race, a
// name is taken, the destination's CRM cannot do it).
type ConflictError struct {
	Field   string
	Message string
}

func (e *ConflictError) Error() string { return e.Message }

// UpstreamError: the action reached a remote system (a CRM, an alert channel) and it failed or refused.
type UpstreamError struct{ Message string }

func (e *UpstreamError) Error() string { return e.Message }

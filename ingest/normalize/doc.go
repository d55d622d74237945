// Package normalize turns the identity values a lead source sends (email, phone, person name) into the
// canonical forms leadgate matches contacts on: a trimmed lower-case email, an E.164 phone, a title-cased name.
//
// Invalid input is never silently dropped: Email and Phone return a Value that keeps the raw text and says
// what is wrong with it, so the event can still be stored, shown and replayed.
package normalize

// Value is a normalized identity value; invalid input is kept raw and flagged, never silently dropped.
type Value struct {
	// Value is the canonical form; "" when the input is invalid or empty.
	Value string
	// Raw is the input exactly as received.
	Raw string
	// Valid reports whether Value holds a usable identity.
	Valid bool
	// Problem says briefly why the input is not valid ("" when Valid, "empty" for blank input).
	Problem string
}

// problemEmpty is the Problem of a blank input: not wrong, just absent.
const problemEmpty = "empty"

func invalid(raw, problem string) Value {
	return Value{Raw: raw, Problem: problem}
}

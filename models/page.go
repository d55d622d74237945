package models

// Page is a keyset page request: Limit rows older than Cursor (an opaque id).
type Page struct {
	Limit  int
	Cursor string
}

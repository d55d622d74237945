package spool

import (
	"errors"
	"fmt"
	"strings"
)

var (
	// ErrClosed is returned by calls made after Close.
	ErrClosed = errors.New("spool: closed")
	// ErrLocked is returned by Open when another Spool (in this or another
	// process) holds the directory.
	ErrLocked = errors.New("spool: directory is in use")
	// ErrCorrupt is returned by Replay when a sealed segment no longer
	// decodes: the disk changed under us, and the operator must look.
	ErrCorrupt = errors.New("spool: corrupt segment")
)

// Duplicate names one record of an Append batch whose idempotency key is
// already spooled.
type Duplicate struct {
	// Index is the record's position in the slice given to Append.
	Index int
	// EventID is the id of the record spooled earlier under the same key.
	EventID string
}

// DuplicateError is returned by Append when some records' idempotency keys
// are already spooled (durably). Nothing of the batch was written: drop the
// duplicates (answering "duplicate" with their EventID) and append the rest.
type DuplicateError struct {
	Duplicates []Duplicate
}

func (e *DuplicateError) Error() string {
	ids := make([]string, len(e.Duplicates))
	for i, d := range e.Duplicates {
		ids[i] = fmt.Sprintf("#%d→%s", d.Index, d.EventID)
	}
	return "spool: idempotency key already spooled: " + strings.Join(ids, ", ")
}

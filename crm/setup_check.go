package crm

import "context"

// SetupChecker is implemented by destinations that can list the faults of their own setup without
// writing anything: the fields, pipeline or stages the configuration names and the account lacks. A
// paused destination can be checked with it before its held work is let through.
type SetupChecker interface {
	// CheckSetup returns nil when the setup is complete, else a Setup *Error naming every missing piece.
	// It reads the account afresh (no cached field or pipeline list).
	CheckSetup(ctx context.Context) error
}

package crm

import (
	"context"
	"errors"
	"fmt"
)

// SetupChecker is implemented by destinations that can list the faults of their own setup without
// writing anything: the fields, pipeline or stages the configuration names and the account lacks. A
// paused destination can be checked with it before its held work is let through.
type SetupChecker interface {
	// CheckSetup returns nil when the setup is complete, else a Setup *Error naming every missing piece.
	// It reads the account afresh (no cached field or pipeline list).
	CheckSetup(ctx context.Context) error
}

// MissingPiece is one thing the configuration names and the account lacks.
type MissingPiece struct {
	Kind      string `json:"kind"`      // field, pipeline or stage
	Name      string `json:"name"`      // as the configuration names it
	Setting   string `json:"setting"`   // the destination setting naming it: loop_field, stage_field, field_map[x], pipeline, stage_map[x]
	Creatable bool   `json:"creatable"` // leadgate can create it (SetupFieldCreator)
	Message   string `json:"message"`
}

// SetupLister is implemented by destinations that list every missing piece of their setup, one by one,
// without writing anything (test connection shows them all, not the first).
type SetupLister interface {
	MissingSetup(ctx context.Context) ([]MissingPiece, error)
}

// SetupFieldCreator is implemented by destinations whose API can create the fields leadgate itself
// needs: the loop-breaker pair and the stage field. It returns the names it created.
type SetupFieldCreator interface {
	CreateSetupFields(ctx context.Context) ([]string, error)
}

// createMissing creates, with create, each missing field leadgate can create (Creatable), and returns the
// names it created; the failures are joined, and the rest are still tried.
func createMissing(ctx context.Context, missing []MissingPiece, create func(ctx context.Context, name string) error) ([]string, error) {
	var created []string
	var errs []error
	for _, m := range missing {
		if m.Kind != "field" || !m.Creatable {
			continue
		}
		if err := create(ctx, m.Name); err != nil {
			errs = append(errs, fmt.Errorf("create field %q (%s): %w", m.Name, m.Setting, err))
			continue
		}
		created = append(created, m.Name)
	}
	return created, errors.Join(errs...)
}

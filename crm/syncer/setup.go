package syncer

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/leadgate/leadgate/crm"
	"github.com/leadgate/leadgate/models"
)

// ErrCannotCreateFields: the destination's API cannot create the fields its setup lacks.
var ErrCannotCreateFields = errors.New("this CRM's API cannot create the fields")

// SetupReport is what test connection answers about a destination's setup.
type SetupReport struct {
	Connected bool               `json:"connected"`  // a cheap authenticated read passed
	Missing   []crm.MissingPiece `json:"missing"`    // every piece the account lacks; empty when complete
	CanCreate bool               `json:"can_create"` // leadgate can create some of them (POST .../loop-fields {"create":true})
}

// Complete reports whether the connection works and nothing is missing.
func (r SetupReport) Complete() bool { return r.Connected && len(r.Missing) == 0 }

// CheckDestinationSetup makes one authenticated read, then lists every missing piece of the setup (all
// of them, not the first). A refused read is returned as the error, as the CRM answered it.
func CheckDestinationSetup(ctx context.Context, a crm.Destination) (SetupReport, error) {
	rep := SetupReport{Missing: []crm.MissingPiece{}}
	if err := a.TestConnection(ctx); err != nil {
		return rep, err
	}
	rep.Connected = true
	if l, ok := a.(crm.SetupLister); ok {
		missing, err := l.MissingSetup(ctx)
		if err != nil {
			return rep, fmt.Errorf("syncer: list missing setup: %w", err)
		}
		rep.Missing = append(rep.Missing, missing...)
		for _, m := range missing {
			rep.CanCreate = rep.CanCreate || m.Creatable
		}
		return rep, nil
	}
	if c, ok := a.(crm.SetupChecker); ok {
		err := c.CheckSetup(ctx)
		var ce *crm.Error
		switch {
		case crm.ClassOf(err) == crm.Setup && errors.As(err, &ce):
			for _, msg := range strings.Split(ce.Message, "; ") {
				rep.Missing = append(rep.Missing, crm.MissingPiece{Message: msg})
			}
		case err != nil:
			return rep, fmt.Errorf("syncer: check setup: %w", err)
		}
	}
	if _, ok := a.(crm.LoopFieldCreator); ok || len(rep.Missing) == 0 {
		disc, err := a.Discover(ctx)
		if err != nil {
			return rep, fmt.Errorf("syncer: check loop-breaker fields: %w", err)
		}
		loop := disc.Loop
		if _, checked := a.(crm.SetupChecker); !checked {
			for name, found := range map[string]bool{loop.LoopField: loop.LoopFieldFound, loop.SyncField: loop.SyncFieldFound} {
				if !found && name != "" {
					rep.Missing = append(rep.Missing, crm.MissingPiece{Kind: "field", Name: name, Creatable: ok && loop.CanCreate,
						Message: fmt.Sprintf("the account lacks the loop-breaker field %q; create it or POST .../loop-fields", name)})
				}
			}
		}
		rep.CanCreate = ok && loop.CanCreate && (!loop.LoopFieldFound || !loop.SyncFieldFound)
	}
	return rep, nil
}

// SetupFix is the outcome of FixDestinationSetup.
type SetupFix struct {
	Created []string    `json:"created_fields"`
	Report  SetupReport `json:"setup"`
	Resumed bool        `json:"resumed"`
}

// FixDestinationSetup is the one action behind "create the missing fields" (API POST .../loop-fields
// {"create":true} and the UI's button): it creates the loop-breaker and stage fields the account lacks,
// audits what it created, checks the setup again and resumes a destination the system paused once its
// fault is gone. create=false only checks and resumes.
func FixDestinationSetup(ctx context.Context, store *models.Store, d models.Destination, a crm.Destination, actor string, create bool) (SetupFix, error) {
	var fix SetupFix
	if create {
		var err error
		switch c := a.(type) {
		case crm.SetupFieldCreator:
			fix.Created, err = c.CreateSetupFields(ctx)
		case crm.LoopFieldCreator:
			if err = c.CreateLoopFields(ctx); err == nil {
				fix.Created = []string{"loop-breaker fields"}
			}
		default:
			return fix, ErrCannotCreateFields
		}
		if err != nil {
			return fix, err
		}
	}
	rep, err := CheckDestinationSetup(ctx, a)
	if err != nil {
		return fix, err
	}
	fix.Report = rep
	if len(fix.Created) > 0 {
		err := store.AuditRecord(ctx, models.Audit{WorkspaceID: d.WorkspaceID, Actor: actor, Action: "destination.loop_fields.create",
			SubjectType: "destination", SubjectID: fmt.Sprint(d.ID), After: map[string]any{"created": fix.Created, "missing": rep.Missing}})
		if err != nil {
			return fix, err
		}
	}
	if rep.Complete() {
		if fix.Resumed, err = ResumeSystemPause(ctx, store, d.ID, actor, time.Now()); err != nil {
			return fix, err
		}
	}
	return fix, nil
}

// ResumeSystemPause resumes a destination the system paused for a fault of its own (never an operator's
// pause), with an audit entry; held work becomes due at once. It reports whether it resumed.
func ResumeSystemPause(ctx context.Context, store *models.Store, id int64, actor string, now time.Time) (bool, error) {
	d, err := store.DestinationByID(ctx, id)
	if err != nil || !d.Paused {
		return false, err
	}
	resumed := false
	err = store.Tx(ctx, func(tx *models.Store) error {
		var err error
		if resumed, err = tx.DestinationAutoResume(ctx, d.ID, d.PauseEpisode, now); err != nil || !resumed {
			return err
		}
		return tx.AuditRecord(ctx, models.Audit{WorkspaceID: d.WorkspaceID, Actor: actor, Action: "destination.resume",
			SubjectType: "destination", SubjectID: fmt.Sprint(d.ID),
			Before: map[string]any{"paused": true, "cause": d.PauseCause, "reason": d.PausedReason}, After: map[string]any{"paused": false}})
	})
	return resumed, err
}

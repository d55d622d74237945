package actions

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"

	"github.com/leadgate/leadgate/lifecycle"
	"github.com/leadgate/leadgate/lifecycle/apply"
	"github.com/leadgate/leadgate/models"
)

// StageRules carries out the changes to a workspace's stage rules.
type StageRules struct {
	Store *models.Store
}

// Save validates rules and saves them as the workspace's next version, in one transaction with its audit
// entry (the rules it replaces as before). It answers the saved rules with their version; a save that
// lost the race with another is a *ConflictError on "version", a rule set that does not validate a
// *FieldError on the JSON path at fault ("rules[2].stage").
func (a StageRules) Save(ctx context.Context, workspaceID int64, actor string, rules lifecycle.Rules) (lifecycle.Rules, error) {
	if err := rules.Validate(); err != nil {
		var ve *lifecycle.ValidationError
		if errors.As(err, &ve) {
			return lifecycle.Rules{}, Invalid(ve.Field, ve.Message)
		}
		return lifecycle.Rules{}, Invalid("", err.Error())
	}
	var saved lifecycle.Rules
	err := a.Store.Tx(ctx, func(tx *models.Store) error {
		before, err := apply.LoadRules(ctx, tx, workspaceID)
		if err != nil {
			return fmt.Errorf("load the rules in force: %w", err)
		}
		// The store picks the version inside the transaction, so the body saved carries it.
		_, err = tx.StageRulesSave(ctx, workspaceID, func(version int) (json.RawMessage, error) {
			rules.Version = version
			saved = rules
			return json.Marshal(rules)
		}, actor)
		if err != nil {
			return err
		}
		if err := tx.AuditRecord(ctx, models.Audit{WorkspaceID: workspaceID, Actor: actor, Action: "stage_rules.update",
			SubjectType: "stage_rules", SubjectID: strconv.Itoa(saved.Version), Before: before, After: saved}); err != nil {
			return fmt.Errorf("audit: %w", err)
		}
		return nil
	})
	if errors.Is(err, models.ErrConflict) {
		return lifecycle.Rules{}, &ConflictError{Field: "version", Message: "another change was saved at the same moment; reload and retry"}
	}
	if err != nil {
		return lifecycle.Rules{}, fmt.Errorf("actions: save stage rules: %w", err)
	}
	return saved, nil
}

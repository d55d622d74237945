package actions

import (
	"context"
	"fmt"

	"github.com/leadgate/leadgate/models"
)

// PutLoopSettings replaces the workspace's loop settings (0 / "" fields mean the default) and answers
// what was saved.
func (g *Guards) PutLoopSettings(ctx context.Context, ws models.Workspace, actor string, in models.LoopSettings) (models.LoopSettings, error) {
	if field, msg := in.Validate(); field != "" {
		return models.LoopSettings{}, Invalid(field, msg)
	}
	err := g.Store.Tx(ctx, func(tx *models.Store) error {
		cur, err := tx.GuardSettingsGet(ctx, ws.ID)
		if err != nil {
			return err
		}
		before := cur.Loop
		cur.Loop, cur.UpdatedBy = in, actor
		if err := tx.GuardSettingsSave(ctx, cur); err != nil {
			return err
		}
		return tx.AuditRecord(ctx, models.Audit{WorkspaceID: ws.ID, Actor: actor, Action: "guards.loop.update",
			SubjectType: "guard_settings", SubjectID: ws.Slug, Before: before, After: in})
	})
	if err != nil {
		return models.LoopSettings{}, fmt.Errorf("save loop settings of %s: %w", ws.Slug, err)
	}
	return in, nil
}

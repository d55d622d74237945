package actions

import (
	"context"
	"fmt"

	"github.com/leadgate/leadgate/models"
)

// Export gathers everything leadgate holds about the contact c (a data subject's access request), in one
// transaction with its audit entry, so that every export is on record whoever asked and how.
func (a Contacts) Export(ctx context.Context, actor string, c models.Contact) (models.ContactExport, error) {
	var x models.ContactExport
	err := a.Store.Tx(ctx, func(tx *models.Store) error {
		var err error
		if x, err = tx.ContactExportAll(ctx, c); err != nil {
			return err
		}
		return tx.AuditRecord(ctx, models.Audit{WorkspaceID: c.WorkspaceID, Actor: actor, Action: "contact.export",
			SubjectType: "contact_privacy", SubjectID: c.ID, After: map[string]int{"events": len(x.Events), "observations": len(x.Observations)}})
	})
	if err != nil {
		return models.ContactExport{}, fmt.Errorf("export contact %s: %w", c.ID, err)
	}
	return x, nil
}

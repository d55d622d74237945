package apply

import (
	"context"

	"github.com/leadgate/leadgate/models"
)

// applyStore is what applying one event reads and writes. A *models.Store (a transaction) runs every call
// as its own statement; a batchStore answers from the batch's state in memory and writes everything at
// the end with one statement per table.
type applyStore interface {
	SourceGet(ctx context.Context, workspaceID, id int64) (models.Source, error)
	ContactsByIdentity(ctx context.Context, workspaceID int64, email, phone string) (byEmail, byPhone *models.Contact, err error)
	ContactLockNoWait(ctx context.Context, id string) (models.Contact, error)
	ContactGet(ctx context.Context, workspaceID int64, id string) (models.Contact, error)
	ContactCreate(ctx context.Context, c *models.Contact) error
	ContactSave(ctx context.Context, c *models.Contact) error
	ContactMergeInto(ctx context.Context, loser, survivor string) error
	ContactAppliedEventTypes(ctx context.Context, contactID string) ([]string, error)
	ObservationsForContact(ctx context.Context, contactID string) ([]models.Observation, error)
	ObservationsAdd(ctx context.Context, obs []models.Observation) error
	ObservationsAddAll(ctx context.Context, obs []models.Observation) error
	StageHistoryAdd(ctx context.Context, c models.StageChange) error
	OutboxAdd(ctx context.Context, r models.OutboxRow) (bool, error)
	OutboxAddAll(ctx context.Context, rows []models.OutboxRow) error
	EventSetOutcome(ctx context.Context, id string, o models.EventOutcome) error
	DeadLetterAdd(ctx context.Context, d models.DeadLetter) (int64, error)
	AuditRecord(ctx context.Context, a models.Audit) error
	SyncMergeIntent(ctx context.Context, workspaceID int64, loserID, survivorID string) error
	GuardSettingsGet(ctx context.Context, workspaceID int64) (models.GuardSettings, error)
}

var _ applyStore = (*models.Store)(nil)

package actions_test

import (
	"context"
	"io"
	"log/slog"
	"testing"

	"github.com/leadgate/leadgate/internal/testkit"
	"github.com/leadgate/leadgate/models"
)

// openStore is a migrated database of the test's own; its workspace 1 exists.
func openStore(t *testing.T) *models.Store {
	t.Helper()
	ctx := context.Background()
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	st, err := models.Open(ctx, testkit.MigratedDatabase(t), log)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	if err := st.Migrate(ctx, log); err != nil {
		t.Fatal(err)
	}
	return st
}

// audits counts the audit entries of one action on one subject.
func audits(t *testing.T, st *models.Store, action, subject string) int64 {
	t.Helper()
	var n int64
	if err := st.DB().Raw(`SELECT count(*) FROM audit_log WHERE action = ? AND subject_id = ?`, action, subject).Scan(&n).Error; err != nil {
		t.Fatal(err)
	}
	return n
}

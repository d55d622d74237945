// Package modelstest opens stores for the tests of the packages built on models.
package modelstest

import (
	"context"
	"log/slog"
	"testing"

	"github.com/leadgate/leadgate/internal/testkit"
	"github.com/leadgate/leadgate/models"
)

// Store opens a store on a migrated database of the test's own (its default workspace, 1, exists) and
// closes it when the test ends.
func Store(t testing.TB) *models.Store {
	t.Helper()
	ctx := context.Background()
	log := slog.New(slog.DiscardHandler)
	st, err := models.Open(ctx, testkit.MigratedDatabase(t), log)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	if err := st.Migrate(ctx, log); err != nil {
		t.Fatal(err)
	}
	return st
}

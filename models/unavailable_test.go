package models_test

import (
	"context"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/leadgate/leadgate/internal/testkit"
	"github.com/leadgate/leadgate/models"
)

// A write that reaches a read-only server (a hot standby, or a primary demoted while the connection was
// open) is Postgres being unavailable for writes, so ingest spools it instead of failing the delivery.
func TestAWriteRefusedByAStandbyCountsAsPostgresUnavailable(t *testing.T) {
	pair := testkit.PostgresPair(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	standby, err := models.Open(ctx, pair.Standby.URL("postgres"), slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	defer standby.Close()
	err = standby.DB().WithContext(ctx).Exec("CREATE TABLE refused (id int)").Error
	if err == nil {
		t.Fatal("the standby took a write")
	}
	if !models.IsUnavailable(err) {
		t.Fatalf("IsUnavailable(%v) = false, want true", err)
	}
}

package models

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"testing"

	"github.com/leadgate/leadgate/internal/testkit"
)

// migratedStore opens a store on a new migrated database of its own: modelstest.Store for the tests
// inside this package, which cannot import modelstest (it imports models).
func migratedStore(t *testing.T) *Store {
	t.Helper()
	ctx := context.Background()
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	st, err := Open(ctx, testkit.MigratedDatabase(t), log)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	if err := st.Migrate(ctx, log); err != nil {
		t.Fatal(err)
	}
	return st
}

// planRead is what an EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) says its statement returned and read.
type planRead struct {
	Rows  int
	Pages int64
}

func readPlan(t *testing.T, plan []byte) planRead {
	t.Helper()
	var out []struct {
		Plan struct {
			Rows int   `json:"Actual Rows"`
			Hit  int64 `json:"Shared Hit Blocks"`
			Read int64 `json:"Shared Read Blocks"`
		} `json:"Plan"`
	}
	if err := json.Unmarshal(plan, &out); err != nil || len(out) != 1 {
		t.Fatalf("plan %s: %v", plan, err)
	}
	return planRead{Rows: out[0].Plan.Rows, Pages: out[0].Plan.Hit + out[0].Plan.Read}
}

package throwaway

import (
	"context"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// A row committed on the primary is on the standby once it is promoted, and the multi-host URL then
// reaches the promoted standby for writes.
func TestPGPairPromotesTheStandbyWithEveryCommittedRow(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	p, err := StartPGPair(ctx, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	conn, err := pgx.Connect(ctx, p.URL("postgres"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := conn.Exec(ctx, "CREATE TABLE t (id int); INSERT INTO t VALUES (1)"); err != nil {
		t.Fatal(err)
	}
	conn.Close(ctx)
	if err := p.Promote(ctx); err != nil {
		t.Fatal(err)
	}
	conn, err = pgx.Connect(ctx, p.URL("postgres"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, "INSERT INTO t VALUES (2)"); err != nil {
		t.Fatalf("write after promotion: %v", err)
	}
	var n int
	if err := conn.QueryRow(ctx, "SELECT count(*) FROM t").Scan(&n); err != nil || n != 2 {
		t.Fatalf("rows after promotion = %d, %v; want 2", n, err)
	}
}

package testkit

import (
	"cmp"
	"context"
	"net/url"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

func TestDatabaseIsCreatedThenDropped(t *testing.T) {
	var name string
	t.Run("uses a fresh database", func(t *testing.T) {
		dbURL := Database(t)
		u, err := url.Parse(dbURL)
		if err != nil {
			t.Fatal(err)
		}
		name = strings.TrimPrefix(u.Path, "/")
		if !strings.HasPrefix(name, "leadgate_test_testkit_") {
			t.Errorf("database name %q, want leadgate_test_testkit_<random>", name)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		conn, err := pgx.Connect(ctx, dbURL)
		if err != nil {
			t.Fatalf("connect to the new database: %v", err)
		}
		// Left open on purpose: the drop must force it closed.
		var tables int
		if err := conn.QueryRow(ctx, `SELECT count(*) FROM pg_tables WHERE schemaname = 'public'`).Scan(&tables); err != nil {
			t.Fatal(err)
		}
		if tables != 0 {
			t.Errorf("fresh database has %d tables", tables)
		}
		if _, err := conn.Exec(ctx, `CREATE TABLE t (id int PRIMARY KEY)`); err != nil {
			t.Fatalf("create a table: %v", err)
		}
	})

	if exists := databaseExists(t, name); exists {
		t.Fatalf("database %s still exists after its test ended", name)
	}
}

func TestDatabaseNamesAreUnique(t *testing.T) {
	a, b := Database(t), Database(t)
	if a == b {
		t.Fatalf("two calls returned the same database %s", a)
	}
}

func databaseExists(t *testing.T, name string) bool {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, cmp.Or(os.Getenv("TEST_DATABASE_URL"), defaultAdminURL))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	var exists bool
	if err := conn.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM pg_database WHERE datname = $1)`, name).Scan(&exists); err != nil {
		t.Fatal(err)
	}
	return exists
}

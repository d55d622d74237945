package testkit

import (
	"cmp"
	"context"
	"net/url"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/leadgate/leadgate/migrations"
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

// A migrated database carries the whole schema at the latest migration, and each one is its own copy:
// what one test writes, another never sees.
func TestMigratedDatabasesCarryTheSchemaAndAreIndependent(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	a, b := MigratedDatabase(t), MigratedDatabase(t)
	if a == b {
		t.Fatalf("two calls returned the same database %s", a)
	}
	latest := 0
	entries, err := migrations.FS.ReadDir(".")
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if n, err := strconv.Atoi(strings.SplitN(e.Name(), "_", 2)[0]); err == nil && n > latest {
			latest = n
		}
	}
	ca, err := pgx.Connect(ctx, a)
	if err != nil {
		t.Fatal(err)
	}
	defer ca.Close(ctx)
	var version int
	if err := ca.QueryRow(ctx, `SELECT max(version_id) FROM goose_db_version`).Scan(&version); err != nil {
		t.Fatalf("read the schema version: %v", err)
	}
	if version != latest {
		t.Errorf("schema version %d, want the latest migration %d", version, latest)
	}
	if _, err := ca.Exec(ctx, `INSERT INTO workspaces (slug, name) VALUES ('only-in-a', 'A')`); err != nil {
		t.Fatalf("write to the first copy: %v", err)
	}
	cb, err := pgx.Connect(ctx, b)
	if err != nil {
		t.Fatal(err)
	}
	defer cb.Close(ctx)
	var n int
	if err := cb.QueryRow(ctx, `SELECT count(*) FROM workspaces WHERE slug = 'only-in-a'`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	if n != 0 {
		t.Errorf("the second copy sees %d rows written to the first", n)
	}
}

package testkit

import (
	"cmp"
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	_ "github.com/jackc/pgx/v5/stdlib" // the "pgx" database/sql driver goose runs on
	"github.com/pressly/goose/v3"

	"github.com/leadgate/leadgate/migrations"
)

// templateLock is the advisory lock key under which one test process at a time builds a missing template.
const templateLock = 7_231_905_114

// MigratedDatabase is Database with leadgate's schema already in place: the database is cloned from a
// template that carries every migration, built once per set of migration files and kept on the server
// for the next run (its name carries a hash of the files, so a new migration builds a new one). A clone
// costs a file copy, where migrating costs every migration's statements in every test. Running the
// migrations again on it is a no-op, so code under test that migrates at start behaves as on a fresh
// database.
func MigratedDatabase(t testing.TB) string {
	t.Helper()
	admin := cmp.Or(os.Getenv("TEST_DATABASE_URL"), defaultAdminURL)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	tmpl, err := migratedTemplate(ctx, admin)
	if err != nil {
		t.Fatalf("testkit: migrated template database: %v", err)
	}
	return createDatabase(t, admin, tmpl)
}

// migratedTemplate returns the name of the template for the current migrations, building it if it is
// missing: under a temporary name first, renamed once migrated, so a clone never sees half a schema.
func migratedTemplate(ctx context.Context, admin string) (string, error) {
	sum, err := migrationsHash()
	if err != nil {
		return "", err
	}
	name := "leadgate_template_" + sum
	conn, err := pgx.Connect(ctx, admin)
	if err != nil {
		return "", fmt.Errorf("connect: %w", err)
	}
	defer conn.Close(context.WithoutCancel(ctx))
	exists := func() (bool, error) {
		var ok bool
		err := conn.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM pg_database WHERE datname = $1)`, name).Scan(&ok)
		return ok, err
	}
	if ok, err := exists(); err != nil || ok {
		return name, err
	}
	if _, err := conn.Exec(ctx, `SELECT pg_advisory_lock($1)`, templateLock); err != nil {
		return "", fmt.Errorf("lock: %w", err)
	}
	defer func() { _, _ = conn.Exec(context.WithoutCancel(ctx), `SELECT pg_advisory_unlock($1)`, templateLock) }()
	if ok, err := exists(); err != nil || ok {
		return name, err // another test process built it meanwhile
	}
	building := name + "_" + randomHex(4)
	if _, err := conn.Exec(ctx, "CREATE DATABASE "+pgx.Identifier{building}.Sanitize()); err != nil {
		return "", fmt.Errorf("create %s: %w", building, err)
	}
	if err := migrate(ctx, admin, building); err != nil {
		_, _ = conn.Exec(context.WithoutCancel(ctx), "DROP DATABASE IF EXISTS "+pgx.Identifier{building}.Sanitize()+" WITH (FORCE)")
		return "", err
	}
	if _, err := conn.Exec(ctx, "ALTER DATABASE "+pgx.Identifier{building}.Sanitize()+" RENAME TO "+pgx.Identifier{name}.Sanitize()); err != nil {
		return "", fmt.Errorf("rename %s: %w", building, err)
	}
	return name, nil
}

// migrate runs every migration on database db of the admin server, then disconnects (a template must
// have no session open when it is cloned).
func migrate(ctx context.Context, admin, db string) error {
	u, err := url.Parse(admin)
	if err != nil {
		return fmt.Errorf("admin URL: %w", err)
	}
	u.Path = "/" + db
	sqlDB, err := sql.Open("pgx", u.String())
	if err != nil {
		return fmt.Errorf("open %s: %w", db, err)
	}
	defer sqlDB.Close()
	p, err := goose.NewProvider(goose.DialectPostgres, sqlDB, migrations.FS)
	if err != nil {
		return fmt.Errorf("migrations: %w", err)
	}
	if _, err := p.Up(ctx); err != nil {
		return fmt.Errorf("migrate %s: %w", db, err)
	}
	return nil
}

// migrationsHash names the migration files' content: 12 hex digits of their SHA-256.
func migrationsHash() (string, error) {
	h := sha256.New()
	err := fs.WalkDir(migrations.FS, ".", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := fs.ReadFile(migrations.FS, path)
		if err != nil {
			return err
		}
		fmt.Fprintf(h, "%s\x00%d\x00", path, len(b))
		h.Write(b)
		return nil
	})
	if err != nil {
		return "", fmt.Errorf("read migrations: %w", err)
	}
	return hex.EncodeToString(h.Sum(nil))[:12], nil
}

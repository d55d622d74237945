package testkit

import (
	"cmp"
	"context"
	"fmt"
	"net/url"
	"os"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// defaultAdminURL is the machine's Postgres server as its superuser.
const defaultAdminURL = "postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable"

// Database creates a fresh, uniquely named database
// (leadgate_test_<pkg>_<random>) on the Postgres server at
// TEST_DATABASE_URL (an admin URL, default postgres@127.0.0.1:5432) and
// returns its URL. The database is dropped WITH (FORCE) in t.Cleanup.
func Database(t testing.TB) string {
	t.Helper()
	return createDatabase(t, cmp.Or(os.Getenv("TEST_DATABASE_URL"), defaultAdminURL), "")
}

// createDatabase creates a database for t on the admin server (a copy of template when one is named),
// dropped when t ends, and returns its URL.
func createDatabase(t testing.TB, admin, template string) string {
	t.Helper()
	u, err := url.Parse(admin)
	if err != nil {
		t.Fatalf("testkit: TEST_DATABASE_URL is not a URL: %v", err)
	}
	name := "leadgate_test_" + packageLabel() + "_" + randomHex(4)

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	create := "CREATE DATABASE " + pgx.Identifier{name}.Sanitize()
	if template != "" {
		create += " TEMPLATE " + pgx.Identifier{template}.Sanitize()
	}
	if err := adminExec(ctx, admin, create); err != nil {
		t.Fatalf("testkit: create database %s on %s: %v", name, u.Redacted(), err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		drop := "DROP DATABASE IF EXISTS " + pgx.Identifier{name}.Sanitize() + " WITH (FORCE)"
		if err := adminExec(ctx, admin, drop); err != nil {
			t.Errorf("testkit: drop database %s: %v", name, err)
		}
	})
	u.Path = "/" + name
	return u.String()
}

func adminExec(ctx context.Context, admin, sql string) error {
	conn, err := pgx.Connect(ctx, admin)
	if err != nil {
		return fmt.Errorf("connect: %w", err)
	}
	defer conn.Close(context.WithoutCancel(ctx))
	if _, err := conn.Exec(ctx, sql); err != nil {
		return fmt.Errorf("exec: %w", err)
	}
	return nil
}

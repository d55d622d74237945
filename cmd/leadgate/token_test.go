package main

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"strconv"
	"strings"
	"testing"

	"github.com/leadgate/leadgate/internal/testkit"
	"github.com/leadgate/leadgate/models"
)

// `leadgate token create --workspace` limits a token to existing, active
// workspaces (repeated or comma-separated), refuses anything else before
// creating the token, and `token list` shows each token's scope.
func TestTokenCreateWorkspaceScope(t *testing.T) {
	ctx := context.Background()
	store, dbURL := migratedStore(t)
	for _, slug := range []string{"acme", "beta", "old"} {
		if _, err := store.WorkspaceCreate(ctx, slug, strings.ToUpper(slug)); err != nil {
			t.Fatal(err)
		}
	}
	old, _ := store.WorkspaceBySlug(ctx, "old")
	if err := store.WorkspaceUpdate(ctx, old.ID, "Old", true); err != nil {
		t.Fatal(err)
	}
	getenv := func(k string) string {
		return map[string]string{"LEADGATE_DATABASE_URL": dbURL, "LEADGATE_SECRET_KEY": "token test secret key"}[k]
	}
	token := func(args ...string) (string, error) {
		var out, errs bytes.Buffer
		err := cmdToken(ctx, args, &out, &errs, getenv)
		return out.String(), err
	}

	refused := []struct {
		name string
		args []string
		want string
	}{
		{"UnknownSlug", []string{"--workspace", "nope"}, `unknown workspace "nope" (active workspaces: default, acme, beta); no token created`},
		{"UnknownAmongKnown", []string{"--workspace", "acme,nope"}, `unknown workspace "nope"`},
		{"UnknownRepeated", []string{"--workspace", "acme", "--workspace", "nope"}, `unknown workspace "nope"`},
		{"Archived", []string{"--workspace", "old"}, `workspace "old" is archived`},
		{"EmptySlug", []string{"--workspace", "acme,"}, "empty workspace slug"},
	}
	for _, c := range refused {
		t.Run(c.name, func(t *testing.T) {
			args := append([]string{"create", "--name", "client", "--role", "editor"}, c.args...)
			out, err := token(args...)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("token %v: err %v, want it to contain %q", args, err, c.want)
			}
			if strings.Contains(out, "lgt_") {
				t.Fatalf("a refused create printed a token: %q", out)
			}
			if list, err := store.TokenList(ctx); err != nil || len(list) != 0 {
				t.Fatalf("a refused create left %d tokens (err %v)", len(list), err)
			}
		})
	}

	created := []struct {
		name string
		args []string
		line string // what create prints before the token
		list string // the WORKSPACES column of token list
	}{
		{"Comma", []string{"--workspace", "acme,beta"}, "(comma, editor, limited to acme, beta)", "acme,beta"},
		{"Repeated", []string{"--workspace", "beta", "--workspace", "acme", "--workspace", "beta"}, "(repeated, editor, limited to beta, acme)", "acme,beta"},
		{"Unscoped", nil, "(unscoped, editor); it is shown only once:", "all"},
	}
	for _, c := range created {
		t.Run(c.name, func(t *testing.T) {
			out, err := token(append([]string{"create", "--name", strings.ToLower(c.name), "--role", "editor"}, c.args...)...)
			if err != nil {
				t.Fatal(err)
			}
			lines := strings.Split(strings.TrimSpace(out), "\n")
			if !strings.Contains(lines[0], c.line) || !strings.HasPrefix(lines[len(lines)-1], "lgt_") {
				t.Fatalf("create printed %q, want %q then the token", out, c.line)
			}
			list, err := token("list")
			if err != nil {
				t.Fatal(err)
			}
			var row string
			for _, l := range strings.Split(list, "\n") {
				if strings.Contains(l, " "+strings.ToLower(c.name)+" ") {
					row = l
				}
			}
			if f := strings.Fields(row); len(f) == 0 || f[len(f)-1] != c.list {
				t.Fatalf("token list row %q, want WORKSPACES %q", row, c.list)
			}
		})
	}

	audit, err := store.AuditList(ctx, 0, models.Page{Limit: 3})
	if err != nil {
		t.Fatal(err)
	}
	if len(audit) != 3 || !strings.Contains(string(audit[2].After), `"workspaces": ["acme", "beta"]`) ||
		strings.Contains(string(audit[0].After), "workspaces") {
		t.Fatalf("token.create audited as %s / %s", audit[2].After, audit[0].After)
	}

	t.Run("RevokeAuditsTheScope", func(t *testing.T) {
		list, err := store.TokenList(ctx)
		if err != nil {
			t.Fatal(err)
		}
		var id int64
		for _, tok := range list {
			if tok.Name == "comma" {
				id = tok.ID
			}
		}
		idArg := strconv.FormatInt(id, 10)
		if out, err := token("revoke", idArg); err != nil || !strings.Contains(out, "revoked token "+idArg) {
			t.Fatalf("revoke: %q, %v", out, err)
		}
		audit, err := store.AuditList(ctx, 0, models.Page{Limit: 1})
		if err != nil {
			t.Fatal(err)
		}
		if a := audit[0]; a.Action != "token.revoke" || !strings.Contains(string(a.Before), `"revoked": false`) ||
			!strings.Contains(string(a.After), `"revoked": true`) || !strings.Contains(string(a.After), `"workspaces": ["acme", "beta"]`) {
			t.Fatalf("token.revoke audited as %s: %s -> %s", a.Action, a.Before, a.After)
		}
		if _, err := token("revoke", idArg); err == nil || !strings.Contains(err.Error(), "no active token") {
			t.Fatalf("revoking twice: %v, want no active token", err)
		}
		if again, _ := store.AuditList(ctx, 0, models.Page{Limit: 1}); again[0].ID != audit[0].ID {
			t.Fatalf("a refused revoke was audited: %+v", again[0])
		}
	})
}

// migratedStore opens a fresh, migrated test database and returns it with its URL (for the CLI's env).
func migratedStore(t *testing.T) (*models.Store, string) {
	t.Helper()
	ctx := context.Background()
	dbURL := testkit.MigratedDatabase(t)
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	store, err := models.Open(ctx, dbURL, log)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	if err := store.Migrate(ctx, log); err != nil {
		t.Fatal(err)
	}
	return store, dbURL
}

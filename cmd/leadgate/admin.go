package main

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"strconv"
	"strings"

	"github.com/leadgate/leadgate/cmd/leadgate/config"
	"github.com/leadgate/leadgate/models"
)

// openStore loads the config, connects and migrates: every admin command
// works against an up-to-date schema.
func openStore(ctx context.Context, stderr io.Writer, getenv func(string) string) (*models.Store, config.Config, *slog.Logger, error) {
	cfg, err := config.FromEnv(getenv)
	if err != nil {
		return nil, cfg, nil, fmt.Errorf("configuration: %w", err)
	}
	log := slog.New(slog.NewJSONHandler(stderr, &slog.HandlerOptions{Level: cfg.LogLevel}))
	store, err := models.Open(ctx, cfg.DatabaseURL, log)
	if err != nil {
		return nil, cfg, log, err
	}
	if err := store.Migrate(ctx, log); err != nil {
		store.Close()
		return nil, cfg, log, err
	}
	return store, cfg, log, nil
}

func cmdMigrate(ctx context.Context, stderr io.Writer, getenv func(string) string) error {
	store, _, log, err := openStore(ctx, stderr, getenv)
	if err != nil {
		return err
	}
	defer store.Close()
	log.Info("migrations up to date")
	return nil
}

func cmdToken(ctx context.Context, args []string, stdout, stderr io.Writer, getenv func(string) string) error {
	if len(args) == 0 {
		return errors.New("token: use create, list or revoke")
	}
	store, _, _, err := openStore(ctx, stderr, getenv)
	if err != nil {
		return err
	}
	defer store.Close()
	switch args[0] {
	case "create":
		fs := flag.NewFlagSet("token create", flag.ContinueOnError)
		fs.SetOutput(stderr)
		name := fs.String("name", "", "a name saying who uses the token")
		role := fs.String("role", models.RoleViewer, "admin, editor or viewer")
		var scope slugList
		fs.Var(&scope, "workspace", "limit the token to the workspace `SLUG`; repeat the flag or separate slugs\n"+
			"with commas for several (--workspace acme --workspace beta, or --workspace acme,beta).\n"+
			"Without it the token reaches every workspace. A limited token cannot create workspaces\n"+
			"or do other instance-wide actions.")
		if err := fs.Parse(args[1:]); err != nil {
			return err
		}
		if strings.TrimSpace(*name) == "" {
			return errors.New("token create: --name is required")
		}
		if !models.ValidRole(*role) {
			return fmt.Errorf("token create: --role %q must be admin, editor or viewer", *role)
		}
		spaces, err := tokenScope(ctx, store, scope)
		if err != nil {
			return err
		}
		return tokenCreate(ctx, store, stdout, *name, *role, spaces)
	case "list":
		list, err := store.TokenList(ctx)
		if err != nil {
			return err
		}
		scopes, err := store.TokenWorkspaces(ctx)
		if err != nil {
			return err
		}
		// WORKSPACES comes last so the columns scripts already read keep their places.
		w := bufio.NewWriter(stdout)
		fmt.Fprintf(w, "%-6s %-24s %-7s %-12s %-20s %-18s %s\n", "ID", "NAME", "ROLE", "PREFIX", "CREATED", "STATUS", "WORKSPACES")
		for _, t := range list {
			status := "active"
			if t.RevokedAt != nil {
				status = "revoked " + t.RevokedAt.Format("2006-01-02")
			}
			where := "all"
			if slugs := models.TokenWorkspaceSlugs(scopes[t.ID]); len(slugs) > 0 {
				where = strings.Join(slugs, ",")
			}
			fmt.Fprintf(w, "%-6d %-24s %-7s %-12s %-20s %-18s %s\n", t.ID, t.Name, t.Role, t.Prefix+"…", t.CreatedAt.Format("2006-01-02 15:04"), status, where)
		}
		return w.Flush()
	case "revoke":
		if len(args) != 2 {
			return errors.New("token revoke: give the token id")
		}
		id, err := strconv.ParseInt(args[1], 10, 64)
		if err != nil {
			return fmt.Errorf("token revoke: %q is not a token id", args[1])
		}
		err = store.Tx(ctx, func(tx *models.Store) error {
			before, after, err := tx.TokenRevokeAudited(ctx, id)
			if err != nil {
				return err
			}
			return tx.AuditRecord(ctx, models.Audit{Actor: "cli", Action: "token.revoke", SubjectType: "api_token",
				SubjectID: strconv.FormatInt(id, 10), Before: before, After: after})
		})
		if errors.Is(err, models.ErrNotFound) {
			return fmt.Errorf("token revoke: no active token %d", id)
		}
		if err != nil {
			return err
		}
		fmt.Fprintf(stdout, "revoked token %d\n", id)
		return nil
	}
	return fmt.Errorf("token: unknown subcommand %q", args[0])
}

// slugList is a repeatable flag whose values may also be comma-separated.
type slugList []string

func (l *slugList) String() string { return strings.Join(*l, ",") }

func (l *slugList) Set(v string) error {
	*l = append(*l, strings.Split(v, ",")...)
	return nil
}

// tokenScope resolves --workspace slugs before anything is created; an
// unknown or archived one is an error naming the workspaces there are.
func tokenScope(ctx context.Context, store *models.Store, slugs []string) ([]models.Workspace, error) {
	spaces, err := store.TokenScopeWorkspaces(ctx, slugs)
	var scopeErr *models.ScopeError
	if !errors.As(err, &scopeErr) {
		return spaces, err
	}
	if scopeErr.Slug == "" {
		return nil, errors.New("token create: --workspace: empty workspace slug")
	}
	list, listErr := store.WorkspaceList(ctx, false)
	if listErr != nil {
		return nil, fmt.Errorf("token create: --workspace: %w", scopeErr)
	}
	known := make([]string, len(list))
	for i, ws := range list {
		known[i] = ws.Slug
	}
	return nil, fmt.Errorf("token create: --workspace: %w (active workspaces: %s); no token created", scopeErr, strings.Join(known, ", "))
}

// tokenCreate mints the token and audits it, with its scope, in one transaction.
func tokenCreate(ctx context.Context, store *models.Store, stdout io.Writer, name, role string, spaces []models.Workspace) error {
	ids, slugs := make([]int64, len(spaces)), make([]string, len(spaces))
	for i, ws := range spaces {
		ids[i], slugs[i] = ws.ID, ws.Slug
	}
	var tok models.APIToken
	var plain string
	err := store.Tx(ctx, func(tx *models.Store) error {
		var err error
		if tok, plain, err = tx.TokenCreate(ctx, name, role, ids...); err != nil {
			return err
		}
		after := map[string]any{"name": tok.Name, "role": tok.Role}
		if len(slugs) > 0 {
			after["workspaces"] = slugs
		}
		return tx.AuditRecord(ctx, models.Audit{Actor: "cli", Action: "token.create", SubjectType: "api_token",
			SubjectID: strconv.FormatInt(tok.ID, 10), After: after})
	})
	if err != nil {
		return err
	}
	// An unscoped token's line stays as it always was, for scripts that read it.
	where := ""
	if len(slugs) > 0 {
		where = ", limited to " + strings.Join(slugs, ", ")
	}
	fmt.Fprintf(stdout, "created token %d (%s, %s%s); it is shown only once:\n%s\n", tok.ID, tok.Name, tok.Role, where, plain)
	return nil
}

func cmdUser(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer, getenv func(string) string) error {
	if len(args) == 0 || args[0] != "add" {
		return errors.New("user: use add --email EMAIL --role ROLE --password-stdin")
	}
	fs := flag.NewFlagSet("user add", flag.ContinueOnError)
	fs.SetOutput(stderr)
	email := fs.String("email", "", "login email")
	role := fs.String("role", models.RoleViewer, "admin, editor or viewer")
	fromStdin := fs.Bool("password-stdin", false, "read the password from standard input")
	if err := fs.Parse(args[1:]); err != nil {
		return err
	}
	if !*fromStdin {
		return errors.New("user add: pass --password-stdin and the password on standard input")
	}
	line, err := bufio.NewReader(io.LimitReader(stdin, 4096)).ReadString('\n')
	if err != nil && !errors.Is(err, io.EOF) {
		return fmt.Errorf("user add: read password: %w", err)
	}
	password := strings.TrimRight(line, "\r\n")
	store, _, _, err := openStore(ctx, stderr, getenv)
	if err != nil {
		return err
	}
	defer store.Close()
	u, err := store.UserCreate(ctx, *email, password, *role, false)
	if errors.Is(err, models.ErrConflict) {
		return fmt.Errorf("user add: %s already exists", *email)
	}
	if err != nil {
		return fmt.Errorf("user add: %w", err)
	}
	if err := store.AuditRecord(ctx, models.Audit{Actor: "cli", Action: "user.create", SubjectType: "user",
		SubjectID: strconv.FormatInt(u.ID, 10), After: map[string]any{"email": u.Email, "role": u.Role}}); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "added user %s (%s)\n", u.Email, u.Role)
	return nil
}

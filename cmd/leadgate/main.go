// Command leadgate is the whole product in one binary: the webhook receiver,
// the apply workers, the CRM sync, the scheduler and the admin web app.
package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
)

const usage = `leadgate — CRM webhook middleware

usage:
  leadgate serve [--role all|web|worker|scheduler]   apply migrations, then serve
  leadgate migrate                                   apply migrations and exit
  leadgate token create --name NAME --role ROLE [--workspace SLUG]...
                                                     print a new API token (last line); --workspace
                                                     (repeatable or comma-separated) limits it to those workspaces
  leadgate token list | token revoke ID
  leadgate user add --email EMAIL --role ROLE --password-stdin
  leadgate loadgen [flags]                           drive signed webhook traffic and report latency
  leadgate chaos [flags] | chaos fakecrm [flags]     fault-injected replay vs a direct-to-CRM baseline | the fake CRM alone
  leadgate demo [--every 500ms --quiet-after 3m --duration D]   serve + a demo workspace with live traffic
  leadgate resync [--workspace SLUG] [--destination ID] [--contact UUID]   queue a resync to the CRM
  leadgate secrets rotate                           re-encrypt stored secrets (LEADGATE_OLD_SECRET_KEY -> LEADGATE_SECRET_KEY)
  leadgate version

configuration comes from the environment: LEADGATE_DATABASE_URL, LEADGATE_REDIS_URL,
LEADGATE_ADDR, LEADGATE_SECRET_KEY, LEADGATE_PUBLIC_URL, LEADGATE_SPOOL_DIR (see README.md).
`

// version is set at build time with -ldflags "-X main.version=...".
var version = "dev"

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr, os.Getenv); err != nil {
		fmt.Fprintln(os.Stderr, "leadgate:", err)
		os.Exit(1)
	}
}

// run dispatches a subcommand; everything it needs is passed in.
func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer, getenv func(string) string) error {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return fmt.Errorf("missing command")
	}
	cmd, rest := args[0], args[1:]
	switch cmd {
	case "serve":
		return cmdServe(ctx, rest, stdout, stderr, getenv)
	case "migrate":
		return cmdMigrate(ctx, stderr, getenv)
	case "token":
		return cmdToken(ctx, rest, stdout, stderr, getenv)
	case "user":
		return cmdUser(ctx, rest, stdin, stdout, stderr, getenv)
	case "loadgen":
		return cmdLoadgen(ctx, rest, stdout, stderr, getenv)
	case "chaos":
		return cmdChaos(ctx, rest, stdout, stderr, getenv)
	case "resync":
		return cmdResync(ctx, rest, stdout, stderr, getenv)
	case "demo":
		return cmdDemo(ctx, rest, stdout, stderr, getenv)
	case "secrets":
		return cmdSecrets(ctx, rest, stdout, stderr, getenv)
	case "version", "--version":
		fmt.Fprintln(stdout, "leadgate", version)
		return nil
	case "help", "-h", "--help":
		fmt.Fprint(stdout, usage)
		return nil
	}
	fmt.Fprint(stderr, usage)
	return fmt.Errorf("unknown command %q", cmd)
}

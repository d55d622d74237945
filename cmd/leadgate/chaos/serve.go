package chaos

import (
	"context"
	"fmt"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Serve is the real `leadgate serve` process as this package runs it (token creation, readiness, the
// admin API, SIGKILL), for other test packages that interrupt leadgate at a chosen point and start it
// again on the same database and Redis (cmd/leadgate/boundary).
type Serve struct {
	l    *leadgateProc
	base []string // the environment every start begins with
}

// ServeOptions say what a Serve runs on.
type ServeOptions struct {
	Binary, Dir, DatabaseURL, RedisURL string
	Workers                            int
	// Env is added to every start (LEADGATE_ settings).
	Env map[string]string
}

// NewServe migrates the database and creates an admin token; Start runs the process.
func NewServe(ctx context.Context, o ServeOptions) (*Serve, error) {
	l, err := prepareLeadgate(ctx, o.Binary, o.Dir, o.DatabaseURL, o.RedisURL, max(o.Workers, 1))
	if err != nil {
		return nil, err
	}
	l.env = withVars(l.env, o.Env)
	return &Serve{l: l, base: slices.Clone(l.env)}, nil
}

// Sibling is another process of the same installation (database, Redis, secret key, token) on its own
// port and log, started with args after "serve" (e.g. "--role", "web").
func (s *Serve) Sibling(name string, env map[string]string, args ...string) (*Serve, error) {
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	l := *s.l
	l.proc, l.args, l.started = nil, args, false
	l.base = "http://127.0.0.1:" + strconv.Itoa(port)
	l.logPath = filepath.Join(filepath.Dir(s.l.logPath), name+".log")
	l.env = withVars(s.base, map[string]string{"LEADGATE_ADDR": "127.0.0.1:" + strconv.Itoa(port)})
	l.env = withVars(l.env, env)
	return &Serve{l: &l, base: slices.Clone(l.env)}, nil
}

// Start runs the process with the base environment plus extra and waits until /readyz answers 200.
func (s *Serve) Start(ctx context.Context, extra map[string]string) error {
	s.l.env = withVars(s.base, extra)
	if err := s.l.start(ctx); err != nil {
		return err
	}
	// The first start may have moved to another port (see leadgateProc.start): keep it for restarts.
	s.base = withVars(s.base, map[string]string{"LEADGATE_ADDR": strings.TrimPrefix(s.l.base, "http://"), "LEADGATE_PUBLIC_URL": s.l.base})
	return nil
}

// WaitExit waits for the process to end on its own (a failpoint's SIGKILL).
func (s *Serve) WaitExit(ctx context.Context, timeout time.Duration) error {
	if s.l.proc == nil {
		return fmt.Errorf("leadgate was not started")
	}
	select {
	case <-s.l.proc.exited:
		return nil
	case <-time.After(timeout):
		return fmt.Errorf("leadgate still runs after %s (log: %s)", timeout, s.l.logPath)
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Running reports whether the process runs.
func (s *Serve) Running() bool { return s.l.proc != nil && s.l.proc.running() }

// Kill sends SIGKILL and waits for the exit.
func (s *Serve) Kill() {
	if s.l.proc != nil {
		s.l.proc.kill()
	}
}

// Stop ends the process (SIGTERM, then SIGKILL after a grace period).
func (s *Serve) Stop() { s.l.stop() }

// URL is the process's base URL (webhooks: URL()+"/hooks/…").
func (s *Serve) URL() string { return s.l.base }

// API calls the admin API under /api/v1; in (if not nil) is sent as JSON, out (if not nil) decoded
// from a 2xx answer.
func (s *Serve) API(ctx context.Context, method, path string, in, out any) error {
	return s.l.api(ctx, method, path, in, out)
}

// LogTail is the end of the process's log, for failure messages.
func (s *Serve) LogTail(lines int) string { return tail(s.l.logPath, lines) }

// withVars returns env with each of vars set (replacing an earlier value of the same name).
func withVars(env []string, vars map[string]string) []string {
	out := make([]string, 0, len(env)+len(vars))
	for _, kv := range env {
		name, _, _ := strings.Cut(kv, "=")
		if _, replaced := vars[name]; !replaced {
			out = append(out, kv)
		}
	}
	for k, v := range vars {
		out = append(out, k+"="+v)
	}
	return out
}

// BuildBinary builds cmd/leadgate into dir and returns its path.
func BuildBinary(ctx context.Context, dir string) (string, error) {
	bin := filepath.Join(dir, "leadgate")
	out, err := exec.CommandContext(ctx, "go", "build", "-o", bin, "github.com/leadgate/leadgate/cmd/leadgate").CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("go build: %w\n%s", err, out)
	}
	return bin, nil
}

package throwaway

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/leadgate/leadgate/internal/pguser"
)

// PGNode is one Postgres server with trust auth for the postgres superuser, run as the postgres OS user
// when the caller is root (Postgres refuses root).
type PGNode struct {
	Port  int
	Dir   string
	bin   string
	runAs *pguser.User
	opts  []string // -c settings of this server only
}

// PGPair is a primary and a hot standby streaming from it. The primary commits synchronously (a commit
// returns once the standby has flushed it), so promoting the standby after the primary dies loses no
// acknowledged commit: with an asynchronous standby a failover may.
type PGPair struct {
	Primary, Standby *PGNode
}

// StartPGPair runs initdb for the primary in dir, starts it, makes the standby with pg_basebackup -R and
// returns once the standby streams.
func StartPGPair(ctx context.Context, dir string) (p *PGPair, err error) {
	bin, err := PostgresBinDir()
	if err != nil {
		return nil, err
	}
	runAs, err := pguser.Lookup()
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("throwaway: %w", err)
	}
	if err := reachable(runAs, dir); err != nil {
		return nil, err
	}
	node := func(name string, opts ...string) (*PGNode, error) {
		d := filepath.Join(dir, name)
		if err := os.MkdirAll(d, 0o755); err != nil {
			return nil, fmt.Errorf("throwaway: %w", err)
		}
		if err := runAs.Own(d); err != nil {
			return nil, err
		}
		port, err := freePort()
		if err != nil {
			return nil, err
		}
		return &PGNode{Port: port, Dir: d, bin: bin, runAs: runAs, opts: opts}, nil
	}
	p = &PGPair{}
	started := p // a failed start returns nil: the servers it started are stopped through this
	defer func() {
		if err != nil {
			started.Close()
		}
	}()
	if p.Primary, err = node("primary", "synchronous_standby_names=*"); err != nil {
		return nil, err
	}
	if out, err := p.Primary.run(ctx, "initdb", "-D", p.Primary.data(), "-U", "postgres", "-A", "trust", "-E", "UTF8",
		"--locale=C", "--no-sync"); err != nil {
		return nil, fmt.Errorf("throwaway: initdb: %w\n%s", err, out)
	}
	if err := p.Primary.Start(ctx); err != nil {
		return nil, err
	}
	if p.Standby, err = node("standby"); err != nil {
		return nil, err
	}
	if out, err := p.Standby.run(ctx, "pg_basebackup", "-h", "127.0.0.1", "-p", strconv.Itoa(p.Primary.Port), "-U", "postgres",
		"-D", p.Standby.data(), "-R", "-X", "stream", "-c", "fast"); err != nil {
		return nil, fmt.Errorf("throwaway: pg_basebackup: %w\n%s", err, out)
	}
	if err := p.Standby.Start(ctx); err != nil {
		return nil, err
	}
	err = waitFor(ctx, 60*time.Second, "the standby streaming from the primary", func() bool {
		var n int
		return p.Primary.query(ctx, "SELECT count(*) FROM pg_stat_replication WHERE state = 'streaming'", &n) == nil && n > 0
	})
	return p, err
}

// URL is a multi-host LEADGATE_DATABASE_URL for database db: pgx tries the primary, then the standby,
// and keeps only a server that takes writes.
func (p *PGPair) URL(db string) string {
	return fmt.Sprintf("postgres://postgres@127.0.0.1:%d,127.0.0.1:%d/%s?sslmode=disable&target_session_attrs=read-write&connect_timeout=3",
		p.Primary.Port, p.Standby.Port, db)
}

// Promote crashes the primary (immediate stop: no checkpoint, connections cut) and promotes the
// standby, returning once it takes writes.
func (p *PGPair) Promote(ctx context.Context) error {
	if err := p.Primary.Crash(ctx); err != nil {
		return err
	}
	if out, err := p.Standby.run(ctx, "pg_ctl", "-D", p.Standby.data(), "-w", "-t", "60", "promote"); err != nil {
		return fmt.Errorf("throwaway: pg_ctl promote: %w\n%s", err, out)
	}
	return waitFor(ctx, 60*time.Second, "the promoted standby taking writes", func() bool {
		var rec bool
		return p.Standby.query(ctx, "SELECT pg_is_in_recovery()", &rec) == nil && !rec
	})
}

// Close stops both servers.
func (p *PGPair) Close() {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for _, n := range []*PGNode{p.Primary, p.Standby} {
		if n != nil {
			_ = n.Crash(ctx)
		}
	}
}

func (n *PGNode) data() string { return filepath.Join(n.Dir, "data") }

// URL connects to this server alone, database db.
func (n *PGNode) URL(db string) string {
	return fmt.Sprintf("postgres://postgres@127.0.0.1:%d/%s?sslmode=disable", n.Port, db)
}

// Start starts the server and returns once it accepts connections.
func (n *PGNode) Start(ctx context.Context) error {
	opts := []string{"-p", strconv.Itoa(n.Port), "-k", n.Dir, "-c", "listen_addresses=127.0.0.1", "-c", "fsync=on",
		"-c", "shared_buffers=32MB", "-c", "max_connections=200"}
	for _, o := range n.opts {
		opts = append(opts, "-c", o)
	}
	if out, err := n.run(ctx, "pg_ctl", "-D", n.data(), "-l", filepath.Join(n.Dir, "postgres.log"), "-w", "-t", "60",
		"-o", strings.Join(opts, " "), "start"); err != nil {
		log, _ := os.ReadFile(filepath.Join(n.Dir, "postgres.log"))
		return fmt.Errorf("throwaway: pg_ctl start: %w\n%s\n%s", err, out, log)
	}
	return nil
}

// Crash stops the server in immediate mode, like a power cut; a server already down is left so.
func (n *PGNode) Crash(ctx context.Context) error {
	if _, err := os.Stat(filepath.Join(n.data(), "postmaster.pid")); err != nil {
		return nil
	}
	if out, err := n.run(ctx, "pg_ctl", "-D", n.data(), "-m", "immediate", "-w", "-t", "60", "stop"); err != nil {
		return fmt.Errorf("throwaway: pg_ctl stop: %w\n%s", err, out)
	}
	return nil
}

func (n *PGNode) query(ctx context.Context, sql string, dest ...any) error {
	qctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	conn, err := pgx.Connect(qctx, n.URL("postgres"))
	if err != nil {
		return err
	}
	defer conn.Close(context.WithoutCancel(ctx))
	return conn.QueryRow(qctx, sql).Scan(dest...)
}

// run runs one of the server's binaries as its OS user.
func (n *PGNode) run(ctx context.Context, name string, args ...string) ([]byte, error) {
	cmd := exec.CommandContext(ctx, filepath.Join(n.bin, name), args...)
	cmd.Dir = n.Dir
	n.runAs.Apply(cmd)
	return cmd.CombinedOutput()
}

// reachable lets the postgres user traverse dir and its parents (a test's temp dir is private to root).
func reachable(runAs *pguser.User, dir string) error {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return fmt.Errorf("throwaway: %w", err)
	}
	for d := abs; d != "/" && d != "."; d = filepath.Dir(d) {
		st, err := os.Stat(d)
		if err != nil {
			return fmt.Errorf("throwaway: %w", err)
		}
		if st.Mode().Perm()&0o001 == 0 {
			if err := runAs.Reach(d); err != nil {
				return err
			}
		}
	}
	return nil
}

// PostgresBinDir finds the newest /usr/lib/postgresql/<version>/bin (initdb, pg_ctl, pg_basebackup).
func PostgresBinDir() (string, error) {
	matches, _ := filepath.Glob("/usr/lib/postgresql/*/bin/pg_basebackup")
	if len(matches) == 0 {
		return "", fmt.Errorf("throwaway: no pg_basebackup under /usr/lib/postgresql/*/bin (apt-get install postgresql)")
	}
	version := func(path string) int {
		v, _ := strconv.Atoi(filepath.Base(filepath.Dir(filepath.Dir(path))))
		return v
	}
	return filepath.Dir(slices.MaxFunc(matches, func(a, b string) int { return version(a) - version(b) })), nil
}

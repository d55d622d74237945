package chaos

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/leadgate/leadgate/internal/pguser"
	"github.com/leadgate/leadgate/internal/throwaway"
)

// pgCluster is a throwaway Postgres cluster in a temp dir, started and stopped with pg_ctl, run as the
// postgres OS user when the run is root (Postgres refuses root).
type pgCluster struct {
	bin, dir string
	port     int
	runAs    *pguser.User
}

func newPGCluster(ctx context.Context, parent string) (*pgCluster, error) {
	bin, err := postgresBinDir()
	if err != nil {
		return nil, err
	}
	runAs, err := pguser.Lookup()
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp(parent, "pg-")
	if err != nil {
		return nil, fmt.Errorf("postgres: temp dir: %w", err)
	}
	for d := dir; runAs != nil && d != parent && d != "/"; d = filepath.Dir(d) {
		if err := runAs.Own(d); err != nil {
			return nil, err
		}
	}
	if err := runAs.Reach(parent); err != nil {
		return nil, err
	}
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	p := &pgCluster{bin: bin, dir: dir, port: port, runAs: runAs}
	if out, err := p.run(ctx, "initdb", "-D", p.data(), "-U", "postgres", "-A", "trust", "-E", "UTF8", "--locale=C", "--no-sync"); err != nil {
		return nil, fmt.Errorf("postgres: initdb: %w\n%s", err, out)
	}
	return p, p.start(ctx)
}

func (p *pgCluster) data() string { return filepath.Join(p.dir, "data") }

// url is the server's admin URL (database postgres).
func (p *pgCluster) url() string {
	return fmt.Sprintf("postgres://postgres@127.0.0.1:%d/postgres?sslmode=disable", p.port)
}

func (p *pgCluster) start(ctx context.Context) error {
	opts := strings.Join([]string{"-p", strconv.Itoa(p.port), "-k", p.dir, "-c", "listen_addresses=127.0.0.1",
		"-c", "fsync=on", "-c", "max_connections=200", "-c", "shared_buffers=64MB"}, " ")
	if out, err := p.run(ctx, "pg_ctl", "-D", p.data(), "-l", filepath.Join(p.dir, "postgres.log"), "-w", "-t", "60", "-o", opts, "start"); err != nil {
		return fmt.Errorf("postgres: start: %w\n%s", err, out)
	}
	return nil
}

// crash stops the server in immediate mode: no checkpoint, like a power cut (recovery replays the WAL).
func (p *pgCluster) crash(ctx context.Context) error {
	if out, err := p.run(ctx, "pg_ctl", "-D", p.data(), "-m", "immediate", "-w", "-t", "60", "stop"); err != nil {
		return fmt.Errorf("postgres: stop: %w\n%s", err, out)
	}
	return nil
}

// close stops the server if it runs and, unless keep, deletes its files (a kept cluster can be
// started again with pg_ctl -D <dir>/data start, as the postgres user).
func (p *pgCluster) close(keep bool) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	_, _ = p.run(ctx, "pg_ctl", "-D", p.data(), "-m", "fast", "-w", "stop")
	if !keep {
		_ = os.RemoveAll(p.dir)
	}
}

func (p *pgCluster) run(ctx context.Context, name string, args ...string) ([]byte, error) {
	cmd := exec.CommandContext(ctx, filepath.Join(p.bin, name), args...)
	cmd.Dir = p.dir
	p.runAs.Apply(cmd)
	return cmd.CombinedOutput()
}

// postgresBinDir finds the newest Postgres server binaries.
func postgresBinDir() (string, error) { return throwaway.PostgresBinDir() }

// databaseURL returns serverURL with its database replaced by db.
func databaseURL(serverURL, db string) (string, error) {
	u, err := url.Parse(serverURL)
	if err != nil {
		return "", fmt.Errorf("postgres url: %w", err)
	}
	u.Path = "/" + db
	return u.String(), nil
}

// dropDatabase removes db from the server at serverURL.
func dropDatabase(ctx context.Context, serverURL, db string) error {
	conn, err := pgx.Connect(ctx, serverURL)
	if err != nil {
		return fmt.Errorf("postgres: connect %s: %w", serverURL, err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, "DROP DATABASE IF EXISTS "+pgx.Identifier{db}.Sanitize()+" WITH (FORCE)"); err != nil {
		return fmt.Errorf("postgres: drop %s: %w", db, err)
	}
	return nil
}

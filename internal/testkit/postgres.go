package testkit

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/leadgate/leadgate/internal/pguser"
	"github.com/leadgate/leadgate/internal/throwaway"
)

// Postgres is a throwaway Postgres cluster owned by one test, with trust
// auth for the "postgres" superuser, fsync on, and a free port.
type Postgres struct {
	t       testing.TB
	binDir  string
	dir     string
	port    int
	runAs   *pguser.User
	mu      sync.Mutex
	running bool
}

// PostgresCluster runs initdb in a temp dir and starts the cluster with
// pg_ctl (binaries from /usr/lib/postgresql/<newest>/bin). When the test
// runs as root, both run as the "postgres" OS user, which owns the dir.
// The cluster is stopped and removed in t.Cleanup.
func PostgresCluster(t testing.TB) *Postgres {
	t.Helper()
	binDir, err := postgresBinDir()
	if err != nil {
		t.Fatalf("testkit: %v", err)
	}
	runAs, err := pguser.Lookup()
	if err != nil {
		t.Fatalf("testkit: %v", err)
	}
	// Not t.TempDir: its parent is private to the test's user, and the
	// postgres user must reach the data directory.
	dir, err := os.MkdirTemp("", "leadgate-pg-")
	if err != nil {
		t.Fatalf("testkit: postgres temp dir: %v", err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(dir) })
	if err := runAs.Own(dir); err != nil {
		t.Fatalf("testkit: %v", err)
	}
	p := &Postgres{t: t, binDir: binDir, dir: dir, port: FreePort(t), runAs: runAs}
	if out, err := p.run("initdb", "-D", p.dataDir(), "-U", "postgres", "-A", "trust",
		"-E", "UTF8", "--locale=C", "--no-sync"); err != nil {
		t.Fatalf("testkit: initdb: %v\n%s", err, out)
	}
	t.Cleanup(p.stopNow)
	p.Start()
	return p
}

// Port is the cluster's TCP port on 127.0.0.1.
func (p *Postgres) Port() int { return p.port }

// URL returns a connection URL for database db as the postgres superuser.
func (p *Postgres) URL(db string) string {
	return fmt.Sprintf("postgres://postgres@127.0.0.1:%d/%s?sslmode=disable", p.port, db)
}

// Start starts the cluster and returns once it accepts connections.
func (p *Postgres) Start() {
	p.t.Helper()
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.running {
		return
	}
	opts := strings.Join([]string{
		"-p", strconv.Itoa(p.port), "-k", p.dir,
		"-c", "listen_addresses=127.0.0.1", "-c", "fsync=on",
		"-c", "shared_buffers=16MB", "-c", "max_connections=50",
	}, " ")
	if out, err := p.run("pg_ctl", "-D", p.dataDir(), "-l", filepath.Join(p.dir, "postgres.log"),
		"-w", "-t", "60", "-o", opts, "start"); err != nil {
		log, _ := os.ReadFile(filepath.Join(p.dir, "postgres.log"))
		p.t.Fatalf("testkit: pg_ctl start: %v\n%s\n%s", err, out, log)
	}
	p.running = true
}

// Stop shuts the cluster down (fast mode: open connections are
// terminated), simulating a Postgres outage until Start.
func (p *Postgres) Stop() {
	p.t.Helper()
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.running {
		return
	}
	if out, err := p.run("pg_ctl", "-D", p.dataDir(), "-m", "fast", "-w", "-t", "60", "stop"); err != nil {
		p.t.Fatalf("testkit: pg_ctl stop: %v\n%s", err, out)
	}
	p.running = false
}

// stopNow stops the cluster without a checkpoint; it is about to be removed.
func (p *Postgres) stopNow() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.running {
		return
	}
	if out, err := p.run("pg_ctl", "-D", p.dataDir(), "-m", "immediate", "-w", "stop"); err != nil {
		p.t.Errorf("testkit: pg_ctl stop: %v\n%s", err, out)
	}
	p.running = false
}

func (p *Postgres) dataDir() string { return filepath.Join(p.dir, "data") }

// run runs one of the cluster's binaries as its OS user.
func (p *Postgres) run(name string, args ...string) ([]byte, error) {
	cmd := exec.Command(filepath.Join(p.binDir, name), args...)
	cmd.Dir = p.dir
	p.runAs.Apply(cmd)
	return cmd.CombinedOutput()
}

// postgresBinDir finds the newest Postgres server binaries.
func postgresBinDir() (string, error) { return throwaway.PostgresBinDir() }

package testkit

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

const redisServerBin = "/usr/bin/redis-server"

// Redis is a throwaway redis-server owned by one test: no snapshots of its
// own, data kept across Stop/Start (it saves on Stop) and lost on
// Restart(true).
type Redis struct {
	t    testing.TB
	bin  string
	dir  string
	port int

	mu     sync.Mutex
	cmd    *exec.Cmd
	exited chan struct{}
}

// RedisServer starts redis-server on a free port with its files in a temp
// dir; it is killed in t.Cleanup.
func RedisServer(t testing.TB) *Redis {
	t.Helper()
	bin := redisServerBin
	if _, err := os.Stat(bin); err != nil {
		if bin, err = exec.LookPath("redis-server"); err != nil {
			t.Fatalf("testkit: redis-server not installed (apt-get install redis-server): %v", err)
		}
	}
	r := &Redis{t: t, bin: bin, dir: t.TempDir(), port: FreePort(t)}
	t.Cleanup(r.kill)
	r.Start()
	return r
}

// Addr is the server's host:port.
func (r *Redis) Addr() string { return "127.0.0.1:" + strconv.Itoa(r.port) }

// URL is a redis:// URL for DB 0 of the server.
func (r *Redis) URL() string { return "redis://" + r.Addr() + "/0" }

// Start starts the server (loading what the last Stop saved) and waits
// until it answers PING.
func (r *Redis) Start() {
	r.t.Helper()
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.cmd != nil {
		r.t.Fatalf("testkit: redis-server on %s already running", r.Addr())
	}
	cmd := exec.Command(r.bin,
		"--port", strconv.Itoa(r.port), "--bind", "127.0.0.1",
		"--dir", r.dir, "--dbfilename", "dump.rdb", "--save", "", "--appendonly", "no",
		"--daemonize", "no", "--logfile", filepath.Join(r.dir, "redis.log"))
	if err := cmd.Start(); err != nil {
		r.t.Fatalf("testkit: start redis-server: %v", err)
	}
	exited := make(chan struct{})
	go func() {
		_ = cmd.Wait()
		close(exited)
	}()
	r.cmd, r.exited = cmd, exited

	client := redis.NewClient(&redis.Options{Addr: r.Addr(), MaxRetries: -1})
	defer client.Close()
	Eventually(r.t, 10*time.Second, "redis-server on "+r.Addr()+" answers PING", func() bool {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		return client.Ping(ctx).Err() == nil
	})
}

// Stop shuts the server down, saving its data for the next Start.
func (r *Redis) Stop() {
	r.t.Helper()
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.cmd == nil {
		return
	}
	client := redis.NewClient(&redis.Options{Addr: r.Addr(), MaxRetries: -1})
	defer client.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	// A server that exits answers SHUTDOWN by closing the connection, so
	// the process exiting is the answer that counts.
	err := client.ShutdownSave(ctx).Err()
	select {
	case <-r.exited:
	case <-time.After(10 * time.Second):
		r.t.Fatalf("testkit: redis-server on %s did not exit after SHUTDOWN SAVE (%v)", r.Addr(), err)
	}
	r.cmd = nil
}

// Restart stops and starts the server. With flush, it is killed without
// saving and its saved data is removed: a Redis restart that lost
// everything.
func (r *Redis) Restart(flush bool) {
	r.t.Helper()
	if flush {
		r.kill()
		if err := os.Remove(filepath.Join(r.dir, "dump.rdb")); err != nil && !errors.Is(err, os.ErrNotExist) {
			r.t.Fatalf("testkit: remove redis dump: %v", err)
		}
	} else {
		r.Stop()
	}
	r.Start()
}

// kill stops the server at once, without saving.
func (r *Redis) kill() {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.cmd == nil {
		return
	}
	_ = r.cmd.Process.Kill()
	<-r.exited
	r.cmd = nil
}

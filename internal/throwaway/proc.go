// Package throwaway starts real, disposable Redis and Postgres deployments on free loopback ports in a
// directory the caller owns: a Redis Sentinel set (a master, replicas, three sentinels), a Redis Cluster,
// and a Postgres primary with a streaming standby made with pg_basebackup. The tests (through
// internal/testkit) and the replicated chaos run use the same code, so what the tests prove is what
// the proof run runs. Nothing here touches the machine's shared servers.
package throwaway

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"syscall"
	"time"
)

// proc is one server process, its output appended to a log file.
type proc struct {
	cmd    *exec.Cmd
	exited chan struct{}
}

func startProc(cmd *exec.Cmd, logPath string) (*proc, error) {
	f, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, fmt.Errorf("throwaway: open log %s: %w", logPath, err)
	}
	cmd.Stdout, cmd.Stderr = f, f
	dieWithParent(cmd)
	if err := cmd.Start(); err != nil {
		f.Close()
		return nil, fmt.Errorf("throwaway: start %s: %w", cmd.Path, err)
	}
	p := &proc{cmd: cmd, exited: make(chan struct{})}
	go func() {
		_ = cmd.Wait()
		f.Close()
		close(p.exited)
	}()
	return p, nil
}

func (p *proc) running() bool {
	if p == nil {
		return false
	}
	select {
	case <-p.exited:
		return false
	default:
		return true
	}
}

// kill sends SIGKILL and waits for the exit.
func (p *proc) kill() {
	if p == nil {
		return
	}
	if p.running() {
		_ = p.cmd.Process.Signal(syscall.SIGKILL)
	}
	<-p.exited
}

// freePort returns a TCP port on 127.0.0.1 that was free a moment ago.
func freePort() (int, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("throwaway: free port: %w", err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port, nil
}

// waitFor polls cond every 50 ms until it holds, ctx ends or timeout passes.
func waitFor(ctx context.Context, timeout time.Duration, what string, cond func() bool) error {
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			return fmt.Errorf("throwaway: %s: not within %s", what, timeout)
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("throwaway: %s: %w", what, ctx.Err())
		case <-time.After(50 * time.Millisecond):
		}
	}
	return nil
}

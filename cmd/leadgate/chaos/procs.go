package chaos

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"time"
)

// child is a process the run started, with its output in a log file.
type child struct {
	cmd     *exec.Cmd
	log     *os.File
	exited  chan struct{}
	started time.Time
}

// startChild starts cmd with stdout (unless already piped) and stderr appended to logPath. The child
// dies with the run where the OS allows it.
func startChild(cmd *exec.Cmd, logPath string) (*child, error) {
	f, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, fmt.Errorf("open log %s: %w", logPath, err)
	}
	if cmd.Stdout == nil { // else StdoutPipe was called
		cmd.Stdout = f
	}
	cmd.Stderr = f
	dieWithParent(cmd)
	if err := cmd.Start(); err != nil {
		f.Close()
		return nil, fmt.Errorf("start %s: %w", cmd.Path, err)
	}
	c := &child{cmd: cmd, log: f, exited: make(chan struct{}), started: time.Now()}
	go func() {
		_ = cmd.Wait()
		f.Close()
		close(c.exited)
	}()
	return c, nil
}

// running reports whether the process has not exited.
func (c *child) running() bool {
	select {
	case <-c.exited:
		return false
	default:
		return true
	}
}

// kill sends SIGKILL and waits for the exit.
func (c *child) kill() {
	if c.running() {
		_ = c.cmd.Process.Signal(syscall.SIGKILL)
	}
	<-c.exited
}

// terminate sends SIGTERM, then SIGKILL after grace.
func (c *child) terminate(grace time.Duration) {
	if !c.running() {
		return
	}
	_ = c.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-c.exited:
	case <-time.After(grace):
		c.kill()
	}
}

// freePort returns a TCP port on 127.0.0.1 that was free a moment ago.
func freePort() (int, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("free port: %w", err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port, nil
}

// waitFor polls cond every 100 ms until it holds, ctx ends or timeout passes.
func waitFor(ctx context.Context, timeout time.Duration, what string, cond func() bool) error {
	deadline := time.Now().Add(timeout)
	for {
		if cond() {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%s: not within %s", what, timeout)
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%s: %w", what, ctx.Err())
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// httpOK reports whether GET url answers 200.
func httpOK(ctx context.Context, client *http.Client, url string) bool {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return false
	}
	resp, err := client.Do(req)
	if err != nil {
		return false
	}
	resp.Body.Close()
	return resp.StatusCode == http.StatusOK
}

func stringsReader(s string) *strings.Reader { return strings.NewReader(s) }

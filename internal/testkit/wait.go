package testkit

import (
	"net"
	"testing"
	"time"
)

// pollInterval is how often Eventually re-checks its condition.
const pollInterval = 20 * time.Millisecond

// Eventually polls cond every 20ms until it returns true, and fails the
// test with msg when it is still false after timeout. Use it instead of
// sleeping for something to happen.
func Eventually(t testing.TB, timeout time.Duration, msg string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("testkit: %s (still false after %s)", msg, timeout)
			return
		}
		time.Sleep(pollInterval)
	}
}

// FreePort returns a TCP port on 127.0.0.1 that was free a moment ago.
func FreePort(t testing.TB) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("testkit: find a free port: %v", err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

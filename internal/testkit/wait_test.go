package testkit

import (
	"fmt"
	"net"
	"strings"
	"testing"
	"time"
)

// recordingTB captures a failure instead of ending the real test.
type recordingTB struct {
	testing.TB
	failure string
}

func (r *recordingTB) Helper() {}

func (r *recordingTB) Fatalf(format string, args ...any) {
	r.failure = fmt.Sprintf(format, args...)
}

func TestEventually(t *testing.T) {
	calls := 0
	Eventually(t, time.Second, "third poll is true", func() bool {
		calls++
		return calls == 3
	})
	if calls != 3 {
		t.Errorf("cond called %d times, want it polled until true (3)", calls)
	}

	rec := &recordingTB{TB: t}
	start := time.Now()
	Eventually(rec, 100*time.Millisecond, "the lead arrives", func() bool { return false })
	if !strings.Contains(rec.failure, "the lead arrives") {
		t.Errorf("failure %q does not carry the message", rec.failure)
	}
	if waited := time.Since(start); waited < 100*time.Millisecond {
		t.Errorf("gave up after %s, before the 100ms timeout", waited)
	}
}

func TestFreePortCanBeListenedOn(t *testing.T) {
	port := FreePort(t)
	ln, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", port))
	if err != nil {
		t.Fatalf("listen on the free port %d: %v", port, err)
	}
	_ = ln.Close()
}

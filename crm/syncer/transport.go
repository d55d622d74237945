package syncer

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptrace"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/leadgate/leadgate/crm/ratelimit"
)

// errRequestTimeout ends a CRM request that was admitted but got no answer within requestTimeout.
var errRequestTimeout = errors.New("crm request timed out after admission")

// limitedTransport admits every request through the destination's limiter, then sends it with its own
// timeout (the wait for admission does not eat into it), counting calls and 429s.
//
// A CRM counts a request when it arrives. A request admitted early but held up (a dial or TLS handshake,
// a loaded host) would land late, next to ones admitted after it, and squeeze limit+1 into one of the
// CRM's windows. So admission happens once the transport holds a connection, just before the request is
// written; the request is pending in the limiter (it counts in every window) until its answer is back,
// and then counts from when its bytes went out (see answered). Only an *http.Transport reports its
// connections; any other base is admitted before the round trip.
type limitedTransport struct {
	base    http.RoundTripper
	conn    *Conn
	metrics *SyncMetrics
}

func (t *limitedTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	ctx, cancel := context.WithCancelCause(req.Context())
	adm := &admission{conn: t.conn, ctx: ctx, cancel: cancel}
	if _, onConn := t.base.(*http.Transport); onConn && t.conn.Limiter != nil {
		ctx = httptrace.WithClientTrace(ctx, &httptrace.ClientTrace{
			GotConn: func(info httptrace.GotConnInfo) { adm.admit(wireOf(info.Conn)) },
		})
	} else if adm.admit(nil); adm.failed() != nil {
		cancel(nil)
		return nil, adm.failed()
	}
	resp, err := t.base.RoundTrip(req.WithContext(ctx))
	if err != nil {
		adm.settle(time.Now()) // it may have gone out before it failed
		adm.done()
		if errors.Is(context.Cause(ctx), errRequestTimeout) {
			err = fmt.Errorf("%w: %w", errRequestTimeout, err)
		}
		cancel(nil)
		if cause := adm.failed(); cause != nil {
			return nil, cause
		}
		t.metrics.call(t.conn, "error")
		return nil, err
	}
	adm.answered(t.metrics)
	if resp.StatusCode == http.StatusTooManyRequests {
		t.conn.countRateLimited(req.Context())
	}
	t.metrics.call(t.conn, strconv.Itoa(resp.StatusCode))
	resp.Body = &cancelOnClose{ReadCloser: resp.Body, cancel: func() { adm.done(); cancel(nil) }}
	return resp, nil
}

// admission is one request's passage through the limiter. The transport may take a second connection
// for the same request (a reused connection that turned out closed before anything was written); each
// connection is admitted again, which spends a slot but never exceeds the limit, and the earlier
// admission is settled as sent just before.
type admission struct {
	conn   *Conn
	ctx    context.Context
	cancel context.CancelCauseFunc

	mu       sync.Mutex
	err      error
	timer    *time.Timer
	counted  bool
	admitted time.Time        // the latest admission
	ticket   ratelimit.Ticket // the latest admission's, pending until settled
	settled  bool             // Sent was called for ticket
	wire     *wireConn        // the connection it was admitted on, when known
}

// admit waits for the limiter (when there is one), then starts the request timeout and counts the call.
// A limiter failure cancels the request with that cause, since a ClientTrace hook cannot return an error.
func (a *admission) admit(wire *wireConn) {
	// A second connection for the same request: its first admission is settled before waiting again, or
	// the request would wait on its own pending slot (at a limit of 1, until its timeout).
	a.settle(time.Now())
	var ticket ratelimit.Ticket
	if a.conn.Limiter != nil {
		var err error
		if ticket, err = a.conn.Limiter.Admit(a.ctx, a.conn.Key); err != nil {
			a.mu.Lock()
			a.err = err
			a.mu.Unlock()
			a.cancel(err)
			return
		}
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	a.admitted, a.ticket, a.settled, a.wire = time.Now(), ticket, false, wire
	if a.timer == nil {
		a.timer = time.AfterFunc(requestTimeout, func() { a.cancel(errRequestTimeout) })
	}
	if !a.counted {
		a.counted = true
		a.conn.countCall(a.ctx)
	}
}

// sentTimeout bounds reporting a send to the limiter; past it the request stays pending (see sentLocked).
const sentTimeout = time.Second

// answered runs once the CRM's answer came back. The request went out when its connection's last write
// before the answer completed (HTTP/1.1 carries one request at a time; on a shared HTTP/2 connection
// that is a moment at or after it); without a known connection, the answer's time stands for it, which
// is later still. The limiter counts the request from there (ratelimit.Limiter.Sent), so the admissions
// after it count from when the CRM saw this request, and the delay from admission is observed.
func (a *admission) answered(metrics *SyncMetrics) {
	a.mu.Lock()
	defer a.mu.Unlock()
	admitted, wire := a.admitted, a.wire
	at := time.Now()
	if wire != nil {
		// The answer can come back before the writing goroutine has recorded the end of its write (it was
		// descheduled right after the syscall); the answer's time then bounds the send from above.
		if w := wire.lastWrite(); w.After(admitted) {
			at = w
		}
		metrics.admittedToWire(a.conn.Kind, at.Sub(admitted))
	}
	a.sentLocked(at)
}

// settle reports a request that ended without an answer as sent at at, unless already reported.
func (a *admission) settle(at time.Time) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if !a.settled && !a.admitted.IsZero() {
		a.sentLocked(at)
	}
}

// sentLocked reports the current admission as sent at at; a.mu is held.
func (a *admission) sentLocked(at time.Time) {
	a.settled = true
	if a.conn.Limiter == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(a.ctx), sentTimeout)
	defer cancel()
	// Best effort: on failure the request stays pending until the limiter's InFlight time runs out,
	// which only ever admits less.
	_ = a.conn.Limiter.Sent(ctx, a.ticket, at)
}

// failed is the limiter error that ended the request, if any.
func (a *admission) failed() error {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.err
}

// done stops the request timeout.
func (a *admission) done() {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.timer != nil {
		a.timer.Stop()
	}
}

type cancelOnClose struct {
	io.ReadCloser
	cancel func()
}

func (c *cancelOnClose) Close() error {
	err := c.ReadCloser.Close()
	c.cancel()
	return err
}

// wireConn is a CRM connection that remembers when its last write completed: when a request's bytes
// last left for the CRM.
type wireConn struct {
	net.Conn
	wrote atomic.Int64 // unix nanoseconds
}

func (c *wireConn) Write(b []byte) (int, error) {
	n, err := c.Conn.Write(b)
	c.wrote.Store(time.Now().UnixNano())
	return n, err
}

func (c *wireConn) lastWrite() time.Time { return time.Unix(0, c.wrote.Load()) }

// wireOf finds the wireConn under a connection the transport reports (TLS wraps it); nil if none.
func wireOf(c net.Conn) *wireConn {
	for c != nil {
		if w, ok := c.(*wireConn); ok {
			return w
		}
		inner, ok := c.(interface{ NetConn() net.Conn })
		if !ok {
			return nil
		}
		c = inner.NetConn()
	}
	return nil
}

// withWireClock returns a copy of t whose connections are wireConns.
func withWireClock(t *http.Transport) *http.Transport {
	c := t.Clone()
	dial := c.DialContext
	if dial == nil {
		var d net.Dialer
		dial = d.DialContext
	}
	c.DialContext = func(ctx context.Context, network, addr string) (net.Conn, error) {
		conn, err := dial(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		return &wireConn{Conn: conn}, nil
	}
	return c
}

package jobs

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptrace"
	"strconv"
	"sync"
	"time"
)

// errRequestTimeout ends a CRM request that was admitted but got no answer within requestTimeout.
var errRequestTimeout = errors.New("crm request timed out after admission")

// limitedTransport admits every request through the destination's limiter, then sends it with its own
// timeout (the wait for admission does not eat into it), counting calls and 429s.
//
// Admission happens once the transport holds a connection, just before the request is written: a CRM
// counts a request when it arrives, and a dial or TLS handshake after admission (hundreds of ms on a
// loaded host or a cold pool) would let a request admitted early land late, next to ones admitted after
// it, and squeeze limit+1 into one of the CRM's windows. Only an *http.Transport reports its connections;
// any other base is admitted before the round trip.
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
			GotConn:      func(httptrace.GotConnInfo) { adm.admit() },
			WroteHeaders: func() { t.metrics.admittedToWire(t.conn.Kind, adm.sinceAdmitted()) },
		})
	} else if adm.admit(); adm.failed() != nil {
		cancel(nil)
		return nil, adm.failed()
	}
	resp, err := t.base.RoundTrip(req.WithContext(ctx))
	if err != nil {
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
	if resp.StatusCode == http.StatusTooManyRequests {
		t.conn.rateLimited.Add(1)
	}
	t.metrics.call(t.conn, strconv.Itoa(resp.StatusCode))
	resp.Body = &cancelOnClose{ReadCloser: resp.Body, cancel: func() { adm.done(); cancel(nil) }}
	return resp, nil
}

// admission is one request's passage through the limiter. The transport may take a second connection
// for the same request (a reused connection that turned out closed before anything was written); each
// connection is admitted again, which spends a slot but never exceeds the limit.
type admission struct {
	conn   *Conn
	ctx    context.Context
	cancel context.CancelCauseFunc

	mu       sync.Mutex
	err      error
	timer    *time.Timer
	counted  bool
	admitted time.Time // the latest admission
}

// admit waits for the limiter (when there is one), then starts the request timeout and counts the call.
// A limiter failure cancels the request with that cause, since a ClientTrace hook cannot return an error.
func (a *admission) admit() {
	if a.conn.Limiter != nil {
		if err := a.conn.Limiter.Wait(a.ctx, a.conn.Key); err != nil {
			a.mu.Lock()
			a.err = err
			a.mu.Unlock()
			a.cancel(err)
			return
		}
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	a.admitted = time.Now()
	if a.timer == nil {
		a.timer = time.AfterFunc(requestTimeout, func() { a.cancel(errRequestTimeout) })
	}
	if !a.counted {
		a.counted = true
		a.conn.calls.Add(1)
	}
}

// sinceAdmitted is how long ago the latest admission was.
func (a *admission) sinceAdmitted() time.Duration {
	a.mu.Lock()
	defer a.mu.Unlock()
	return time.Since(a.admitted)
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

package chaos

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// balancer is the small round-robin load balancer of a replicated run, in the run's own process. Like
// a Kubernetes Service behind a readiness probe it sends each request to the next backend whose
// /readyz answered 200 at the last probe, and like a load balancer's "next upstream on connect error" it
// tries the next backend when a connection could not be made (nothing was sent). A backend that dies
// with a request in flight answers that request 502 (the sender retries). Connections to backends are
// not reused, so a backend closing an idle connection never costs a request.
type balancer struct {
	backends []*backend
	next     atomic.Uint64
	probe    time.Duration
	client   *http.Client
	srv      *http.Server
	ln       net.Listener
	wg       sync.WaitGroup
	stop     chan struct{}
}

type backend struct {
	base  string // http://127.0.0.1:port
	ready atomic.Bool
}

// newBalancer listens on a free loopback port and probes every backend's /readyz every probe.
func newBalancer(bases []string, probe time.Duration) (*balancer, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("balancer: %w", err)
	}
	b := &balancer{probe: probe, ln: ln, stop: make(chan struct{}),
		client: &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}}}
	for _, base := range bases {
		b.backends = append(b.backends, &backend{base: base})
	}
	b.srv = &http.Server{Handler: b, ReadHeaderTimeout: 5 * time.Second}
	b.wg.Go(func() { _ = b.srv.Serve(ln) })
	b.wg.Go(b.probeLoop)
	return b, nil
}

// url is the balancer's base URL (LEADGATE_PUBLIC_URL of every web process).
func (b *balancer) url() string { return "http://" + b.ln.Addr().String() }

func (b *balancer) close() {
	close(b.stop)
	_ = b.srv.Close()
	b.wg.Wait()
}

func (b *balancer) probeLoop() {
	client := &http.Client{Timeout: b.probe, Transport: &http.Transport{DisableKeepAlives: true}}
	t := time.NewTicker(b.probe)
	defer t.Stop()
	for {
		for _, be := range b.backends {
			be.ready.Store(httpOK(context.Background(), client, be.base+"/readyz"))
		}
		select {
		case <-b.stop:
			return
		case <-t.C:
		}
	}
}

// ServeHTTP forwards r to the next ready backend; when none is ready it tries them all, since a probe
// can be stale.
func (b *balancer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(io.LimitReader(r.Body, 64<<20))
	if err != nil {
		http.Error(w, "balancer: read request: "+err.Error(), http.StatusBadRequest)
		return
	}
	n := len(b.backends)
	start := int(b.next.Add(1))
	var last error
	for pass := range 2 {
		for i := range n {
			be := b.backends[(start+i)%n]
			if pass == 0 && !be.ready.Load() {
				continue
			}
			resp, err := b.forward(r, be, body)
			if err != nil {
				last = err
				if connectFailed(err) {
					continue
				}
				http.Error(w, "balancer: "+err.Error(), http.StatusBadGateway)
				return
			}
			defer resp.Body.Close()
			for k, v := range resp.Header {
				w.Header()[k] = v
			}
			w.WriteHeader(resp.StatusCode)
			_, _ = io.Copy(w, resp.Body)
			return
		}
	}
	http.Error(w, fmt.Sprintf("balancer: no backend answers: %v", last), http.StatusBadGateway)
}

func (b *balancer) forward(r *http.Request, be *backend, body []byte) (*http.Response, error) {
	req, err := http.NewRequestWithContext(r.Context(), r.Method, be.base+r.URL.RequestURI(), bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header = r.Header.Clone()
	req.Host = r.Host
	return b.client.Do(req)
}

// connectFailed reports an error of making the connection, before anything was sent.
func connectFailed(err error) bool {
	var op *net.OpError
	if errors.As(err, &op) && op.Op == "dial" {
		return true
	}
	return errors.Is(err, syscall.ECONNREFUSED)
}
